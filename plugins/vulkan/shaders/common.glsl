// Included at the top of every shader, after `#version 450` and the variant's defines (LX, LY, LZ, and
// the shader's own). Tensors are storage buffers in the device layout of gpu_graph.h: rows of vec4s of
// channels, lanes past the channel count zero.
// The storage type of tensors in the device arena and of weights: float32, or with F16 (the `fp16` option
// on a device with 16-bit storage) float16. Shaders read T4 / T1 into vec4 / float and compute in float32;
// they write through T4(...) / T1(...). Staging buffers (pack, unpack) and index tables stay float32.
#if F16
#extension GL_EXT_shader_16bit_storage : require
#define T4 f16vec4
#define T1 float16_t
#else
#define T4 vec4
#define T1 float
#endif
// The arithmetic type of the products (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED): with F16_MATH too
// (float16 storage on a device with shaderFloat16) they read, multiply, add and activate in float16, as
// TFLite's GPU delegate does when precision loss is allowed (twice the arithmetic rate of float32 on most
// GPUs, and no conversions); else float32. Their accumulators are H4 / H1, their activation activate_h.
#if F16 && F16_MATH
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define H4 f16vec4
#define H1 float16_t
#else
#define H4 vec4
#define H1 float
#endif

layout(local_size_x = LX, local_size_y = LY, local_size_z = LZ) in;

// 32 ints of per-dispatch parameters (sizes, offsets, float bits); each shader documents its slots.
layout(push_constant) uniform Params {
  ivec4 p[8];
} P;

#ifndef ACT
#define ACT 0
#endif

// The fused activations: 0 none, 1 RELU, 2 RELU_N1_TO_1, 3 RELU6, of a vector of type T. Each maps 0 to 0,
// so the zero lanes past the channels stay zero. activate() in float32, activate_h() in the products' H4.
#if ACT == 1
#define ACTIVATE(T, v) max(v, T(0.0))
#elif ACT == 2
#define ACTIVATE(T, v) clamp(v, T(-1.0), T(1.0))
#elif ACT == 3
#define ACTIVATE(T, v) clamp(v, T(0.0), T(6.0))
#else
#define ACTIVATE(T, v) (v)
#endif
vec4 activate(vec4 v) { return ACTIVATE(vec4, v); }
H4 activate_h(H4 v) { return ACTIVATE(H4, v); }

// The invocation's index in a one-dimensional grid folded over x and y (grid_1d in gpu_graph.h).
int flat_id() {
  return int(gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x);
}

// `v` with the lanes of channels >= c set to zero; c4 is the vec4's block of channels.
vec4 mask_lanes(vec4 v, int c4, int c) {
  return mix(vec4(0.0), v, lessThan(ivec4(4 * c4) + ivec4(0, 1, 2, 3), ivec4(c)));
}
