/* Op packs with one deliberate fault each, for `baton check-plugin` (tests/check_plugin_test.sh). Each
 * declares FLOOR v1-2 (float32) and SUB v1-3 (int64, of one shape or minus a single value; other types
 * and broadcasts are refused with a reason), the ops of the one-op cases floor_f32 and sub_i64_scalar,
 * and is built once per variant:
 *   FAULT_WRONG_FLOAT  "wrongfloor":  float32 FLOOR gives floor(x) + 0.001 (SUB is right)
 *   FAULT_SILENT       "silentsub":   refuses int64 SUB without giving a reason (FLOOR is right)
 *   FAULT_STALE_SHAPE  "stalefloor":  counts the elements once, at the first prepare, so a resized input
 *                                     is computed with the first shape's count */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "baton/plugin_api.h"

static const baton_host_api* api;

typedef struct node_state {
  size_t count; /* elements of the output, from prepare (FAULT_STALE_SHAPE: from the first prepare only) */
} node_state;

static size_t element_count(const baton_tensor* t) {
  const int32_t* dims = NULL;
  const int32_t rank = api->tensor_shape(t, &dims);
  size_t n = 1;
  for (int32_t d = 0; d < rank; ++d) n *= (size_t)dims[d];
  return n;
}

static baton_status kernel_init(void* ps, const baton_node* node, void** ns, baton_error* error) {
  (void)ps;
  (void)node;
  (void)error;
  *ns = calloc(1, sizeof(node_state));
  return *ns ? BATON_OK : BATON_OUT_OF_MEMORY;
}

static void kernel_free(void* ps, void* ns) {
  (void)ps;
  free(ns);
}

/* The output takes input 0's shape. */
static baton_status same_shape(void* ns, const baton_node* node, baton_error* error) {
  const baton_tensor* a = api->node_input(node, 0);
  node_state* s = (node_state*)ns;
#if defined(FAULT_STALE_SHAPE)
  if (s->count == 0) s->count = element_count(a); /* the fault: never counted again */
#else
  s->count = element_count(a);
#endif
  const int32_t* dims = NULL;
  const int32_t rank = api->tensor_shape(a, &dims);
  return api->tensor_set_shape(api->node_output(node, 0), rank, dims, error);
}

static baton_status floor_prepare(void* ps, void* ns, const baton_node* node, baton_error* error) {
  (void)ps;
  if (api->node_input_count(node) != 1 || api->tensor_type(api->node_input(node, 0)) != BATON_TYPE_FLOAT32) {
    api->error_set(error, "FLOOR of one float32 input only");
    return BATON_UNSUPPORTED;
  }
  return same_shape(ns, node, error);
}

static baton_status floor_invoke(void* ps, void* ns, const baton_node* node, baton_error* error) {
  (void)ps;
  (void)error;
  const node_state* s = (const node_state*)ns;
  const float* x = (const float*)api->tensor_data(api->node_input(node, 0));
  float* out = (float*)api->tensor_mutable_data(api->node_output(node, 0));
  for (size_t i = 0; i < s->count; ++i) {
    out[i] = floorf(x[i]);
#if defined(FAULT_WRONG_FLOAT)
    out[i] += 0.001f; /* the fault */
#endif
  }
  return BATON_OK;
}

static baton_status sub_prepare(void* ps, void* ns, const baton_node* node, baton_error* error) {
  (void)ps;
  const baton_tensor* a = api->node_input(node, 0);
  const baton_tensor* b = api->node_input(node, 1);
  if (api->node_input_count(node) != 2 || api->tensor_type(a) != BATON_TYPE_INT64 || api->tensor_type(b) != BATON_TYPE_INT64) {
#if defined(FAULT_SILENT)
    return BATON_UNSUPPORTED;
#else
    api->error_set(error, "SUB of int64 inputs only");
    return BATON_UNSUPPORTED;
#endif
  }
#if defined(FAULT_SILENT)
  return BATON_UNSUPPORTED; /* the fault: a refusal without a reason */
#endif
  if (element_count(b) != 1 && element_count(b) != element_count(a)) {
    api->error_set(error, "SUB of one shape, or minus a single value, only");
    return BATON_UNSUPPORTED;
  }
  if (api->node_builtin_options(node)->u.elementwise.activation != BATON_ACT_NONE) {
    api->error_set(error, "no fused activation");
    return BATON_UNSUPPORTED;
  }
  return same_shape(ns, node, error);
}

static baton_status sub_invoke(void* ps, void* ns, const baton_node* node, baton_error* error) {
  (void)ps;
  (void)error;
  const node_state* s = (const node_state*)ns;
  const baton_tensor* b = api->node_input(node, 1);
  const int64_t* x = (const int64_t*)api->tensor_data(api->node_input(node, 0));
  const int64_t* y = (const int64_t*)api->tensor_data(b);
  const int single = element_count(b) == 1;
  int64_t* out = (int64_t*)api->tensor_mutable_data(api->node_output(node, 0));
  for (size_t i = 0; i < s->count; ++i) out[i] = x[i] - y[single ? 0 : i];
  return BATON_OK;
}

static const baton_kernel floor_kernel = {sizeof(baton_kernel), kernel_init, kernel_free, floor_prepare, floor_invoke};
static const baton_kernel sub_kernel = {sizeof(baton_kernel), kernel_init, kernel_free, sub_prepare, sub_invoke};
static const baton_op_decl ops[] = {{sizeof(baton_op_decl), 8 /* FLOOR */, NULL, 1, 2, &floor_kernel},
                                    {sizeof(baton_op_decl), 41 /* SUB */, NULL, 1, 3, &sub_kernel}};

static baton_status create(const baton_plugin_host* host, void** state, baton_error* error) {
  (void)host;
  (void)error;
  *state = NULL;
  return BATON_OK;
}

static const baton_plugin_desc desc = {
    sizeof(baton_plugin_desc), BATON_ABI_VERSION_MAJOR, BATON_ABI_VERSION_MINOR, PLUGIN_NAME, "1.0",
    BATON_PLUGIN_OP_PACK, "FLOOR and SUB with a deliberate fault, for baton check-plugin's tests", ops, 2, NULL, 0, 0,
    create, NULL, NULL, NULL};

BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t major, uint32_t minor,
                                                                const baton_host_api* host_api, baton_error* error) {
  (void)minor;
  if (major != BATON_ABI_VERSION_MAJOR) {
    host_api->error_set(error, "built for ABI 1");
    return NULL;
  }
  if (!BATON_STRUCT_HAS(host_api, baton_host_api, tensor_set_shape) || !host_api->tensor_set_shape) {
    host_api->error_set(error, "needs tensor_set_shape");
    return NULL;
  }
  api = host_api;
  return &desc;
}
