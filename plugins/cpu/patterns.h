// What the cpu delegate's selection and its partitions both read from the graph: the op codes it
// knows, a node's residual ADD and the shortcut before it (see Shortcut), and which convolutions its
// steps take; shared by selection.cc (which nodes it takes) and partition.cc (the steps it makes of them).
#ifndef BATON_CPU_PATTERNS_H
#define BATON_CPU_PATTERNS_H

#include <cstdint>
#include <optional>

#include "baton/tflite_ops.h"
#include "cpu_op.h"
#include "narrow_conv.h"

namespace baton::cpu {

inline int32_t index_of(const baton_host_api* api, const baton_tensor* t) { return t ? api->tensor_index(t) : -1; }

// MediaPipe's Convolution2DTransposeBias (version 1).
bool is_transpose_conv_bias(const baton_host_api* api, const baton_node* node);

// The convolution's spec when it is one NarrowConv runs, else nothing.
std::optional<NarrowConvSpec> narrow_spec(const baton_host_api* api, const baton_node* conv);

// The ADD that reads tensor `t` and another of the same shape (no broadcasting), float32 and not a
// constant: the index of its other input, or -1 when `add` is not such a node.
int32_t residual_of(const baton_host_api* api, const baton_node* add, int32_t t);

// Adds `node` to the shortcut `s` (see Shortcut) when it is a part of one: a MAX_POOL_2D (2x2, stride 2, no
// activation) or a PAD with constant paddings that appends channels only, float32 NHWC, one of each at
// most (in either order: the pool of zero channels is zero).
bool read_shortcut(const baton_host_api* api, const baton_node* node, Shortcut& s);

// The clamp of the ADD's fused activation, or nothing for one the cpu delegate does not take.
std::optional<Clamp> add_clamp_of(const baton_host_api* api, const baton_node* add);

}  // namespace baton::cpu

#endif  // BATON_CPU_PATTERNS_H
