#include "kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace baton::builtin {

void quantize_floats(const float* in, int64_t n, float scale, int32_t zero_point, bool out_signed, uint8_t* out) {
  const CodeRange r = code_range(out_signed);
  const double d = scale;
  for (int64_t i = 0; i < n; ++i) {
    // TFLite divides in double: x / scale can be a tie in float and not in double.
    double q = std::round(static_cast<double>(in[i]) / d);
    // NaN reads as 0.0; a huge or infinite value is bounded first, so the conversion is defined.
    if (std::isnan(q)) q = 0.0;
    q = std::fmax(-1e9, std::fmin(1e9, q));
    const int64_t v = static_cast<int64_t>(q) + zero_point;
    out[i] = static_cast<uint8_t>(std::clamp<int64_t>(v, r.lo, r.hi));
  }
}

void quantize_floats_int16(const float* in, int64_t n, float scale, int32_t zero_point, int16_t* out) {
  const double d = scale;
  for (int64_t i = 0; i < n; ++i) {
    double q = std::round(static_cast<double>(in[i]) / d);
    if (std::isnan(q)) q = 0.0;
    q = std::fmax(-1e9, std::fmin(1e9, q));
    const int64_t v = static_cast<int64_t>(q) + zero_point;
    out[i] = static_cast<int16_t>(std::clamp<int64_t>(v, -32768, 32767));
  }
}

void requantize_any(const void* in, CodeType in_type, int64_t n, int32_t in_zero, QuantizedMultiplier m,
                    int32_t out_zero, void* out, CodeType out_type) {
  const int32_t lo = out_type == CodeType::kUint8 ? 0 : out_type == CodeType::kInt8 ? -128 : -32768;
  const int32_t hi = out_type == CodeType::kUint8 ? 255 : out_type == CodeType::kInt8 ? 127 : 32767;
  const Requantize rq{m, out_zero, lo, hi};
  for (int64_t i = 0; i < n; ++i) {
    int32_t x;
    switch (in_type) {
      case CodeType::kUint8: x = static_cast<const uint8_t*>(in)[i]; break;
      case CodeType::kInt8: x = static_cast<const int8_t*>(in)[i]; break;
      default: x = static_cast<const int16_t*>(in)[i]; break;
    }
    const int32_t v = requantize(x - in_zero, rq);
    switch (out_type) {
      case CodeType::kUint8: static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(v); break;
      case CodeType::kInt8: static_cast<int8_t*>(out)[i] = static_cast<int8_t>(v); break;
      default: static_cast<int16_t*>(out)[i] = static_cast<int16_t>(v); break;
    }
  }
}

void requantize_codes(const uint8_t* in, int64_t n, bool in_signed, int32_t in_zero, QuantizedMultiplier m,
                      int32_t out_zero, bool out_signed, uint8_t* out) {
  const CodeRange r = code_range(out_signed);
  const Requantize rq{m, out_zero, r.lo, r.hi};
  for (int64_t i = 0; i < n; ++i) {
    const int32_t x = in_signed ? static_cast<int32_t>(static_cast<int8_t>(in[i])) : static_cast<int32_t>(in[i]);
    out[i] = static_cast<uint8_t>(requantize(x - in_zero, rq));
  }
}

ConcatScaling concat_scaling(float in_scale, int32_t in_zero, float out_scale, int32_t out_zero) {
  ConcatScaling s;
  s.copy = in_scale == out_scale && in_zero == out_zero;
  const float inverse = 1.0f / out_scale;
  s.scale = in_scale * inverse;
  s.bias = static_cast<float>(-in_zero) * s.scale;
  return s;
}

void qconcat(int64_t outer, const int64_t* chunk, const uint8_t* const* inputs, const ConcatScaling* scaling,
             int count, int32_t out_zero, uint8_t* out) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < count; ++i) {
      const int64_t n = chunk[i];
      const uint8_t* src = inputs[i] + o * n;
      if (scaling[i].copy) {
        std::memcpy(out, src, static_cast<size_t>(n));
      } else {
        const float scale = scaling[i].scale, bias = scaling[i].bias;
        for (int64_t j = 0; j < n; ++j) {
          const float product = static_cast<float>(src[j]) * scale;
          // Bounded in float first: any finite scale keeps the conversion defined.
          const float r = std::fmax(-1e6f, std::fmin(1e6f, std::round(product + bias)));
          const int32_t v = static_cast<int32_t>(r) + out_zero;
          out[j] = static_cast<uint8_t>(std::clamp(v, 0, 255));
        }
      }
      out += n;
    }
  }
}

}  // namespace baton::builtin
