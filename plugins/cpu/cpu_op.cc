#include "cpu_op.h"

#include <algorithm>

namespace baton::cpu {

bool CpuOp::prepare_residual(const std::vector<int32_t>& source, const std::vector<int32_t>& out) {
  out_channels_ = out.empty() ? 1 : out.back();
  if (!shortcut_.any()) return source == out;
  if (source.size() != 4 || out.size() != 4 || source[0] != out[0]) return false;
  const auto pooled = [&](int32_t n) { return shortcut_.pool_same ? (n + 1) / 2 : n / 2; };
  const int32_t h = shortcut_.pool ? pooled(source[1]) : source[1];
  const int32_t w = shortcut_.pool ? pooled(source[2]) : source[2];
  if (h != out[1] || w != out[2] || source[3] + shortcut_.pad_channels != out[3] || h < 1 || w < 1) return false;
  out_pixels_ = static_cast<long>(out[1]) * out[2];
  out_w_ = out[2];
  source_h_ = source[1];
  source_w_ = source[2];
  source_channels_ = source[3];
  return true;
}

void CpuOp::add_residual_to(const Kernels& kernels, float* out, const float* residual, long first, long pixels) const {
  if (!shortcut_.any()) {
    kernels.add_clamp(out, residual + first * out_channels_, pixels * out_channels_, residual_clamp_);
    return;
  }
  const long source_image = static_cast<long>(source_h_) * source_w_ * source_channels_;
  for (long p = first; p < first + pixels; ++p, out += out_channels_) {
    const long image = p / out_pixels_, y = p % out_pixels_ / out_w_, x = p % out_w_;
    const float* src = residual + image * source_image;
    // The pool's window (its rows and columns past the source, under SAME padding, left out: the max of
    // one value twice is that value); without a pool, the one pixel four times.
    const long y0 = shortcut_.pool ? 2 * y : y, x0 = shortcut_.pool ? 2 * x : x;
    const long y1 = shortcut_.pool ? std::min<long>(y0 + 1, source_h_ - 1) : y0;
    const long x1 = shortcut_.pool ? std::min<long>(x0 + 1, source_w_ - 1) : x0;
    const auto at = [&](long yy, long xx) { return src + (yy * source_w_ + xx) * source_channels_; };
    kernels.add_max4_clamp(out, out_channels_, at(y0, x0), at(y0, x1), at(y1, x0), at(y1, x1), source_channels_,
                           residual_clamp_);
  }
}

}  // namespace baton::cpu
