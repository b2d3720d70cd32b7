// TFLite's RFFT2D: the two-dimensional discrete Fourier transform of real slices (the innermost two
// dimensions), each cropped or zero-padded to fft_h x fft_w, of which the fft_w / 2 + 1 non-negative
// column frequencies are kept (the others are their complex conjugates):
//   out[u][v] = sum over y < fft_h, x < fft_w of in[y][x] * exp(-2 pi i (u y / fft_h + v x / fft_w))
// Both lengths are powers of two. A plain radix-2 transform of our own: each row's real FFT as a complex
// FFT of half its length (even samples the real parts, odd ones the imaginary parts) unpacked into the
// row's spectrum, then a complex FFT down each column, all columns at once (rows are whole vectors, so
// the inner loop runs along contiguous memory). Rows go into the column transform's bit-reversed order
// as they are made, so no separate permutation pass is needed. Single precision throughout, with
// twiddle factors computed in double; the plan holds the tables, made once in prepare.
#ifndef BATON_BUILTIN_KERNELS_FFT_H
#define BATON_BUILTIN_KERNELS_FFT_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace baton::builtin {

struct Rfft2dPlan {
  int in_h = 0, in_w = 0;    // each input slice
  int fft_h = 0, fft_w = 0;  // powers of two, fft_w >= 2
  int half = 0;              // fft_w / 2: the length of the complex FFT each row runs as
  int columns = 0;           // fft_w / 2 + 1: the output's last dimension
  std::vector<int32_t> row_order;     // bit reversal over `half`
  std::vector<int32_t> column_order;  // bit reversal over fft_h
  // Twiddles of the butterfly stages, exp(-i pi j / m) at [m + j] for each half-size m (index 0 unused).
  std::vector<float> row_twiddle_re, row_twiddle_im;        // `half` entries
  std::vector<float> column_twiddle_re, column_twiddle_im;  // fft_h entries
  // exp(-2 pi i k / fft_w) for k <= half: joins the even and odd samples' spectra into the row's.
  std::vector<float> unpack_re, unpack_im;
};

// False when a length is not a power of two or fft_w < 2 (the kernel needs a complex half-length FFT).
bool rfft2d_plan(int in_h, int in_w, int fft_h, int fft_w, Rfft2dPlan& plan);

// Floats of scratch `rfft2d` needs: one slice's spectrum, real and imaginary parts apart.
size_t rfft2d_scratch_floats(const Rfft2dPlan& plan);

// `slices` slices of in_h x in_w floats to slices of fft_h x columns complex numbers (interleaved real,
// imaginary: TFLite's complex64).
void rfft2d(const Rfft2dPlan& plan, const float* in, int64_t slices, float* out, float* scratch);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_FFT_H
