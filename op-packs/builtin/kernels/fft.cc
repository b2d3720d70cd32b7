#include "kernels/fft.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "kernels/common.h"

namespace baton::builtin {
namespace {

bool is_power_of_two(int v) { return v > 0 && (v & (v - 1)) == 0; }

std::vector<int32_t> bit_reversal(int n) {
  int bits = 0;
  while ((1 << bits) < n) ++bits;
  std::vector<int32_t> order(n);
  for (int i = 0; i < n; ++i) {
    int r = 0;
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
    order[i] = r;
  }
  return order;
}

void stage_twiddles(int n, std::vector<float>& re, std::vector<float>& im) {
  re.assign(n, 0.0f);
  im.assign(n, 0.0f);
  for (int m = 1; m < n; m *= 2) {
    for (int j = 0; j < m; ++j) {
      const double angle = -std::numbers::pi * j / m;
      re[m + j] = static_cast<float>(std::cos(angle));
      im[m + j] = static_cast<float>(std::sin(angle));
    }
  }
}

// An in-place complex FFT of n (a power of two) values held apart as real and imaginary parts, already
// in bit-reversed order: the decimation-in-time butterflies, stage by stage. The first two stages need
// no multiplication (twiddles 1 and -i).
inline __attribute__((always_inline)) void complex_fft(float* re, float* im, int n, const float* twr,
                                                       const float* twi) {
  if (n >= 2) {
    for (int g = 0; g < n; g += 2) {
      const float ar = re[g], ai = im[g], br = re[g + 1], bi = im[g + 1];
      re[g] = ar + br, im[g] = ai + bi;
      re[g + 1] = ar - br, im[g + 1] = ai - bi;
    }
  }
  if (n >= 4) {
    for (int g = 0; g < n; g += 4) {
      float ar = re[g], ai = im[g], br = re[g + 2], bi = im[g + 2];
      re[g] = ar + br, im[g] = ai + bi;
      re[g + 2] = ar - br, im[g + 2] = ai - bi;
      // b * -i = (bi, -br)
      ar = re[g + 1], ai = im[g + 1], br = re[g + 3], bi = im[g + 3];
      re[g + 1] = ar + bi, im[g + 1] = ai - br;
      re[g + 3] = ar - bi, im[g + 3] = ai + br;
    }
  }
  for (int m = 4; m < n; m *= 2) {
    const float* __restrict wr = twr + m;
    const float* __restrict wi = twi + m;
    for (int g = 0; g < n; g += 2 * m) {
      float* __restrict ar = re + g;
      float* __restrict ai = im + g;
      float* __restrict br = re + g + m;
      float* __restrict bi = im + g + m;
      for (int j = 0; j < m; ++j) {
        const float tr = br[j] * wr[j] - bi[j] * wi[j];
        const float ti = br[j] * wi[j] + bi[j] * wr[j];
        br[j] = ar[j] - tr;
        bi[j] = ai[j] - ti;
        ar[j] += tr;
        ai[j] += ti;
      }
    }
  }
}

// One row's spectrum (columns = half + 1 values) into re / im: the row's even samples as real parts and
// its odd ones as imaginary parts make a complex sequence z of `half` values whose FFT Z gives the even
// samples' spectrum E[k] = (Z[k] + conj(Z[half - k])) / 2 and the odd ones' O[k] = (Z[k] - conj(Z[half -
// k])) / 2i; the row's is X[k] = E[k] + w^k O[k] with w = exp(-2 pi i / fft_w), and X[half - k] =
// conj(E[k] - w^k O[k]), so each pair (k, half - k) is made in place from the same two values.
inline __attribute__((always_inline)) void real_row_fft(const Rfft2dPlan& p, const float* row, int valid,
                                                        float* re, float* im) {
  const int half = p.half;
  const int32_t* order = p.row_order.data();
  if (valid >= p.fft_w) {
    for (int n = 0; n < half; ++n) {
      re[order[n]] = row[2 * n];
      im[order[n]] = row[2 * n + 1];
    }
  } else {
    for (int n = 0; n < half; ++n) {
      re[order[n]] = 2 * n < valid ? row[2 * n] : 0.0f;
      im[order[n]] = 2 * n + 1 < valid ? row[2 * n + 1] : 0.0f;
    }
  }
  complex_fft(re, im, half, p.row_twiddle_re.data(), p.row_twiddle_im.data());
  const float z0r = re[0], z0i = im[0];
  re[0] = z0r + z0i, im[0] = 0.0f;
  re[half] = z0r - z0i, im[half] = 0.0f;
  const float* ur = p.unpack_re.data();
  const float* ui = p.unpack_im.data();
  for (int k = 1; 2 * k <= half; ++k) {
    const int m = half - k;
    const float zkr = re[k], zki = im[k], zmr = re[m], zmi = im[m];
    const float er = 0.5f * (zkr + zmr), ei = 0.5f * (zki - zmi);
    const float orr = 0.5f * (zki + zmi), oi = -0.5f * (zkr - zmr);
    const float tr = ur[k] * orr - ui[k] * oi, ti = ur[k] * oi + ui[k] * orr;
    re[m] = er - tr, im[m] = ti - ei;
    re[k] = er + tr, im[k] = ei + ti;
  }
}

// The column FFTs of the [fft_h][columns] spectrum, whose rows are already in bit-reversed order: the
// same butterflies as complex_fft, each on whole rows.
inline __attribute__((always_inline)) void column_fft(const Rfft2dPlan& p, float* re, float* im) {
  const int h = p.fft_h;
  const size_t cols = static_cast<size_t>(p.columns);
  for (int m = 1; m < h; m *= 2) {
    for (int g = 0; g < h; g += 2 * m) {
      for (int j = 0; j < m; ++j) {
        float* __restrict ar = re + (g + j) * cols;
        float* __restrict ai = im + (g + j) * cols;
        float* __restrict br = re + (g + j + m) * cols;
        float* __restrict bi = im + (g + j + m) * cols;
        if (j == 0) {
          for (size_t c = 0; c < cols; ++c) {
            const float tr = br[c], ti = bi[c];
            br[c] = ar[c] - tr;
            bi[c] = ai[c] - ti;
            ar[c] += tr;
            ai[c] += ti;
          }
          continue;
        }
        const float wr = p.column_twiddle_re[m + j], wi = p.column_twiddle_im[m + j];
        for (size_t c = 0; c < cols; ++c) {
          const float tr = br[c] * wr - bi[c] * wi;
          const float ti = br[c] * wi + bi[c] * wr;
          br[c] = ar[c] - tr;
          bi[c] = ai[c] - ti;
          ar[c] += tr;
          ai[c] += ti;
        }
      }
    }
  }
}

inline __attribute__((always_inline)) void rfft2d_slice_impl(const Rfft2dPlan& p, const float* in, float* out,
                                                             float* scratch) {
  const size_t cols = static_cast<size_t>(p.columns);
  float* re = scratch;
  float* im = scratch + static_cast<size_t>(p.fft_h) * cols;
  const int valid_h = std::min(p.in_h, p.fft_h);
  const int valid_w = std::min(p.in_w, p.fft_w);
  for (int y = 0; y < p.fft_h; ++y) {
    const size_t at = static_cast<size_t>(p.column_order[y]) * cols;
    if (y < valid_h) {
      real_row_fft(p, in + static_cast<size_t>(y) * p.in_w, valid_w, re + at, im + at);
    } else {
      std::memset(re + at, 0, cols * sizeof(float));
      std::memset(im + at, 0, cols * sizeof(float));
    }
  }
  column_fft(p, re, im);
  const size_t n = static_cast<size_t>(p.fft_h) * cols;
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = re[i];
    out[2 * i + 1] = im[i];
  }
}

BATON_DISPATCH_AVX2(void, rfft2d_slice, (const Rfft2dPlan& p, const float* in, float* out, float* scratch),
                    (p, in, out, scratch))

}  // namespace

bool rfft2d_plan(int in_h, int in_w, int fft_h, int fft_w, Rfft2dPlan& plan) {
  if (in_h < 0 || in_w < 0 || !is_power_of_two(fft_h) || !is_power_of_two(fft_w) || fft_w < 2) return false;
  plan.in_h = in_h;
  plan.in_w = in_w;
  plan.fft_h = fft_h;
  plan.fft_w = fft_w;
  plan.half = fft_w / 2;
  plan.columns = fft_w / 2 + 1;
  plan.row_order = bit_reversal(plan.half);
  plan.column_order = bit_reversal(fft_h);
  stage_twiddles(plan.half, plan.row_twiddle_re, plan.row_twiddle_im);
  stage_twiddles(fft_h, plan.column_twiddle_re, plan.column_twiddle_im);
  plan.unpack_re.resize(plan.half + 1);
  plan.unpack_im.resize(plan.half + 1);
  for (int k = 0; k <= plan.half; ++k) {
    const double angle = -2.0 * std::numbers::pi * k / fft_w;
    plan.unpack_re[k] = static_cast<float>(std::cos(angle));
    plan.unpack_im[k] = static_cast<float>(std::sin(angle));
  }
  return true;
}

size_t rfft2d_scratch_floats(const Rfft2dPlan& plan) {
  return 2 * static_cast<size_t>(plan.fft_h) * static_cast<size_t>(plan.columns);
}

void rfft2d(const Rfft2dPlan& plan, const float* in, int64_t slices, float* out, float* scratch) {
  const size_t in_step = static_cast<size_t>(plan.in_h) * static_cast<size_t>(plan.in_w);
  const size_t out_step = 2 * static_cast<size_t>(plan.fft_h) * static_cast<size_t>(plan.columns);
  for (int64_t s = 0; s < slices; ++s) rfft2d_slice(plan, in + s * in_step, out + s * out_step, scratch);
}

}  // namespace baton::builtin
