// Pieces every op planner shares: the TFLite op codes the delegate declares, fused activations as the
// shaders' ACT values, TFLite's window arithmetic (output size and padding of convolution and pooling),
// and the push-constant block.
#ifndef BATON_VULKAN_OP_COMMON_H
#define BATON_VULKAN_OP_COMMON_H

#include <array>
#include <cstdint>
#include <string>

#include "baton/tflite_ops.h"
#include "gpu_graph.h"
#include "node_view.h"

namespace baton::vulkan {


using Params = std::array<int32_t, 32>;

// The shaders' ACT define for a fused activation (common.glsl's activate()); refuses TANH and SIGN_BIT.
int activation_code(int32_t activation);

// The shape two operands broadcast to, as numpy (and TFLite) broadcast; refuses shapes that do not.
Dims broadcast_dims(const Dims& a, const Dims& b);

// One spatial dimension of a window op as TFLite computes it.
struct Window {
  int32_t out = 0, before = 0;
};
Window window(int32_t padding, int32_t in, int32_t kernel, int32_t stride, int32_t dilation, const char* axis);

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline std::string str(int64_t v) { return std::to_string(v); }

// Puts four values at params[4*slot .. 4*slot+3] (the shader's P.p[slot]).
inline void set4(Params& p, int slot, int32_t x, int32_t y = 0, int32_t z = 0, int32_t w = 0) {
  p[4 * slot] = x;
  p[4 * slot + 1] = y;
  p[4 * slot + 2] = z;
  p[4 * slot + 3] = w;
}

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_OP_COMMON_H
