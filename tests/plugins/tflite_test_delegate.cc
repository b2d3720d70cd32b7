// A TFLite external delegate of ours, written against TFLite 2.9's common.h alone, for the tests of the
// tflite-delegates loader. It takes float32 ADD and MUL nodes without a fused activation whose inputs
// have the output's shape, and computes them with its own code (its own buffers for the tensors inside
// a partition). Its option `mode` makes it misbehave the ways a real delegate might: twice, unknown,
// held (ReplaceNodeSubsetsWithDelegateKernels with a node listed twice, a node that does not exist, a
// node not in its execution plan), null-registration, prepare-fails, invoke-fails, create-fails,
// long-report (its Prepare fails with a 600-character reason); and
// `preview`: it asks PreviewDelegatePartitioning how its nodes group, expects two partitions, and
// replaces only the larger one (as TFLite's GPU delegate keeps its largest partitions); segv-select,
// abort-prepare, segv-invoke, hang-invoke: it dies (or never answers) in its Prepare over the graph, its
// kernel's prepare or its kernel's invoke, as a broken vendor delegate would (for isolation); `buffer-handles`:
// it keeps its partitions' boundary tensors in buffers of its own (buffer handles, as a GPU delegate
// keeps them on the device), reads its inputs only from those buffers (filled by CopyToBufferHandle),
// writes its outputs only there and marks them stale, so the host must call CopyFromBufferHandle. Its
// option `count_file` names a file it appends a line to at each kernel invoke.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tensorflow/lite/c/common.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// TFLite's BuiltinOperator codes (builtin_ops.h is not among the pinned headers).
constexpr int kOpAdd = 0, kOpMul = 18, kOpDelegate = 51;

struct Delegate {
  TfLiteDelegate base{};
  std::string mode;
  std::string count_file;  // option count_file: each kernel invoke appends a line there
  std::vector<std::vector<float>> buffers;  // indexed by buffer handle
};

int g_copies_from = 0, g_copies_to = 0, g_handles_freed = 0;  // for the tests

struct Step {
  int op;
  int a, b, out;
  size_t count = 0;  // elements, set at prepare
};

struct Kernel {
  std::string mode;
  Delegate* delegate = nullptr;
  std::vector<int> boundary_inputs;  // non-constant
  std::vector<Step> steps;
  std::vector<int> boundary_outputs;
  std::map<int, std::vector<float>> own;  // tensors inside the partition
  std::map<int, std::vector<int>> shapes;  // their shapes (TFLite keeps no shape for them)
};

bool same_dims(const TfLiteIntArray* a, const TfLiteIntArray* b) {
  if (a->size != b->size) return false;
  for (int i = 0; i < a->size; ++i) {
    if (a->data[i] != b->data[i]) return false;
  }
  return true;
}

void* kernel_init(TfLiteContext* context, const char* buffer, size_t) {
  const auto* params = reinterpret_cast<const TfLiteDelegateParams*>(buffer);
  auto* k = new Kernel;
  k->delegate = static_cast<Delegate*>(params->delegate->data_);
  k->mode = k->delegate->mode;
  for (int i = 0; i < params->input_tensors->size; ++i) {
    const int t = params->input_tensors->data[i];
    if (context->tensors[t].allocation_type != kTfLiteMmapRo) k->boundary_inputs.push_back(t);
  }
  for (int i = 0; i < params->nodes_to_replace->size; ++i) {
    TfLiteNode* node = nullptr;
    TfLiteRegistration* reg = nullptr;
    context->GetNodeAndRegistration(context, params->nodes_to_replace->data[i], &node, &reg);
    k->steps.push_back({reg->builtin_code, node->inputs->data[0], node->inputs->data[1], node->outputs->data[0]});
  }
  for (int i = 0; i < params->output_tensors->size; ++i) k->boundary_outputs.push_back(params->output_tensors->data[i]);
  return k;
}

void kernel_free(TfLiteContext*, void* data) { delete static_cast<Kernel*>(data); }

TfLiteStatus kernel_prepare(TfLiteContext* context, TfLiteNode* node) {
  auto* k = static_cast<Kernel*>(node->user_data);
  if (k->mode == "prepare-fails") {
    context->ReportError(context, "simulated prepare failure in %s", "the test delegate");
    return kTfLiteError;
  }
  if (k->mode == "abort-prepare") std::abort();
  // Shapes flow through the steps, as after an input resize: inputs' from the context (the host keeps
  // them current), inner tensors' from the kernel itself; outputs are resized through the context.
  auto shape_of = [&](int t) {
    auto it = k->shapes.find(t);
    if (it != k->shapes.end()) return it->second;
    const TfLiteIntArray* d = context->tensors[t].dims;
    return std::vector<int>(d->data, d->data + d->size);
  };
  k->shapes.clear();
  if (k->mode == "buffer-handles") {
    std::vector<int> boundary = k->boundary_inputs;
    boundary.insert(boundary.end(), k->boundary_outputs.begin(), k->boundary_outputs.end());
    for (int t : boundary) {
      TfLiteTensor& tensor = context->tensors[t];
      if (tensor.buffer_handle != kTfLiteNullBufferHandle) continue;
      tensor.buffer_handle = static_cast<int>(k->delegate->buffers.size());
      tensor.delegate = &k->delegate->base;
      k->delegate->buffers.emplace_back(tensor.bytes / sizeof(float), 0.0f);
    }
  }
  for (Step& s : k->steps) {
    const std::vector<int> shape = shape_of(s.a);
    if (shape != shape_of(s.b)) {
      context->ReportError(context, "the test delegate needs equal input shapes");
      return kTfLiteError;
    }
    s.count = 1;
    for (int d : shape) s.count *= static_cast<size_t>(d);
    bool boundary = false;
    for (int o : k->boundary_outputs) boundary |= o == s.out;
    if (!boundary) {
      k->shapes[s.out] = shape;
      k->own[s.out].assign(s.count, 0.0f);
    } else if (shape != shape_of(s.out)) {
      TfLiteIntArray* dims = static_cast<TfLiteIntArray*>(std::malloc(sizeof(TfLiteIntArray) + sizeof(int) * (shape.size() + 1)));
      dims->size = static_cast<int>(shape.size());
      for (size_t i = 0; i < shape.size(); ++i) dims->data[i] = shape[i];
      if (context->ResizeTensor(context, &context->tensors[s.out], dims) != kTfLiteOk) return kTfLiteError;
    }
  }
  return kTfLiteOk;
}

int g_invokes = 0;  // kernel invokes that computed, for the tests

TfLiteStatus kernel_invoke(TfLiteContext* context, TfLiteNode* node) {
  auto* k = static_cast<Kernel*>(node->user_data);
  if (k->mode == "invoke-fails") {
    context->ReportError(context, "simulated invoke failure");
    return kTfLiteError;
  }
  if (k->mode == "segv-invoke") std::raise(SIGSEGV);
  if (k->mode == "hang-invoke") {
    for (;;) pause();
  }
  auto data = [&](int t) -> float* {
    auto it = k->own.find(t);
    if (it != k->own.end()) return it->second.data();
    const TfLiteTensor& tensor = context->tensors[t];
    if (k->mode == "buffer-handles" && tensor.buffer_handle != kTfLiteNullBufferHandle) {
      return k->delegate->buffers[tensor.buffer_handle].data();  // never the host's memory
    }
    return tensor.data.f;
  };
  for (const Step& s : k->steps) {
    const float* a = data(s.a);
    const float* b = data(s.b);
    float* out = data(s.out);
    for (size_t i = 0; i < s.count; ++i) out[i] = s.op == kOpAdd ? a[i] + b[i] : a[i] * b[i];
  }
  if (k->mode == "buffer-handles") {
    for (int t : k->boundary_outputs) context->tensors[t].data_is_stale = true;
  }
  ++g_invokes;
  if (!k->delegate->count_file.empty()) {  // for a test in another process (a Node program)
    if (FILE* f = std::fopen(k->delegate->count_file.c_str(), "a")) {
      std::fputs("invoke\n", f);
      std::fclose(f);
    }
  }
  return kTfLiteOk;
}

TfLiteStatus delegate_prepare(TfLiteContext* context, TfLiteDelegate* delegate) {
  const std::string& mode = static_cast<Delegate*>(delegate->data_)->mode;
  if (mode == "segv-select") std::raise(SIGSEGV);
  if (mode == "long-report") {  // a reason as long as a vendor's diagnostics can be
    context->ReportError(context, "the device refused the graph: %s", std::string(600, 'x').c_str());
    return kTfLiteError;
  }
  TfLiteIntArray* plan = nullptr;
  if (context->GetExecutionPlan(context, &plan) != kTfLiteOk) return kTfLiteError;
  std::vector<int> take;
  std::vector<bool> in_plan;
  for (int i = 0; i < plan->size; ++i) {
    const int index = plan->data[i];
    if (index >= static_cast<int>(in_plan.size())) in_plan.resize(index + 1, false);
    in_plan[index] = true;
    TfLiteNode* node = nullptr;
    TfLiteRegistration* reg = nullptr;
    if (context->GetNodeAndRegistration(context, index, &node, &reg) != kTfLiteOk) return kTfLiteError;
    if (reg->builtin_code != kOpAdd && reg->builtin_code != kOpMul) continue;
    // TfLiteAddParams and TfLiteMulParams start with the fused activation.
    if (!node->builtin_data || *static_cast<const int*>(node->builtin_data) != 0) continue;
    const TfLiteTensor& out = context->tensors[node->outputs->data[0]];
    bool ok = node->inputs->size == 2 && out.type == kTfLiteFloat32;
    for (int k = 0; ok && k < 2; ++k) {
      const int t = node->inputs->data[k];
      ok = t >= 0 && context->tensors[t].type == kTfLiteFloat32 && same_dims(context->tensors[t].dims, out.dims);
    }
    if (ok) take.push_back(index);
  }
  if (mode == "preview") {
    TfLiteIntArray* wanted = static_cast<TfLiteIntArray*>(std::malloc(sizeof(TfLiteIntArray) + sizeof(int) * (take.size() + 1)));
    wanted->size = static_cast<int>(take.size());
    for (size_t i = 0; i < take.size(); ++i) wanted->data[i] = take[i];
    TfLiteDelegateParams* parts = nullptr;
    int count = 0;
    const TfLiteStatus st = context->PreviewDelegatePartitioning(context, wanted, &parts, &count);
    std::free(wanted);
    if (st != kTfLiteOk) return st;
    if (count != 2) {
      context->ReportError(context, "expected 2 partitions from the preview, got %d", count);
      return kTfLiteError;
    }
    const TfLiteDelegateParams& largest = parts[parts[1].nodes_to_replace->size > parts[0].nodes_to_replace->size];
    take.assign(largest.nodes_to_replace->data, largest.nodes_to_replace->data + largest.nodes_to_replace->size);
  }
  if (mode == "twice" && !take.empty()) take.push_back(take.front());
  if (mode == "unknown") take.push_back(100000);
  if (mode == "held") {
    // A node that runs but is not in the plan: another delegate of the chain holds it.
    for (int index = 0; index < static_cast<int>(in_plan.size()) + 64; ++index) {
      TfLiteNode* node = nullptr;
      TfLiteRegistration* reg = nullptr;
      const bool listed = index < static_cast<int>(in_plan.size()) && in_plan[index];
      if (!listed && context->GetNodeAndRegistration(context, index, &node, &reg) == kTfLiteOk) {
        take.push_back(index);
        break;
      }
    }
  }
  TfLiteRegistration r{};
  if (mode != "null-registration") {
    r.init = kernel_init;
    r.free = kernel_free;
    r.prepare = kernel_prepare;
    r.invoke = kernel_invoke;
  }
  r.builtin_code = kOpDelegate;
  r.custom_name = "baton-test-tflite-delegate";
  r.version = 1;
  TfLiteIntArray* nodes = static_cast<TfLiteIntArray*>(std::malloc(sizeof(TfLiteIntArray) + sizeof(int) * (take.size() + 1)));
  nodes->size = static_cast<int>(take.size());
  for (size_t i = 0; i < take.size(); ++i) nodes->data[i] = take[i];
  const TfLiteStatus st = context->ReplaceNodeSubsetsWithDelegateKernels(context, r, nodes, delegate);
  std::free(nodes);
  return st;
}

TfLiteStatus copy_from_buffer_handle(TfLiteContext*, TfLiteDelegate* delegate, TfLiteBufferHandle handle,
                                     TfLiteTensor* tensor) {
  auto* d = static_cast<Delegate*>(delegate->data_);
  if (handle < 0 || static_cast<size_t>(handle) >= d->buffers.size() || !tensor->data.raw) return kTfLiteError;
  std::memcpy(tensor->data.raw, d->buffers[handle].data(), tensor->bytes);
  ++g_copies_from;
  return kTfLiteOk;
}

TfLiteStatus copy_to_buffer_handle(TfLiteContext*, TfLiteDelegate* delegate, TfLiteBufferHandle handle,
                                   TfLiteTensor* tensor) {
  auto* d = static_cast<Delegate*>(delegate->data_);
  if (handle < 0 || static_cast<size_t>(handle) >= d->buffers.size() || !tensor->data.raw) return kTfLiteError;
  d->buffers[handle].resize(tensor->bytes / sizeof(float));
  std::memcpy(d->buffers[handle].data(), tensor->data.raw, tensor->bytes);
  ++g_copies_to;
  return kTfLiteOk;
}

void free_buffer_handle(TfLiteContext*, TfLiteDelegate*, TfLiteBufferHandle* handle) {
  *handle = kTfLiteNullBufferHandle;
  ++g_handles_freed;
}

}  // namespace

EXPORT TfLiteDelegate* tflite_plugin_create_delegate(char** keys, char** values, size_t count,
                                                     void (*report_error)(const char*)) {
  auto* d = new Delegate;
  for (size_t i = 0; i < count; ++i) {
    if (std::strcmp(keys[i], "mode") == 0) d->mode = values[i];
    if (std::strcmp(keys[i], "count_file") == 0) d->count_file = values[i];
  }
  if (d->mode == "create-fails") {
    delete d;
    report_error("simulated create failure");
    return nullptr;
  }
  d->base.data_ = d;
  d->base.Prepare = delegate_prepare;
  d->base.flags = kTfLiteDelegateFlagsNone;
  if (d->mode == "buffer-handles") {
    d->base.CopyFromBufferHandle = copy_from_buffer_handle;
    d->base.CopyToBufferHandle = copy_to_buffer_handle;
    d->base.FreeBufferHandle = free_buffer_handle;
  }
  return &d->base;
}

EXPORT void tflite_plugin_destroy_delegate(TfLiteDelegate* delegate) {
  delete static_cast<Delegate*>(delegate->data_);
}

EXPORT int baton_test_tflite_invokes(void) { return g_invokes; }
EXPORT int baton_test_tflite_copies_from(void) { return g_copies_from; }
EXPORT int baton_test_tflite_copies_to(void) { return g_copies_to; }
EXPORT int baton_test_tflite_handles_freed(void) { return g_handles_freed; }
