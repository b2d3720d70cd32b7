// Quantized CONV_2D and FULLY_CONNECTED as 8-bit GEMMs (kernels/qgemm.h): each output pixel (or batch
// row) is a row of A, each output channel a row of B. A 1x1 stride-1 unpadded convolution and a fully
// connected layer read their input rows in place; any other convolution gathers a row's receptive field
// (ky, kx, channel order, as TFLite's filters are laid out) into the GEMM's row scratch, writing the
// input's zero point where the window hangs over the border, so padding means 0.0 as in TFLite.
#ifndef BATON_BUILTIN_KERNELS_QCONV_H
#define BATON_BUILTIN_KERNELS_QCONV_H

#include <cstdint>

#include "kernels/conv.h"
#include "kernels/qgemm.h"

namespace baton::builtin {

// The rows of a convolution's A. `pad_bytes[b]` is the code of 0.0 in batch b (the input's zero point as
// a byte; the dynamic-range kernels quantize each batch with its own).
struct QConvRows {
  const ConvParams* p = nullptr;
  const uint8_t* input = nullptr;
  const uint8_t* pad_bytes = nullptr;
  QGemmRows rows(bool input_signed) const;
};

// Rows of `depth` bytes, one after another (fully connected inputs).
struct QDenseRows {
  const uint8_t* input = nullptr;
  int depth = 0;
  QGemmRows rows(bool input_signed) const;
};

inline int conv_depth(const ConvParams& p) { return p.filter_h * p.filter_w * p.in_c; }
inline int conv_rows(const ConvParams& p) { return p.batch * p.out_h * p.out_w; }

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QCONV_H
