#include "glue/op_context.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace baton::builtin {

const char* type_name(baton_tensor_type type) { return baton_tensor_type_name(type); }

size_t element_size(baton_tensor_type type) {
  switch (type) {
    case BATON_TYPE_FLOAT32: case BATON_TYPE_INT32: case BATON_TYPE_UINT32: return 4;
    case BATON_TYPE_INT64: case BATON_TYPE_UINT64: case BATON_TYPE_FLOAT64: return 8;
    case BATON_TYPE_FLOAT16: case BATON_TYPE_INT16: case BATON_TYPE_UINT16: case BATON_TYPE_BFLOAT16: return 2;
    case BATON_TYPE_BOOL: case BATON_TYPE_INT8: case BATON_TYPE_UINT8: return 1;
    default: return 0;
  }
}

size_t reshape_element_size(baton_tensor_type type) {
  if (type == BATON_TYPE_COMPLEX64) return 8;
  if (type == BATON_TYPE_COMPLEX128) return 16;
  return element_size(type);
}

int normalize_axis(const OpContext& ctx, int64_t axis, int rank) {
  ctx.require(axis >= -rank && axis < rank, "axis " + std::to_string(axis) + " out of range for rank " +
                                                std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

void require_like_input(const OpContext& ctx, const baton_tensor* in, const baton_tensor* out) {
  ctx.require(ctx.type(in) == ctx.type(out), std::string("output type ") + type_name(ctx.type(out)) +
                                                 " differs from the input's " + type_name(ctx.type(in)));
  const TensorQuant qi = ctx.quant(in), qo = ctx.quant(out);
  if (qi.count == 1 && qo.count == 1) {
    ctx.require(qi.scale() == qo.scale() && qi.zero_point() == qo.zero_point(),
                "the output's scale and zero point differ from the input's; this op does not rescale");
  }
}

void OpContext::require_host_abi_minor(uint32_t minor, const char* what) const {
  if (plugin_.host_abi_minor >= minor) return;
  fail(BATON_UNSUPPORTED, std::string("the host (plugin ABI 1.") + std::to_string(plugin_.host_abi_minor) +
                              ") does not pass " + what + "; ABI 1." + std::to_string(minor) + " does");
}

baton_tensor* OpContext::optional_input(int i) const {
  if (i >= input_count()) return nullptr;
  return api_.node_input(node_, i);
}

baton_tensor* OpContext::input(int i) const {
  baton_tensor* t = optional_input(i);
  if (!t) {
    fail(BATON_INVALID_ARGUMENT, "input " + std::to_string(i) + " is missing (the node has " +
                                     std::to_string(input_count()) + " inputs)");
  }
  return t;
}

baton_tensor* OpContext::output(int i) const {
  baton_tensor* t = i < output_count() ? api_.node_output(node_, i) : nullptr;
  if (!t) {
    fail(BATON_INVALID_ARGUMENT, "output " + std::to_string(i) + " is missing (the node has " +
                                     std::to_string(output_count()) + " outputs)");
  }
  return t;
}

std::span<const int32_t> OpContext::shape(const baton_tensor* t) const {
  const int32_t* dims = nullptr;
  const int32_t rank = api_.tensor_shape(t, &dims);
  return {dims, static_cast<size_t>(rank > 0 ? rank : 0)};
}

int64_t OpContext::element_count(const baton_tensor* t) const {
  int64_t n = 1;
  for (int32_t d : shape(t)) n *= d;
  return n;
}

void OpContext::require_constant(const baton_tensor* t, const char* what) const {
  if (!is_constant(t) || !api_.tensor_data(t)) {
    fail(BATON_UNSUPPORTED, std::string(what) + " must be a constant tensor (the builtin pack sets output shapes in "
                            "prepare and cannot read computed values there)");
  }
}

void OpContext::require_int_type(const baton_tensor* t, const char* what) const {
  if (type(t) != BATON_TYPE_INT32 && type(t) != BATON_TYPE_INT64) {
    fail(BATON_UNSUPPORTED, std::string(what) + " type " + type_name(type(t)) + " not supported (int32 or int64)");
  }
}

std::optional<std::vector<int64_t>> OpContext::known_ints(const baton_tensor* t, const char* what) const {
  require_int_type(t, what);
  if (!is_constant(t) && !data<void>(t)) return std::nullopt;
  const int64_t n = element_count(t);
  std::vector<int64_t> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[i] = int_value(t, i);
  return values;
}

std::optional<std::vector<int64_t>> OpContext::shape_ints(const baton_tensor* t, const char* what) const {
  std::optional<std::vector<int64_t>> values = known_ints(t, what);
  if (!values) {
    for (int i = 0; i < output_count(); ++i) set_dynamic(output(i));
  }
  return values;
}

int OpContext::intermediate_count() const {
  const bool has = api_.struct_size >= offsetof(baton_host_api, node_intermediate) + sizeof(api_.node_intermediate) &&
                   api_.node_intermediate_count && api_.node_intermediate;
  return has ? api_.node_intermediate_count(node_) : 0;
}

const baton_tensor* OpContext::intermediate(int i) const { return api_.node_intermediate(node_, i); }

void OpContext::set_dynamic(baton_tensor* t) const {
  const bool has = api_.struct_size >= offsetof(baton_host_api, tensor_set_dynamic) + sizeof(api_.tensor_set_dynamic) &&
                   api_.tensor_set_dynamic;
  if (!has) fail(BATON_UNSUPPORTED, "an output shape computed from data needs a host with ABI 1.2");
  if (api_.tensor_set_dynamic(t, error_) != BATON_OK) fail(BATON_ERROR, "tensor_set_dynamic failed");
}

void OpContext::set_byte_size(baton_tensor* t, size_t bytes) const {
  const bool has = api_.struct_size >= offsetof(baton_host_api, tensor_set_byte_size) + sizeof(api_.tensor_set_byte_size) &&
                   api_.tensor_set_byte_size;
  if (!has) fail(BATON_UNSUPPORTED, "string tensors need a host with ABI 1.7");
  const baton_status status = api_.tensor_set_byte_size(t, bytes, error_);
  if (status != BATON_OK) throw OpError::from_host(status);
}

bool OpContext::inputs_have_values() const {
  for (int i = 0; i < input_count(); ++i) {
    const baton_tensor* t = optional_input(i);
    if (t && !api_.tensor_data(t)) return false;
  }
  return true;
}

void OpContext::set_output_shape(baton_tensor* t, std::span<const int32_t> dims) const {
  for (int32_t d : dims) require(d >= 0, "computed a negative output dimension");
  const baton_status status = api_.tensor_set_shape(t, static_cast<int32_t>(dims.size()), dims.data(), error_);
  if (status != BATON_OK) throw OpError::from_host(status);
}

void OpContext::require_type(const baton_tensor* t, const char* role,
                             std::initializer_list<baton_tensor_type> allowed) const {
  const baton_tensor_type actual = type(t);
  for (baton_tensor_type a : allowed) {
    if (a == actual) return;
  }
  std::string names;
  for (baton_tensor_type a : allowed) {
    if (!names.empty()) names += ", ";
    names += type_name(a);
  }
  fail(BATON_UNSUPPORTED, std::string(role) + " type " + type_name(actual) + " not supported by the builtin pack (" +
                              (allowed.size() == 1 && *allowed.begin() == BATON_TYPE_FLOAT32 ? std::string("float32 only")
                                                                                             : names) +
                              ")");
}

void OpContext::require_rank(const baton_tensor* t, const char* role, int expected) const {
  const int actual = rank(t);
  require(actual == expected, std::string(role) + " must have rank " + std::to_string(expected) + ", has " +
                                  std::to_string(actual));
}

ActivationRange OpContext::activation(int32_t fused) const {
  ActivationRange r;
  switch (fused) {
    case BATON_ACT_NONE: return r;
    case BATON_ACT_RELU: r.lo = 0.0f; return r;
    case BATON_ACT_RELU_N1_TO_1: r.lo = -1.0f; r.hi = 1.0f; return r;
    case BATON_ACT_RELU6: r.lo = 0.0f; r.hi = 6.0f; return r;
    default:
      fail(BATON_UNSUPPORTED, "fused activation " + std::to_string(fused) + " not supported (NONE, RELU, "
                              "RELU_N1_TO_1, RELU6)");
  }
}

std::string OpContext::tensor_label(const baton_tensor* t) const {
  const char* name = api_.tensor_name(t);
  return "tensor " + std::to_string(api_.tensor_index(t)) + (name && *name ? std::string(" '") + name + "'" : "");
}

TensorQuant OpContext::quant(const baton_tensor* t) const {
  baton_quantization q{};
  q.struct_size = sizeof(q);
  api_.tensor_quantization(t, &q);
  TensorQuant out;
  if (q.scale_count > 0 && q.scales) {
    out.count = q.scale_count;
    out.scales = q.scales;
    out.zero_points = q.zero_points;
    out.dimension = q.quantized_dimension;
  }
  return out;
}

ChannelQuant OpContext::channel_quant(const baton_tensor* t, const char* role, int channel_dim,
                                     bool allow_per_channel) const {
  const TensorQuant q = quant(t);
  const std::string who = std::string(role) + " (" + tensor_label(t) + ")";
  if (q.count == 0) fail(BATON_UNSUPPORTED, who + " has no quantization parameters");
  if (q.count > 1) {
    if (!allow_per_channel) {
      fail(BATON_UNSUPPORTED, who + " has per-channel quantization (" + std::to_string(q.count) +
                                  " scales); this op takes one scale for the whole tensor");
    }
    if (q.dimension != channel_dim) {
      fail(BATON_UNSUPPORTED, who + " is quantized per channel along dimension " + std::to_string(q.dimension) +
                                  "; the output channels are dimension " + std::to_string(channel_dim));
    }
    const auto dims = shape(t);
    const int64_t channels = channel_dim >= 0 && static_cast<size_t>(channel_dim) < dims.size() ? dims[channel_dim] : -1;
    if (channels != q.count) {
      fail(BATON_INVALID_ARGUMENT, who + " has " + std::to_string(q.count) + " scales but dimension " +
                                       std::to_string(channel_dim) + " of its shape has " + std::to_string(channels) +
                                       " channels");
    }
  }
  const bool eight_bit = type(t) == BATON_TYPE_UINT8 || type(t) == BATON_TYPE_INT8;
  const CodeRange range = code_range(type(t) == BATON_TYPE_INT8);
  for (int32_t i = 0; i < q.count; ++i) {
    const float scale = q.scale(i);
    const int64_t zero = q.zero_point(i);
    if (!(scale > 0.0f) || !std::isfinite(scale)) {
      fail(BATON_INVALID_ARGUMENT, who + " has scale " + std::to_string(scale) + " (must be positive and finite)");
    }
    if (eight_bit && (zero < range.lo || zero > range.hi)) {
      fail(BATON_INVALID_ARGUMENT, who + " has zero point " + std::to_string(zero) + ", outside " + type_name(type(t)) +
                                       "'s range");
    }
  }
  ChannelQuant out;
  out.scales = {q.scales, static_cast<size_t>(q.count)};
  if (q.zero_points) out.zero_points = {q.zero_points, static_cast<size_t>(q.count)};
  out.dimension = q.dimension;
  return out;
}

ActQuant OpContext::act_quant(const baton_tensor* t, const char* role) const {
  require_type(t, role, {BATON_TYPE_UINT8, BATON_TYPE_INT8});
  const TensorQuant q = quant(t);
  const std::string who = std::string(role) + " (" + tensor_label(t) + ")";
  if (q.count == 0) fail(BATON_UNSUPPORTED, who + " has no quantization parameters");
  if (q.count != 1) {
    fail(BATON_UNSUPPORTED, who + " has per-channel quantization (" + std::to_string(q.count) +
                                " scales); this op needs one scale and zero point");
  }
  ActQuant a;
  a.is_signed = type(t) == BATON_TYPE_INT8;
  a.scale = q.scale();
  const CodeRange range = code_range(a.is_signed);
  const int64_t zero = q.zero_point();
  if (!(a.scale > 0.0f) || !std::isfinite(a.scale)) {
    fail(BATON_INVALID_ARGUMENT, who + " has scale " + std::to_string(a.scale) + " (must be positive and finite)");
  }
  if (zero < range.lo || zero > range.hi) {
    fail(BATON_INVALID_ARGUMENT, who + " has zero point " + std::to_string(zero) + ", outside " +
                                     type_name(type(t)) + "'s range");
  }
  a.zero_point = static_cast<int32_t>(zero);
  return a;
}

CodeRange OpContext::quantized_activation(int32_t fused, const ActQuant& out) const {
  const CodeRange r = code_range(out.is_signed);
  auto q = [&](float v) { return quantize_value(v, out.scale, out.zero_point); };
  switch (fused) {
    case BATON_ACT_NONE: return r;
    case BATON_ACT_RELU: return {std::max(r.lo, q(0.0f)), r.hi};
    case BATON_ACT_RELU_N1_TO_1: return {std::max(r.lo, q(-1.0f)), std::min(r.hi, q(1.0f))};
    case BATON_ACT_RELU6: return {std::max(r.lo, q(0.0f)), std::min(r.hi, q(6.0f))};
    default:
      fail(BATON_UNSUPPORTED, "fused activation " + std::to_string(fused) + " not supported (NONE, RELU, "
                              "RELU_N1_TO_1, RELU6)");
  }
}

Padding OpContext::padding(int32_t value) const {
  if (value == BATON_PADDING_SAME) return Padding::kSame;
  if (value == BATON_PADDING_VALID) return Padding::kValid;
  fail(BATON_INVALID_ARGUMENT, "unknown padding " + std::to_string(value));
}

std::string shape_text(std::span<const int32_t> s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}

}  // namespace baton::builtin
