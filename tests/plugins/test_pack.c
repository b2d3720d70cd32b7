/* A small op pack for the runtime's tests, written against plugin_api.h alone:
 *   ADD v1-2 (float32, same shapes, fused RELU/RELU6 honoured)
 *   custom "TimesTwo" v1 (float32, y = 2x)
 *   the composite "baton.test_square_plus" v1 (ABI 1.10; float32, y = (x * x + x) / 2, what its
 *   decomposition in tests/data/control-flow/composite_one_input computes), which checks that it sees the
 *   composite's name and its attributes (an empty flexbuffer map, 7 bytes there)
 * Its name comes from TEST_PACK_NAME so the same source builds the "duplicate name" plugins too; with
 * TEST_PACK_TIMES_THREE it also has custom "TimesThree" v1 (float32, y = 3x), an op no other test pack
 * declares (the parking tests). */
#include <string.h>

#include "baton/plugin_api.h"

#ifndef TEST_PACK_NAME
#define TEST_PACK_NAME "testpack"
#endif

static const baton_host_api* api;

typedef struct pack_state {
  const baton_plugin_host* host;
} pack_state;

static pack_state the_state;

static baton_status same_shape_output(const baton_node* node, baton_error* error) {
  baton_tensor* in = api->node_input(node, 0);
  baton_tensor* out = api->node_output(node, 0);
  if (!in || !out || api->tensor_type(in) != BATON_TYPE_FLOAT32) {
    api->error_set(error, "testpack: float32 input required");
    return BATON_UNSUPPORTED;
  }
  const int32_t* dims = NULL;
  int32_t rank = api->tensor_shape(in, &dims);
  return api->tensor_set_shape(out, rank, dims, error);
}

static baton_status add_prepare(void* ps, void* ns, const baton_node* node, baton_error* error) {
  (void)ps;
  (void)ns;
  if (api->node_input_count(node) != 2) {
    api->error_set(error, "testpack ADD: needs 2 inputs");
    return BATON_INVALID_ARGUMENT;
  }
  if (api->tensor_byte_size(api->node_input(node, 0)) != api->tensor_byte_size(api->node_input(node, 1))) {
    api->error_set(error, "testpack ADD: inputs differ in size (no broadcasting here)");
    return BATON_UNSUPPORTED;
  }
  return same_shape_output(node, error);
}

static baton_status add_invoke(void* ps, void* ns, const baton_node* node, baton_error* error) {
  (void)ps;
  (void)ns;
  const float* a = (const float*)api->tensor_data(api->node_input(node, 0));
  const float* b = (const float*)api->tensor_data(api->node_input(node, 1));
  baton_tensor* out_t = api->node_output(node, 0);
  float* out = (float*)api->tensor_mutable_data(out_t);
  size_t n = api->tensor_byte_size(out_t) / sizeof(float);
  if (n == 0) {
    /* ABI 1.15's host does not invoke a builtin op whose outputs are all empty: a test checks it here. */
    api->error_set(error, "testpack ADD: invoked for an output with no elements");
    return BATON_ERROR;
  }
  int32_t act = api->node_builtin_options(node)->u.elementwise.activation;
  for (size_t i = 0; i < n; ++i) {
    float v = a[i] + b[i];
    if (act == BATON_ACT_RELU && v < 0) v = 0;
    if (act == BATON_ACT_RELU6) v = v < 0 ? 0 : (v > 6 ? 6 : v);
    out[i] = v;
  }
  return BATON_OK;
}

static baton_status twice_prepare(void* ps, void* ns, const baton_node* node, baton_error* error) {
  (void)ps;
  (void)ns;
  return same_shape_output(node, error);
}

/* y = factor * x over the node's float32 input. */
static baton_status scale_invoke(const baton_node* node, float factor) {
  const float* x = (const float*)api->tensor_data(api->node_input(node, 0));
  baton_tensor* out_t = api->node_output(node, 0);
  float* y = (float*)api->tensor_mutable_data(out_t);
  size_t n = api->tensor_byte_size(out_t) / sizeof(float);
  for (size_t i = 0; i < n; ++i) y[i] = factor * x[i];
  return BATON_OK;
}

static baton_status twice_invoke(void* ps, void* ns, const baton_node* node, baton_error* error) {
  (void)ps;
  (void)ns;
  (void)error;
  return scale_invoke(node, 2.0f);
}

#ifdef TEST_PACK_TIMES_THREE
static baton_status thrice_invoke(void* ps, void* ns, const baton_node* node, baton_error* error) {
  (void)ps;
  (void)ns;
  (void)error;
  return scale_invoke(node, 3.0f);
}
#endif

static baton_status square_plus_prepare(void* ps, void* ns, const baton_node* node, baton_error* error) {
  (void)ps;
  (void)ns;
  size_t size = 0;
  const char* name = api->node_custom_name(node);
  if (!name || strcmp(name, "baton.test_square_plus") != 0 || !api->node_custom_options(node, &size) || size != 7) {
    api->error_set(error, "testpack baton.test_square_plus: the composite's name or attributes did not arrive");
    return BATON_INVALID_ARGUMENT;
  }
  return same_shape_output(node, error);
}

static baton_status square_plus_invoke(void* ps, void* ns, const baton_node* node, baton_error* error) {
  (void)ps;
  (void)ns;
  (void)error;
  const float* x = (const float*)api->tensor_data(api->node_input(node, 0));
  baton_tensor* out_t = api->node_output(node, 0);
  float* y = (float*)api->tensor_mutable_data(out_t);
  size_t n = api->tensor_byte_size(out_t) / sizeof(float);
  for (size_t i = 0; i < n; ++i) y[i] = (x[i] * x[i] + x[i]) * 0.5f;
  return BATON_OK;
}

static const baton_kernel square_plus_kernel = {sizeof(baton_kernel), NULL, NULL, square_plus_prepare,
                                                square_plus_invoke};
static const baton_kernel add_kernel = {sizeof(baton_kernel), NULL, NULL, add_prepare, add_invoke};
static const baton_kernel twice_kernel = {sizeof(baton_kernel), NULL, NULL, twice_prepare, twice_invoke};
#ifdef TEST_PACK_TIMES_THREE
static const baton_kernel thrice_kernel = {sizeof(baton_kernel), NULL, NULL, twice_prepare, thrice_invoke};
#endif

static const baton_op_decl ops[] = {
    {sizeof(baton_op_decl), 0 /* ADD */, NULL, 1, 2, &add_kernel},
    {sizeof(baton_op_decl), BATON_OP_CUSTOM, "TimesTwo", 1, 1, &twice_kernel},
    {sizeof(baton_op_decl), BATON_OP_STABLEHLO_COMPOSITE, "baton.test_square_plus", 1, 1, &square_plus_kernel},
#ifdef TEST_PACK_TIMES_THREE
    {sizeof(baton_op_decl), BATON_OP_CUSTOM, "TimesThree", 1, 1, &thrice_kernel},
#endif
};

static const baton_option_decl options[] = {
    {sizeof(baton_option_decl), "scale", BATON_OPTION_FLOAT, "1.0", "a float option for config tests"},
    {sizeof(baton_option_decl), "threads", BATON_OPTION_INT, "0", "threads (unused)"},
};

static baton_status create(const baton_plugin_host* host, void** state, baton_error* error) {
  (void)error;
  the_state.host = host;
  *state = &the_state;
  return BATON_OK;
}

static void destroy(void* state) { (void)state; }

static const baton_plugin_desc desc = {
    sizeof(baton_plugin_desc), BATON_ABI_VERSION_MAJOR, BATON_ABI_VERSION_MINOR, TEST_PACK_NAME, "1.0",
    BATON_PLUGIN_OP_PACK, "test op pack: ADD and TimesTwo", ops, sizeof ops / sizeof ops[0],
    options, sizeof options / sizeof options[0], 0, create, destroy, NULL,
};

BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t major, uint32_t minor,
                                                                const baton_host_api* host_api, baton_error* error) {
  (void)major;
  (void)minor;
  (void)error;
  api = host_api;
  return &desc;
}
