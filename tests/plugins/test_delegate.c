/* A delegate for the partitioning tests, written against plugin_api.h alone. It takes ADD and the
 * custom TimesTwo (float32, same shapes), and the composite baton.test_square_plus (ABI 1.11), when its
 * `ops` option names them, runs them with its own code,
 * and can be told to fail: option `fail` = init | prepare | invoke | none, `refuse-all` = a reason to
 * refuse every node with. Its name comes from DELEGATE_NAME so several can stand in one chain. Its
 * device probe (ABI 1.1) answers what the `devices` option says ("KIND:NAME:PREFERENCE;...", "none"
 * for no device, "fail" for a failing probe); built with ABI_1_0 it is an ABI 1.0 plugin without one.
 * With `scratch` on (ABI 1.6) its tensors between nodes live in the partition's scratch in the host's
 * arena, and an invoke fails if the host accepts a scratch request outside prepare. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "baton/plugin_api.h"

#ifndef DELEGATE_NAME
#define DELEGATE_NAME "testdelegate"
#endif

static const baton_host_api* api;

typedef struct delegate_state {
  const baton_plugin_host* host;
  char ops[256];
  char fail[32];
  char refuse_all[128];
  int scratch;
} delegate_state;

typedef struct partition_state {
  int32_t tensor_count;   /* size of `buffers`: largest tensor index + 1 */
  float** buffers;        /* internal tensors, by tensor index; NULL for boundary tensors */
  size_t* offsets;        /* with `scratch`: bytes into the scratch, by tensor index; SIZE_MAX for none */
  int invokes;
} partition_state;

static int names_op(const delegate_state* s, const char* name) {
  const char* p = s->ops;
  size_t n = strlen(name);
  while ((p = strstr(p, name)) != NULL) {
    int starts = p == s->ops || p[-1] == ',' || p[-1] == ' ';
    int ends = p[n] == '\0' || p[n] == ',' || p[n] == ' ';
    if (starts && ends) return 1;
    p += n;
  }
  return 0;
}

static const char* op_name(const baton_node* node) {
  const int32_t code = api->node_builtin_code(node);
  return code == BATON_OP_CUSTOM || code == BATON_OP_STABLEHLO_COMPOSITE ? api->node_custom_name(node) : "ADD";
}

static int32_t check_node(void* ps, const baton_node* node, baton_error* reason) {
  delegate_state* s = (delegate_state*)ps;
  if (s->refuse_all[0]) {
    api->error_set(reason, s->refuse_all);
    return 0;
  }
  if (!names_op(s, op_name(node))) {
    api->error_set(reason, "not in this delegate's ops option");
    return 0;
  }
  if (api->tensor_type(api->node_input(node, 0)) != BATON_TYPE_FLOAT32) {
    api->error_set(reason, "float32 only");
    return 0;
  }
  if (api->node_input_count(node) > 1 &&
      api->tensor_byte_size(api->node_input(node, 0)) != api->tensor_byte_size(api->node_input(node, 1))) {
    api->error_set(reason, "no broadcasting");
    return 0;
  }
  return 1;
}

static baton_status partition_init(void* ps, const baton_partition* p, void** state, baton_error* error) {
  delegate_state* s = (delegate_state*)ps;
  if (strcmp(s->fail, "init") == 0) {
    api->error_set(error, "simulated init failure");
    return BATON_ERROR;
  }
  partition_state* st = calloc(1, sizeof *st);
  if (!st) return BATON_OUT_OF_MEMORY;
  for (int32_t i = 0; i < api->partition_node_count(p); ++i) {
    const baton_node* n = api->partition_node(p, i);
    for (int32_t k = 0; k < api->node_output_count(n); ++k) {
      int32_t t = api->tensor_index(api->node_output(n, k));
      if (t + 1 > st->tensor_count) st->tensor_count = t + 1;
    }
  }
  st->buffers = calloc((size_t)st->tensor_count + 1, sizeof(float*)); /* the last: the scratch, at invoke */
  st->offsets = calloc((size_t)st->tensor_count + 1, sizeof(size_t));
  if (!st->buffers || !st->offsets) return BATON_OUT_OF_MEMORY;
  *state = st;
  return BATON_OK;
}

static int is_partition_output(const baton_partition* p, const baton_tensor* t) {
  for (int32_t i = 0; i < api->partition_output_count(p); ++i) {
    if (api->partition_output(p, i) == t) return 1;
  }
  return 0;
}

static baton_status partition_prepare(void* ps, void* pstate, const baton_partition* p, baton_error* error) {
  delegate_state* s = (delegate_state*)ps;
  partition_state* st = (partition_state*)pstate;
  if (strcmp(s->fail, "prepare") == 0) {
    api->error_set(error, "simulated prepare failure");
    return BATON_ERROR;
  }
  if (strcmp(s->fail, "crash") == 0) abort(); /* takes the whole process down, for the crash journal */
  size_t scratch_bytes = 0;
  for (int32_t i = 0; i < st->tensor_count; ++i) st->offsets[i] = SIZE_MAX;
  for (int32_t i = 0; i < api->partition_node_count(p); ++i) {
    const baton_node* n = api->partition_node(p, i);
    const int32_t* dims = NULL;
    int32_t rank = api->tensor_shape(api->node_input(n, 0), &dims);
    baton_tensor* out = api->node_output(n, 0);
    size_t count = 1;
    for (int32_t d = 0; d < rank; ++d) count *= (size_t)dims[d];
    if (is_partition_output(p, out)) {
      baton_status r = api->tensor_set_shape(out, rank, dims, error);
      if (r != BATON_OK) return r;
    } else if (s->scratch) {
      st->offsets[api->tensor_index(out)] = scratch_bytes;
      scratch_bytes += (count * sizeof(float) + 63) / 64 * 64;
    } else {
      int32_t t = api->tensor_index(out);
      free(st->buffers[t]);
      st->buffers[t] = calloc(count ? count : 1, sizeof(float));
      if (!st->buffers[t]) return BATON_OUT_OF_MEMORY;
    }
  }
#ifndef ABI_1_0
  if (s->scratch) {
    if (api->abi_minor < 6 || !api->partition_request_scratch) {
      api->error_set(error, "the host gives no partition scratch");
      return BATON_UNSUPPORTED;
    }
    return api->partition_request_scratch(p, scratch_bytes, error);
  }
#endif
  return BATON_OK;
}

static const float* read_ptr(partition_state* st, const baton_tensor* t) {
  int32_t i = api->tensor_index(t);
  if (i < st->tensor_count && st->buffers[i]) return st->buffers[i];
  if (i < st->tensor_count && st->offsets[i] != SIZE_MAX) return (const float*)st->buffers[st->tensor_count] + st->offsets[i] / sizeof(float);
  return (const float*)api->tensor_data(t);
}

static baton_status partition_invoke(void* ps, void* pstate, const baton_partition* p, baton_error* error) {
  delegate_state* s = (delegate_state*)ps;
  partition_state* st = (partition_state*)pstate;
  st->invokes++;
  if (strcmp(s->fail, "invoke") == 0) {
    api->error_set(error, "simulated invoke failure");
    return BATON_ERROR;
  }
#ifndef ABI_1_0
  if (s->scratch) {
    st->buffers[st->tensor_count] = (float*)api->partition_scratch(p); /* where the host placed it */
    if (api->partition_request_scratch(p, 64, NULL) != BATON_INVALID_ARGUMENT) {
      api->error_set(error, "the host took a scratch request outside prepare");
      return BATON_ERROR;
    }
  }
#endif
  for (int32_t i = 0; i < api->partition_node_count(p); ++i) {
    const baton_node* n = api->partition_node(p, i);
    baton_tensor* out_t = api->node_output(n, 0);
    int32_t oi = api->tensor_index(out_t);
    float* out = oi < st->tensor_count && st->buffers[oi] ? st->buffers[oi] : (float*)api->tensor_mutable_data(out_t);
    if (oi < st->tensor_count && st->offsets[oi] != SIZE_MAX) out = st->buffers[st->tensor_count] + st->offsets[oi] / sizeof(float);
    const int32_t* dims = NULL;
    int32_t rank = api->tensor_shape(api->node_input(n, 0), &dims);
    size_t count = 1;
    for (int32_t d = 0; d < rank; ++d) count *= (size_t)dims[d];
    const float* a = read_ptr(st, api->node_input(n, 0));
    if (!out || !a) {
      api->error_set(error, "missing tensor memory");
      return BATON_ERROR;
    }
    if (api->node_builtin_code(n) == BATON_OP_CUSTOM) {
      for (size_t k = 0; k < count; ++k) out[k] = 2.0f * a[k];
    } else if (api->node_builtin_code(n) == BATON_OP_STABLEHLO_COMPOSITE) {
      /* baton.test_square_plus, fused: what its decomposition computes */
      for (size_t k = 0; k < count; ++k) out[k] = (a[k] * a[k] + a[k]) * 0.5f;
    } else {
      const float* b = read_ptr(st, api->node_input(n, 1));
      int32_t act = api->node_builtin_options(n)->u.elementwise.activation;
      for (size_t k = 0; k < count; ++k) {
        float v = a[k] + b[k];
        if (act == BATON_ACT_RELU && v < 0) v = 0;
        if (act == BATON_ACT_RELU6) v = v < 0 ? 0 : (v > 6 ? 6 : v);
        if (act == BATON_ACT_RELU_N1_TO_1) v = v < -1 ? -1 : (v > 1 ? 1 : v);
        out[k] = v;
      }
    }
  }
  return BATON_OK;
}

static void partition_free(void* ps, void* pstate) {
  (void)ps;
  partition_state* st = (partition_state*)pstate;
  if (!st) return;
  for (int32_t i = 0; i < st->tensor_count; ++i) free(st->buffers[i]);
  free(st->buffers);
  free(st->offsets);
  free(st);
}

#ifndef ABI_1_0
/* Parses the `devices` option into static storage (valid until the next probe, as the ABI allows). */
static baton_status probe_devices(const baton_plugin_host* host, const baton_device** devices, size_t* count,
                                  baton_error* error) {
  static char text[512];
  static baton_device list[8];
  size_t n = 0;
  strncpy(text, api->option_string(host, "devices", ""), sizeof text - 1);
  if (strcmp(text, "fail") == 0) {
    api->error_set(error, "simulated probe failure: no /dev/fake-accelerator");
    return BATON_ERROR;
  }
  if (strcmp(text, "none") != 0) {
    char* save = NULL;
    for (char* item = strtok_r(text, ";", &save); item && n < 8; item = strtok_r(NULL, ";", &save)) {
      char* name = strchr(item, ':');
      char* pref = name ? strchr(name + 1, ':') : NULL;
      if (!name || !pref) {
        api->error_set(error, "devices option: expected KIND:NAME:PREFERENCE");
        return BATON_INVALID_ARGUMENT;
      }
      *name++ = '\0';
      *pref++ = '\0';
      int32_t kind = strcmp(item, "npu") == 0   ? BATON_DEVICE_NPU
                     : strcmp(item, "gpu") == 0 ? BATON_DEVICE_GPU
                     : strcmp(item, "cpu") == 0 ? BATON_DEVICE_CPU
                                                : BATON_DEVICE_EMULATED;
      baton_device d = {sizeof(baton_device), name, kind, (int32_t)atoi(pref)};
      list[n++] = d;
    }
  }
  *devices = list;
  *count = n;
  return BATON_OK;
}
#endif

#ifdef ABI_1_0
/* As built against ABI 1.0 / 1.1: the delegate functions end after partition_free (no select_nodes). */
static const baton_delegate_api delegate_api = {offsetof(baton_delegate_api, select_nodes), check_node,
                                                partition_init, partition_prepare, partition_invoke,
                                                partition_free, NULL, NULL};
#else
static const baton_delegate_api delegate_api = {sizeof(baton_delegate_api), check_node, partition_init,
                                                partition_prepare, partition_invoke, partition_free,
                                                NULL, NULL};
#endif

static const baton_op_decl ops[] = {
    {sizeof(baton_op_decl), 0 /* ADD */, NULL, 1, 2, NULL},
    {sizeof(baton_op_decl), BATON_OP_CUSTOM, "TimesTwo", 1, 1, NULL},
#ifndef ABI_1_0
    /* ABI 1.11: the composite of tests/data/control-flow/composite_one_input, taken only when `ops` names it */
    {sizeof(baton_op_decl), BATON_OP_STABLEHLO_COMPOSITE, "baton.test_square_plus", 1, 1, NULL},
#endif
};

static const baton_option_decl options[] = {
    {sizeof(baton_option_decl), "ops", BATON_OPTION_STRING, "ADD,TimesTwo", "ops to take (of ADD, TimesTwo, baton.test_square_plus)"},
    {sizeof(baton_option_decl), "scratch", BATON_OPTION_BOOL, "false", "tensors between nodes in the partition's scratch (ABI 1.6)"},
    {sizeof(baton_option_decl), "fail", BATON_OPTION_STRING, "none", "init, prepare, invoke, crash (abort in prepare) or none"},
    {sizeof(baton_option_decl), "refuse-all", BATON_OPTION_STRING, "", "refuse every node with this reason"},
    {sizeof(baton_option_decl), "devices", BATON_OPTION_STRING, "cpu:test CPU:0",
     "what the device probe answers: KIND:NAME:PREFERENCE;... (npu, gpu, cpu, emulated), none, or fail"},
};

static delegate_state the_state;

static baton_status create(const baton_plugin_host* host, void** state, baton_error* error) {
  (void)error;
  the_state.host = host;
  strncpy(the_state.ops, api->option_string(host, "ops", ""), sizeof the_state.ops - 1);
  strncpy(the_state.fail, api->option_string(host, "fail", "none"), sizeof the_state.fail - 1);
  strncpy(the_state.refuse_all, api->option_string(host, "refuse-all", ""), sizeof the_state.refuse_all - 1);
#ifndef ABI_1_0
  {
    const char* v = api->option_string(host, "scratch", "false"); /* the option is declared a bool */
    the_state.scratch = strcmp(v, "true") == 0 || strcmp(v, "yes") == 0 || strcmp(v, "on") == 0 || strcmp(v, "1") == 0;
  }
#endif
  *state = &the_state;
  return BATON_OK;
}

#ifdef ABI_1_0
/* As built against ABI 1.0: the descriptor ends after `delegate`. */
static const baton_plugin_desc desc = {
    offsetof(baton_plugin_desc, probe_devices), BATON_ABI_VERSION_MAJOR, 0, DELEGATE_NAME, "1.0",
    BATON_PLUGIN_DELEGATE, "test delegate (ABI 1.0): ADD and TimesTwo", ops, sizeof ops / sizeof ops[0],
    options, sizeof options / sizeof options[0] - 1, 0, create, NULL, &delegate_api, NULL, NULL,
};
#else
static const baton_plugin_desc desc = {
    sizeof(baton_plugin_desc), BATON_ABI_VERSION_MAJOR, BATON_ABI_VERSION_MINOR, DELEGATE_NAME, "1.0",
    BATON_PLUGIN_DELEGATE, "test delegate: ADD and TimesTwo", ops, sizeof ops / sizeof ops[0],
    options, sizeof options / sizeof options[0], 0, create, NULL, &delegate_api, probe_devices, NULL,
};
#endif

BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t major, uint32_t minor,
                                                                const baton_host_api* host_api, baton_error* error) {
  (void)major;
  (void)minor;
  (void)error;
  api = host_api;
  return &desc;
}
