// What the cpu delegate's patterns read from the model's nodes: fused activations as clamps, shapes, and
// constant float32 weights, each check refusing (kit::Refusal) with what did not fit.
#ifndef BATON_CPU_NODE_READING_H
#define BATON_CPU_NODE_READING_H

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "baton/tflite_ops.h"
#include "baton/plugin_kit.hpp"
#include "kernels.h"

namespace baton::cpu {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

inline Clamp activation_clamp(int32_t activation, const char* node) {
  switch (activation) {
    case BATON_ACT_NONE: return {-kInf, kInf};
    case BATON_ACT_RELU: return {0.0f, kInf};
    case BATON_ACT_RELU_N1_TO_1: return {-1.0f, 1.0f};
    case BATON_ACT_RELU6: return {0.0f, 6.0f};
  }
  kit::refuse(std::string(node) + ": fused activation " + std::to_string(activation) + " (NONE and the RELUs only)");
}

// The clamp of such an activation node, or nothing for another op.
inline std::optional<Clamp> activation_node_clamp(int32_t code) {
  switch (code) {
    case BATON_OP_RELU: return Clamp{0.0f, kInf};
    case BATON_OP_RELU_N1_TO_1: return Clamp{-1.0f, 1.0f};
    case BATON_OP_RELU6: return Clamp{0.0f, 6.0f};
  }
  return std::nullopt;
}

inline std::vector<int32_t> shape_of(const baton_host_api* api, const baton_tensor* t) {
  const int32_t* dims = nullptr;
  const int32_t rank = api->tensor_shape(t, &dims);
  return std::vector<int32_t>(dims, dims + rank);
}

inline void expect_float(const baton_host_api* api, const baton_tensor* t, const char* what) {
  if (api->tensor_type(t) != BATON_TYPE_FLOAT32) {
    kit::refuse(std::string(what) + " of type " + baton_tensor_type_name(api->tensor_type(t)) + " (FLOAT32 only)");
  }
}

// A CONV_2D's input, filter and output, the input and output float32 of rank 4 (NHWC), with their shapes.
struct ConvTensors {
  const baton_tensor *in, *filter, *out;
  std::vector<int32_t> in_shape, filter_shape, out_shape;
};

inline ConvTensors conv_tensors(const baton_host_api* api, const baton_node* conv) {
  if (api->node_input_count(conv) < 2 || api->node_output_count(conv) != 1) {
    kit::refuse("convolution without input and filter, or with other than one output");
  }
  ConvTensors c{api->node_input(conv, 0), api->node_input(conv, 1), api->node_output(conv, 0), {}, {}, {}};
  if (!c.in || !c.filter || !c.out) kit::refuse("convolution without input, filter or output");
  expect_float(api, c.in, "convolution input");
  expect_float(api, c.out, "convolution output");
  c.in_shape = shape_of(api, c.in);
  c.filter_shape = shape_of(api, c.filter);
  c.out_shape = shape_of(api, c.out);
  if (c.in_shape.size() != 4 || c.out_shape.size() != 4) kit::refuse("convolution of other than rank 4 (NHWC only)");
  return c;
}

inline const float* constant_floats(const baton_host_api* api, const baton_tensor* t,
                                   const std::vector<int32_t>& shape, const char* what) {
  expect_float(api, t, what);
  if (!api->tensor_is_constant(t) || !api->tensor_data(t)) kit::refuse(std::string("non-constant ") + what);
  if (shape_of(api, t) != shape) {
    std::string text;
    for (int32_t d : shape) text += (text.empty() ? "" : ",") + std::to_string(d);
    kit::refuse(std::string(what) + " not of shape [" + text + "]");
  }
  return static_cast<const float*>(api->tensor_data(t));
}

}  // namespace baton::cpu

#endif  // BATON_CPU_NODE_READING_H
