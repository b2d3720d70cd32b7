#include "op_common.h"

#include <algorithm>

namespace baton::vulkan {

Dims broadcast_dims(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int32_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int32_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (x != y && x != 1 && y != 1) refuse("shapes " + dims_text(a) + " and " + dims_text(b) + " do not broadcast");
    out[i] = std::max(x, y);
  }
  return out;
}

int activation_code(int32_t activation) {
  switch (activation) {
    case BATON_ACT_NONE: return 0;
    case BATON_ACT_RELU: return 1;
    case BATON_ACT_RELU_N1_TO_1: return 2;
    case BATON_ACT_RELU6: return 3;
    case BATON_ACT_TANH: refuse("fused TANH activation not supported");
    case BATON_ACT_SIGN_BIT: refuse("fused SIGN_BIT activation not supported");
  }
  refuse("unknown fused activation " + std::to_string(activation));
}

Window window(int32_t padding, int32_t in, int32_t kernel, int32_t stride, int32_t dilation, const char* axis) {
  if (kernel < 1 || stride < 1 || dilation < 1) refuse(std::string("non-positive kernel, stride or dilation along ") + axis);
  const int64_t effective = static_cast<int64_t>(kernel - 1) * dilation + 1;
  Window w;
  if (padding == BATON_PADDING_SAME) {
    w.out = static_cast<int32_t>((in + stride - 1) / stride);
    const int64_t needed = static_cast<int64_t>(w.out - 1) * stride + effective;
    w.before = static_cast<int32_t>(needed > in ? (needed - in) / 2 : 0);
  } else if (padding == BATON_PADDING_VALID) {
    if (in < effective) refuse(std::string("the window does not fit the input along ") + axis + " (VALID padding)");
    w.out = static_cast<int32_t>((in - effective) / stride + 1);
  } else {
    refuse("unknown padding " + std::to_string(padding));
  }
  return w;
}

}  // namespace baton::vulkan
