// A plugin that dies on purpose, for the isolation tests: built as the delegate "crashdeleg" (claims float
// ADD and MUL of equal shapes) and as the op pack "crashpack" (ADD v1-4 and MUL v1-5, float, equal shapes).
// Its option `fail` says how and where: "none", or KIND-STAGE with KIND one of segv, abort, exit, hang
// and STAGE one of init, prepare, invoke; `fail-every` N: only at every Nth call of that stage in its
// process (a plugin that crashes on one request in a hundred). Its library constructor appends "NAME opened in PID" to
// $BATON_TEST_OPENED_MARKER, so a test can tell which process opened it.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "baton/plugin_api.h"

namespace {

#ifdef CRASH_DELEGATE
constexpr const char* kName = "crashdeleg";
#else
constexpr const char* kName = "crashpack";
#endif

const baton_host_api* api;

__attribute__((constructor)) void note_opened() {
  const char* path = std::getenv("BATON_TEST_OPENED_MARKER");
  FILE* f = path ? std::fopen(path, "a") : nullptr;
  if (!f) return;
  std::fprintf(f, "%s opened in %d\n", kName, static_cast<int>(::getpid()));
  std::fclose(f);
}

struct State {
  std::string fail;
  int64_t every = 1;
  int64_t calls = 0;  // of the failing stage
};

void maybe_fail(void* plugin_state, const char* stage) {
  State* state = static_cast<State*>(plugin_state);
  const std::string& fail = state->fail;
  const size_t dash = fail.find('-');
  if (dash == std::string::npos || fail.substr(dash + 1) != stage) return;
  if (++state->calls % state->every != 0) return;
  const std::string kind = fail.substr(0, dash);
  if (kind == "segv") {
    volatile int* null = nullptr;
    *null = 1;
  } else if (kind == "abort") {
    std::abort();
  } else if (kind == "exit") {
    std::_Exit(3);
  } else if (kind == "hang") {
    for (;;) ::pause();
  }
}

baton_status create(const baton_plugin_host* host, void** state, baton_error*) {
  *state = new State{api->option_string(host, "fail", "none"), std::max<int64_t>(1, api->option_int(host, "fail-every", 1))};
  return BATON_OK;
}
void destroy(void* state) { delete static_cast<State*>(state); }

bool float_same_shape(const baton_node* node) {
  if (api->node_input_count(node) != 2 || api->node_output_count(node) != 1) return false;
  const int32_t *a = nullptr, *b = nullptr;
  const baton_tensor* x = api->node_input(node, 0);
  const baton_tensor* y = api->node_input(node, 1);
  if (!x || !y || api->tensor_type(x) != BATON_TYPE_FLOAT32 || api->tensor_type(y) != BATON_TYPE_FLOAT32) return false;
  const int32_t ra = api->tensor_shape(x, &a), rb = api->tensor_shape(y, &b);
  return ra == rb && std::memcmp(a, b, sizeof(int32_t) * ra) == 0 &&
         api->node_builtin_options(node)->u.elementwise.activation == BATON_ACT_NONE;
}

// Inner tensors of a partition are the delegate's: it keeps them here, by tensor index.
using Scratch = std::map<int32_t, std::vector<float>>;

float* place(const baton_tensor* t, Scratch* scratch) {
  if (const void* d = api->tensor_data(t)) return const_cast<float*>(static_cast<const float*>(d));
  return scratch ? (*scratch)[api->tensor_index(t)].data() : nullptr;
}

// out = a + b (ADD) or a * b (MUL), elementwise.
void compute(const baton_node* node, Scratch* scratch) {
  const float* a = place(api->node_input(node, 0), scratch);
  const float* b = place(api->node_input(node, 1), scratch);
  const baton_tensor* out_t = api->node_output(node, 0);
  float* out = place(out_t, scratch);
  const size_t n = api->tensor_byte_size(out_t) / sizeof(float);
  const bool add = api->node_builtin_code(node) == 0;
  for (size_t i = 0; i < n; ++i) out[i] = add ? a[i] + b[i] : a[i] * b[i];
}

#ifndef CRASH_DELEGATE
baton_status same_shape(const baton_node* node, baton_error* error) {
  const int32_t* dims = nullptr;
  const int32_t rank = api->tensor_shape(api->node_input(node, 0), &dims);
  return api->tensor_set_shape(api->node_output(node, 0), rank, dims, error);
}
#endif

#ifdef CRASH_DELEGATE
int32_t check_node(void*, const baton_node* node, baton_error* reason) {
  if (float_same_shape(node)) return 1;
  api->error_set(reason, "only float ADD and MUL of equal shapes, no activation");
  return 0;
}
baton_status partition_init(void* state, const baton_partition*, void** partition_state, baton_error*) {
  maybe_fail(state, "init");
  *partition_state = new Scratch;
  return BATON_OK;
}
baton_status partition_prepare(void* state, void* partition_state, const baton_partition* p, baton_error* error) {
  maybe_fail(state, "prepare");
  // Every tensor it takes has one shape: the partition's outputs get its first input's.
  const int32_t* dims = nullptr;
  const int32_t rank = api->tensor_shape(api->partition_input(p, 0), &dims);
  for (int32_t i = 0; i < api->partition_output_count(p); ++i) {
    if (baton_status s = api->tensor_set_shape(api->partition_output(p, i), rank, dims, error); s != BATON_OK) return s;
  }
  auto& scratch = *static_cast<Scratch*>(partition_state);
  for (int32_t i = 0; i < api->partition_node_count(p); ++i) {
    const baton_tensor* out = api->node_output(api->partition_node(p, i), 0);
    scratch[api->tensor_index(out)].resize(api->tensor_byte_size(api->partition_input(p, 0)) / sizeof(float));
  }
  return BATON_OK;
}
baton_status partition_invoke(void* state, void* partition_state, const baton_partition* p, baton_error*) {
  maybe_fail(state, "invoke");
  for (int32_t i = 0; i < api->partition_node_count(p); ++i) {
    compute(api->partition_node(p, i), static_cast<Scratch*>(partition_state));
  }
  return BATON_OK;
}
void partition_free(void*, void* partition_state) { delete static_cast<Scratch*>(partition_state); }
const baton_delegate_api delegate = {sizeof(baton_delegate_api), check_node, partition_init, partition_prepare,
                                     partition_invoke, partition_free, nullptr, nullptr};
const baton_op_decl ops[] = {
    {sizeof(baton_op_decl), 0 /* ADD */, nullptr, 1, 4, nullptr},
    {sizeof(baton_op_decl), 18 /* MUL */, nullptr, 1, 5, nullptr},
};
constexpr baton_plugin_kind kKind = BATON_PLUGIN_DELEGATE;
const baton_delegate_api* kDelegate = &delegate;
#else
baton_status kernel_init(void* state, const baton_node*, void**, baton_error*) {
  maybe_fail(state, "init");
  return BATON_OK;
}
baton_status kernel_prepare(void* state, void*, const baton_node* node, baton_error* error) {
  maybe_fail(state, "prepare");
  if (!float_same_shape(node)) {
    api->error_set(error, "only float ADD and MUL of equal shapes, no activation");
    return BATON_UNSUPPORTED;
  }
  return same_shape(node, error);
}
baton_status kernel_invoke(void* state, void*, const baton_node* node, baton_error*) {
  maybe_fail(state, "invoke");
  compute(node, nullptr);
  return BATON_OK;
}
const baton_kernel kernel = {sizeof(baton_kernel), kernel_init, nullptr, kernel_prepare, kernel_invoke};
const baton_op_decl ops[] = {
    {sizeof(baton_op_decl), 0 /* ADD */, nullptr, 1, 4, &kernel},
    {sizeof(baton_op_decl), 18 /* MUL */, nullptr, 1, 5, &kernel},
};
constexpr baton_plugin_kind kKind = BATON_PLUGIN_OP_PACK;
const baton_delegate_api* kDelegate = nullptr;
#endif

const baton_option_decl options[] = {
    {sizeof(baton_option_decl), "fail", BATON_OPTION_STRING, "none",
     "how and where to die: none, or segv|abort|exit|hang - init|prepare|invoke"},
    {sizeof(baton_option_decl), "fail-every", BATON_OPTION_INT, "1", "die at every Nth call of that stage only"},
};

const baton_plugin_desc desc = {
    sizeof(baton_plugin_desc), BATON_ABI_VERSION_MAJOR, BATON_ABI_VERSION_MINOR, kName, "1.0", kKind,
    "dies on purpose", ops, sizeof ops / sizeof ops[0], options, 2, 0, create, destroy, kDelegate, nullptr, nullptr,
};

}  // namespace

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t, uint32_t, const baton_host_api* host,
                                                                           baton_error*) {
  api = host;
  return &desc;
}
