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

void require_float16_block_scales(const OpContext& ctx, const TensorQuant& q, const std::string& role) {
  ctx.require(q.block_scale_type == BATON_TYPE_FLOAT16,
              role + " has " + type_name(q.block_scale_type) +
                  " block scales; blockwise weights take FLOAT16 ones (LiteRT 2.5 refuses or misreads others)");
}

void OpContext::require_host_abi_minor(uint32_t minor, const char* what) const {
  if (plugin_.host_abi_minor >= minor) return;
  fail(BATON_UNSUPPORTED, std::string("the host (plugin ABI 1.") + std::to_string(plugin_.host_abi_minor) +
                              ") does not pass " + what + "; ABI 1." + std::to_string(minor) + " does");
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

bool OpContext::inputs_have_values() const {
  for (int i = 0; i < input_count(); ++i) {
    const baton_tensor* t = optional_input(i);
    if (t && !api_.tensor_data(t)) return false;
  }
  return true;
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

bool OpContext::request_arena_scratch(size_t bytes) const {
  if (plugin_.host_abi_minor < 14 || !BATON_STRUCT_HAS(&api_, baton_host_api, node_scratch) ||
      !api_.node_request_scratch || !api_.node_scratch) {
    return false;
  }
  baton_error* ignored = nullptr;  // an UNSUPPORTED answer is not a failure: the node keeps its own memory
  return api_.node_request_scratch(node_, bytes, ignored) == BATON_OK;
}

}  // namespace baton::builtin
