// A TFLite stable delegate of ours, written against the stable delegate ABI and TFLite's opaque API
// alone (plugins/tflite-delegates/tflite_opaque_api.h, our declaration of TFLite's headers): it exports
// TFL_TheStableDelegate, never touches a TfLiteContext, TfLiteNode or TfLiteTensor field, and leaves the
// opaque functions undefined, to be bound to the runtime that loads it (as a stable delegate built for
// TFLite is). It takes float32 ADD and MUL nodes without a fused activation whose inputs have the
// output's shape, and computes them (its own buffers for the tensors inside a partition).
//
// A stable delegate takes no options, so the tests choose a misbehaviour through the environment
// variable BATON_TEST_STABLE_MODE, read at create: twice (a node listed twice to
// ReplaceNodeSubsetsWithDelegateKernels), null-registration (no registration), prepare-fails and
// invoke-fails (the kernel reports through TfLiteOpaqueContextReportError and fails).
//
// Built four ways (tests/meson.build): as is ("baton_test_stable"); with BATON_TEST_CREATE_FAILS, a
// delegate whose create returns NULL and whose get_delegate_errno says 42 ("baton_test_stable_null");
// with BATON_TEST_ABI_VERSION, one that declares another stable delegate ABI; with
// BATON_TEST_OPERATOR_NAMES, one written with TFLite 2.16's TfLiteOperator* names
// ("baton_test_stable_operator").
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <map>
#include <vector>

#include "tflite_opaque_api.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

// Built against TFLite 2.16's names of the registration functions.
#ifdef BATON_TEST_OPERATOR_NAMES
#define TfLiteRegistrationExternal TfLiteOperator
#define TfLiteRegistrationExternalCreate TfLiteOperatorCreate
#define TfLiteRegistrationExternalDelete TfLiteOperatorDelete
#define TfLiteRegistrationExternalGetBuiltInCode TfLiteOperatorGetBuiltInCode
#define TfLiteRegistrationExternalSetInit TfLiteOperatorSetInit
#define TfLiteRegistrationExternalSetFree TfLiteOperatorSetFree
#define TfLiteRegistrationExternalSetPrepare TfLiteOperatorSetPrepare
#define TfLiteRegistrationExternalSetInvoke TfLiteOperatorSetInvoke
#endif

#ifndef BATON_TEST_ABI_VERSION
#define BATON_TEST_ABI_VERSION TFL_STABLE_DELEGATE_ABI_VERSION
#endif

namespace {

constexpr int kOpAdd = 0, kOpMul = 18, kOpDelegate = 51;  // TfLiteBuiltinOperator

struct Delegate {
  int magic = 0x5ab1e;
  TfLiteOpaqueDelegate* opaque = nullptr;
  std::string mode;
};

struct Step {
  int op, a, b, out;
  size_t count = 0;
};

struct Kernel {
  std::string mode;
  std::vector<Step> steps;
  std::vector<int> boundary_outputs;
  std::map<int, std::vector<float>> own;  // tensors inside the partition
};

int g_errno = 0;
int g_invokes = 0;

bool same_shape(const TfLiteOpaqueTensor* a, const TfLiteOpaqueTensor* b) {
  if (TfLiteOpaqueTensorNumDims(a) != TfLiteOpaqueTensorNumDims(b)) return false;
  for (int32_t i = 0; i < TfLiteOpaqueTensorNumDims(a); ++i) {
    if (TfLiteOpaqueTensorDim(a, i) != TfLiteOpaqueTensorDim(b, i)) return false;
  }
  return true;
}

void* kernel_init(TfLiteOpaqueContext* context, const char* buffer, size_t) {
  const auto* params = reinterpret_cast<const TfLiteOpaqueDelegateParams*>(buffer);
  const auto* d = static_cast<const Delegate*>(params->delegate_data);
  if (!d || d->magic != 0x5ab1e || d->opaque != params->delegate) {
    TfLiteOpaqueContextReportError(context, "the kernel's params do not carry this delegate's data");
    return nullptr;
  }
  auto* k = new Kernel;
  k->mode = d->mode;
  for (int i = 0; i < params->nodes_to_replace->size; ++i) {
    TfLiteOpaqueNode* node = nullptr;
    TfLiteRegistrationExternal* reg = nullptr;
    TfLiteOpaqueContextGetNodeAndRegistration(context, params->nodes_to_replace->data[i], &node, &reg);
    const int* inputs = nullptr;
    const int* outputs = nullptr;
    int n_in = 0, n_out = 0;
    TfLiteOpaqueNodeInputs(node, &inputs, &n_in);
    TfLiteOpaqueNodeOutputs(node, &outputs, &n_out);
    k->steps.push_back({TfLiteRegistrationExternalGetBuiltInCode(reg), inputs[0], inputs[1], outputs[0]});
  }
  for (int i = 0; i < params->output_tensors->size; ++i) k->boundary_outputs.push_back(params->output_tensors->data[i]);
  return k;
}

void kernel_free(TfLiteOpaqueContext*, void* data) { delete static_cast<Kernel*>(data); }

TfLiteStatus kernel_prepare(TfLiteOpaqueContext* context, TfLiteOpaqueNode* node) {
  auto* k = static_cast<Kernel*>(TfLiteOpaqueNodeGetUserData(node));
  if (!k) return kTfLiteError;
  if (k->mode == "prepare-fails") {
    TfLiteOpaqueContextReportError(context, "simulated prepare failure in %s", "the stable test delegate");
    return kTfLiteError;
  }
  // A delegate node's builtin data is its TfLiteOpaqueDelegateParams, as in TFLite.
  const auto* params = static_cast<const TfLiteOpaqueDelegateParams*>(TfLiteOpaqueNodeGetBuiltinData(node));
  if (!params || params->nodes_to_replace->size != static_cast<int>(k->steps.size())) {
    TfLiteOpaqueContextReportError(context, "the delegate node's builtin data is not its params");
    return kTfLiteError;
  }
  for (Step& s : k->steps) {
    const TfLiteOpaqueTensor* t = TfLiteOpaqueContextGetOpaqueTensor(context, s.a);
    s.count = 1;
    for (int32_t i = 0; i < TfLiteOpaqueTensorNumDims(t); ++i) s.count *= static_cast<size_t>(TfLiteOpaqueTensorDim(t, i));
    bool boundary = false;
    for (int o : k->boundary_outputs) boundary |= o == s.out;
    if (!boundary) k->own[s.out].assign(s.count, 0.0f);
  }
  return kTfLiteOk;
}

TfLiteStatus kernel_invoke(TfLiteOpaqueContext* context, TfLiteOpaqueNode* node) {
  auto* k = static_cast<Kernel*>(TfLiteOpaqueNodeGetUserData(node));
  if (k->mode == "invoke-fails") {
    TfLiteOpaqueContextReportError(context, "simulated invoke failure");
    return kTfLiteError;
  }
  auto data = [&](int t) -> float* {
    auto it = k->own.find(t);
    return it != k->own.end() ? it->second.data()
                              : static_cast<float*>(TfLiteOpaqueTensorData(TfLiteOpaqueContextGetOpaqueTensor(context, t)));
  };
  for (const Step& s : k->steps) {
    const float* a = data(s.a);
    const float* b = data(s.b);
    float* out = data(s.out);
    if (!a || !b || !out) {
      TfLiteOpaqueContextReportError(context, "tensor without data in step writing %d", s.out);
      return kTfLiteError;
    }
    for (size_t i = 0; i < s.count; ++i) out[i] = s.op == kOpAdd ? a[i] + b[i] : a[i] * b[i];
  }
  ++g_invokes;
  return kTfLiteOk;
}

[[maybe_unused]] TfLiteStatus delegate_prepare(TfLiteOpaqueContext* context, TfLiteOpaqueDelegate* delegate, void* data) {
  const auto* d = static_cast<const Delegate*>(data);
  if (d->magic != 0x5ab1e || TfLiteOpaqueDelegateGetData(delegate) != data) {
    TfLiteOpaqueContextReportError(context, "Prepare got another delegate's data");
    return kTfLiteError;
  }
  TfLiteIntArray* plan = nullptr;
  if (TfLiteOpaqueContextGetExecutionPlan(context, &plan) != kTfLiteOk) return kTfLiteError;
  std::vector<int> take;
  for (int i = 0; i < plan->size; ++i) {
    TfLiteOpaqueNode* node = nullptr;
    TfLiteRegistrationExternal* reg = nullptr;
    if (TfLiteOpaqueContextGetNodeAndRegistration(context, plan->data[i], &node, &reg) != kTfLiteOk) return kTfLiteError;
    const int op = TfLiteRegistrationExternalGetBuiltInCode(reg);
    if ((op != kOpAdd && op != kOpMul) || TfLiteOpaqueNodeNumberOfInputs(node) != 2) continue;
    // TfLiteAddParams and TfLiteMulParams start with the fused activation.
    const void* builtin = TfLiteOpaqueNodeGetBuiltinData(node);
    if (!builtin || *static_cast<const int*>(builtin) != 0) continue;
    const TfLiteOpaqueTensor* out = TfLiteOpaqueNodeGetOutput(context, node, 0);
    bool ok = TfLiteOpaqueTensorType(out) == kTfLiteFloat32;
    for (int k = 0; ok && k < 2; ++k) {
      const TfLiteOpaqueTensor* in = TfLiteOpaqueNodeGetInput(context, node, k);
      ok = in && TfLiteOpaqueTensorType(in) == kTfLiteFloat32 && same_shape(in, out);
    }
    if (ok) take.push_back(plan->data[i]);
  }
  if (d->mode == "twice" && !take.empty()) take.push_back(take.front());
  TfLiteRegistrationExternal* kernel = TfLiteRegistrationExternalCreate(kOpDelegate, "baton-test-stable", 1);
  TfLiteRegistrationExternalSetInit(kernel, kernel_init);
  TfLiteRegistrationExternalSetFree(kernel, kernel_free);
  TfLiteRegistrationExternalSetPrepare(kernel, kernel_prepare);
  TfLiteRegistrationExternalSetInvoke(kernel, kernel_invoke);
  if (d->mode == "null-registration") {
    TfLiteRegistrationExternalDelete(kernel);
    kernel = nullptr;
  }
  std::vector<int> array(take.size() + 1);
  array[0] = static_cast<int>(take.size());
  for (size_t i = 0; i < take.size(); ++i) array[i + 1] = take[i];
  // TfLiteIntArray is a size followed by its elements.
  return TfLiteOpaqueContextReplaceNodeSubsetsWithDelegateKernels(
      context, kernel, reinterpret_cast<const TfLiteIntArray*>(array.data()), delegate);
}

// The settings must read as a TFLiteSettings table with no field set: its vtable lists nothing.
[[maybe_unused]] bool empty_table(const void* settings) {
  if (!settings) return false;
  int32_t back = 0;
  std::memcpy(&back, settings, sizeof back);
  uint16_t vtable_size = 0;
  std::memcpy(&vtable_size, static_cast<const char*>(settings) - back, sizeof vtable_size);
  return vtable_size == 4;
}

TfLiteOpaqueDelegate* create(const void* settings) {
#ifdef BATON_TEST_CREATE_FAILS
  (void)settings;
  g_errno = 42;
  return nullptr;
#else
  if (!empty_table(settings)) {
    g_errno = 7;
    return nullptr;
  }
  auto* d = new Delegate;
  if (const char* mode = std::getenv("BATON_TEST_STABLE_MODE")) d->mode = mode;
  TfLiteOpaqueDelegateBuilder builder{};
  builder.data = d;
  builder.Prepare = delegate_prepare;
  d->opaque = TfLiteOpaqueDelegateCreate(&builder);
  return d->opaque;
#endif
}

void destroy(TfLiteOpaqueDelegate* delegate) {
  auto* d = static_cast<Delegate*>(TfLiteOpaqueDelegateGetData(delegate));
  TfLiteOpaqueDelegateDelete(delegate);
  delete d;
}

int get_errno(TfLiteOpaqueDelegate*) { return g_errno; }

const TfLiteOpaqueDelegatePlugin kPlugin = {create, destroy, get_errno};

}  // namespace

EXPORT const TfLiteStableDelegate TFL_TheStableDelegate = {
    BATON_TEST_ABI_VERSION,
#ifdef BATON_TEST_CREATE_FAILS
    "baton_test_stable_null",
#elif defined(BATON_TEST_ABI_MISMATCH)
    "baton_test_stable_v2",
#elif defined(BATON_TEST_OPERATOR_NAMES)
    "baton_test_stable_operator",
#else
    "baton_test_stable",
#endif
    "1.2.3", &kPlugin};

EXPORT int baton_test_stable_invokes(void) { return g_invokes; }
