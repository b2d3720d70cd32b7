/* The smallest complete baton op pack: one custom op, `Atan` version 1, y = atan(x) on float32.
 *
 * Build it with nothing but a C compiler and baton's installed headers:
 *   cc -std=c11 -O2 -shared -fPIC $(pkg-config --cflags baton-plugin) atan.c -o atan.so -lm
 * and drop atan.so into a plugin folder (see README.md). */
#include <math.h>
#include <stdio.h>

#include <baton/plugin_api.h>

/* The host's function table, given to the entry point; valid until the pack is unloaded. */
static const baton_host_api* host;

/* prepare: check what the kernel can do, and give the output its shape. No data is readable yet. */
static baton_status atan_prepare(void* pack_state, void* node_state, const baton_node* node, baton_error* error) {
  (void)pack_state;
  (void)node_state;
  char message[128];
  if (host->node_input_count(node) != 1 || host->node_output_count(node) != 1) {
    snprintf(message, sizeof message, "node %d Atan: needs 1 input and 1 output", (int)host->node_index(node));
    host->error_set(error, message);
    return BATON_INVALID_ARGUMENT;
  }
  const baton_tensor* x = host->node_input(node, 0);
  baton_tensor* y = host->node_output(node, 0);
  if (host->tensor_type(x) != BATON_TYPE_FLOAT32 || host->tensor_type(y) != BATON_TYPE_FLOAT32) {
    snprintf(message, sizeof message, "node %d Atan: float32 only", (int)host->node_index(node));
    host->error_set(error, message);
    return BATON_UNSUPPORTED;
  }
  const int32_t* dims = NULL;
  const int32_t rank = host->tensor_shape(x, &dims);
  return host->tensor_set_shape(y, rank, dims, error);
}

/* invoke: compute. Inputs and outputs are readable and writable now; nothing is allocated here. */
static baton_status atan_invoke(void* pack_state, void* node_state, const baton_node* node, baton_error* error) {
  (void)pack_state;
  (void)node_state;
  (void)error;
  const float* x = (const float*)host->tensor_data(host->node_input(node, 0));
  baton_tensor* y_tensor = host->node_output(node, 0);
  float* y = (float*)host->tensor_mutable_data(y_tensor);
  const size_t count = host->tensor_byte_size(y_tensor) / sizeof(float);
  for (size_t i = 0; i < count; ++i) y[i] = atanf(x[i]);
  return BATON_OK;
}

/* init and free are optional: this kernel keeps no per-node state. */
static const baton_kernel atan_kernel = {sizeof(baton_kernel), NULL, NULL, atan_prepare, atan_invoke};

static const baton_op_decl ops[] = {
    {sizeof(baton_op_decl), BATON_OP_CUSTOM, "Atan", 1, 1, &atan_kernel},
};

static const baton_plugin_desc descriptor = {
    sizeof(baton_plugin_desc),
    BATON_ABI_VERSION_MAJOR,
    BATON_ABI_VERSION_MINOR,
    "atan",                          /* name: unique among loaded plugins */
    "1.0",                           /* the pack's own version */
    BATON_PLUGIN_OP_PACK,
    "example: the custom op Atan (y = atan(x), float32)",
    ops,
    sizeof ops / sizeof ops[0],
    NULL, /* options */
    0,
    BATON_PLUGIN_FLAG_REENTRANT, /* no shared state: nodes may run on several threads at once */
    NULL,                        /* create: nothing to set up */
    NULL,                        /* destroy */
    NULL,                        /* delegate functions: op packs have none */
    NULL,                        /* device probe: delegates only */
    NULL,                        /* loader functions: loaders only */
};

/* The entry point. A minor version works both ways, so the pack refuses a host only for what it cannot
 * do without: another major version, or a host table that lacks a function the pack calls. It calls
 * only ABI 1.0 functions, and of those tensor_set_shape lies last in the table: a table that holds it
 * holds them all, whatever the host's minor (an ABI 1.0 host's, or a newer one's). A pack that called a
 * later minor's function would test for that one the same way (and for NULL). */
BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t host_major, uint32_t host_minor,
                                                                const baton_host_api* api, baton_error* error) {
  (void)host_minor;
  if (api == NULL) return NULL;
  if (host_major != BATON_ABI_VERSION_MAJOR || !BATON_STRUCT_HAS(api, baton_host_api, tensor_set_shape)) {
    if (BATON_STRUCT_HAS(api, baton_host_api, error_set) && api->error_set != NULL) {
      api->error_set(error, "atan: needs a host of plugin ABI 1 whose function table holds the ABI 1.0 functions");
    }
    return NULL;
  }
  host = api;
  return &descriptor;
}
