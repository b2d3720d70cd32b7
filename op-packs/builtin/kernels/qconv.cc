#include "kernels/qconv.h"

#include <algorithm>
#include <cstring>

namespace baton::builtin {
namespace {

bool is_pointwise(const ConvParams& p) {
  return p.filter_h == 1 && p.filter_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
         p.pad_left == 0 && p.in_h == p.out_h && p.in_w == p.out_w;
}

const uint8_t* pointwise_row(const void* context, int r, uint8_t*) {
  const auto* c = static_cast<const QConvRows*>(context);
  return c->input + static_cast<size_t>(r) * c->p->in_c;
}

const uint8_t* im2col_row(const void* context, int r, uint8_t* scratch) {
  const auto* c = static_cast<const QConvRows*>(context);
  const ConvParams& p = *c->p;
  const int ox = r % p.out_w;
  const int oy = (r / p.out_w) % p.out_h;
  const int b = r / (p.out_w * p.out_h);
  const uint8_t pad = c->pad_bytes[b];
  uint8_t* dst = scratch;
  const int ix0 = ox * p.stride_w - p.pad_left;
  // With taps side by side (no dilation along x) and none over a border, a filter row is one run of
  // filter_w * in_c bytes.
  const bool whole_rows = p.dilation_w == 1 && ix0 >= 0 && ix0 + p.filter_w <= p.in_w;
  const size_t row_bytes = static_cast<size_t>(p.filter_w) * p.in_c;
  for (int ky = 0; ky < p.filter_h; ++ky) {
    const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
    if (whole_rows && iy >= 0 && iy < p.in_h) {
      std::memcpy(dst, c->input + ((static_cast<size_t>(b) * p.in_h + iy) * p.in_w + ix0) * p.in_c, row_bytes);
      dst += row_bytes;
      continue;
    }
    for (int kx = 0; kx < p.filter_w; ++kx) {
      const int ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
      if (iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w) {
        std::memcpy(dst, c->input + ((static_cast<size_t>(b) * p.in_h + iy) * p.in_w + ix) * p.in_c, p.in_c);
      } else {
        std::memset(dst, pad, p.in_c);
      }
      dst += p.in_c;
    }
  }
  return scratch;
}

const uint8_t* dense_row(const void* context, int r, uint8_t*) {
  const auto* d = static_cast<const QDenseRows*>(context);
  return d->input + static_cast<size_t>(r) * d->depth;
}

}  // namespace

QGemmRows QConvRows::rows(bool input_signed) const {
  return {is_pointwise(*p) ? pointwise_row : im2col_row, this, input_signed};
}

QGemmRows QDenseRows::rows(bool input_signed) const { return {dense_row, this, input_signed}; }

}  // namespace baton::builtin
