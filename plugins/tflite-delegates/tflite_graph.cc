#include "tflite_graph.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tflite_type_map.h"

namespace tflite_delegates {

namespace {

bool same_dims(const TfLiteIntArray* a, const int32_t* dims, int32_t rank) {
  return a && a->size == rank && (rank == 0 || std::memcmp(a->data, dims, sizeof(int) * rank) == 0);
}

}  // namespace

TfLiteIntArray* int_array(const int32_t* values, int32_t count) {
  auto* a = static_cast<TfLiteIntArray*>(std::malloc(sizeof(TfLiteIntArray) + sizeof(int) * (count > 0 ? count : 1)));
  if (!a) return nullptr;
  a->size = count;
  for (int32_t i = 0; i < count; ++i) a->data[i] = values[i];
  return a;
}

TfliteGraph::TfliteGraph(const baton_host_api* api, const baton_plugin_host* host, TfLiteDelegate* delegate,
                         const baton_graph* graph)
    : api_(api), host_(host), delegate_(delegate), graph_(graph) {
  const int count = api_->graph_tensor_count(graph_);
  tensors_.assign(count, TfLiteTensor{});
  handles_.assign(count, nullptr);
  for (int i = 0; i < count; ++i) {
    handles_[i] = api_->graph_tensor(graph_, i);
    fill_tensor(i);
  }
  build_nodes();
  // In common.h's order. NULL where TFLite's own interpreter has nothing either (TFLite Micro's
  // functions) or where baton offers nothing (a profiler).
  context_ = TfLiteContext{
      .tensors_size = tensors_.size(), .GetExecutionPlan = get_execution_plan, .tensors = tensors_.data(),
      .impl_ = this, .ResizeTensor = resize_tensor, .ReportError = report_error, .AddTensors = add_tensors,
      .GetNodeAndRegistration = get_node_and_registration,
      .ReplaceNodeSubsetsWithDelegateKernels = replace_node_subsets,
      .recommended_num_threads = api_->thread_count(host_), .GetExternalContext = get_external_context,
      .SetExternalContext = set_external_context, .allow_fp32_relax_to_fp16 = false, .profiler = nullptr,
      .AllocatePersistentBuffer = allocate_persistent_buffer, .AllocateBufferForEval = nullptr,
      .RequestScratchBufferInArena = not_in_tflite_interpreter, .GetScratchBuffer = nullptr,
      .ResizeTensorExplicit = resize_tensor_explicit, .PreviewDelegatePartitioning = preview_partitioning,
      .GetTensor = get_tensor, .GetEvalTensor = nullptr, .GetModelMetadata = no_metadata};
}

TfliteGraph::~TfliteGraph() {
  // Handles the delegate's kernels left on tensors are released as TFLite releases them with its
  // tensors. Only this delegate's kernels see this graph's tensors, so every handle is its own.
  for (TfLiteTensor& t : tensors_) {
    TfLiteDelegate* owner = kernel_delegate();
    if (t.buffer_handle != kTfLiteNullBufferHandle && owner->FreeBufferHandle) {
      owner->FreeBufferHandle(&context_, owner, &t.buffer_handle);
    }
    t.buffer_handle = kTfLiteNullBufferHandle;
  }
  for (TfLiteTensor& t : tensors_) {
    std::free(t.dims);
    std::free(const_cast<TfLiteIntArray*>(t.dims_signature));
  }
  for (NodeSlot& n : nodes_) {
    std::free(n.node.inputs);
    std::free(n.node.outputs);
    std::free(n.node.intermediates);
    std::free(n.node.temporaries);
  }
  std::free(plan_);
  for (void* p : owned_) std::free(p);
  free_preview();
}

TfliteGraph* TfliteGraph::self(const TfLiteContext* context) { return static_cast<TfliteGraph*>(context->impl_); }

void TfliteGraph::fill_tensor(int i) {
  TfLiteTensor& t = tensors_[i];
  baton_tensor* h = handles_[i];
  const int32_t* dims = nullptr;
  const int32_t rank = api_->tensor_shape(h, &dims);
  t.type = tflite_type(api_->tensor_type(h));
  t.dims = int_array(dims, rank);
  t.dims_signature = int_array(dims, rank);
  t.bytes = api_->tensor_byte_size(h);
  t.name = api_->tensor_name(h);
  t.buffer_handle = kTfLiteNullBufferHandle;
  if (api_->tensor_is_constant(h)) {
    t.allocation_type = kTfLiteMmapRo;
    t.data.raw_const = static_cast<const char*>(api_->tensor_data(h));
  } else {
    t.allocation_type = kTfLiteArenaRw;
  }
  baton_quantization q{};
  q.struct_size = sizeof(q);
  api_->tensor_quantization(h, &q);
  if (q.scale_count > 0 && q.scales) {
    t.params.scale = q.scales[0];
    t.params.zero_point = q.zero_points ? static_cast<int32_t>(q.zero_points[0]) : 0;
    auto* affine = static_cast<TfLiteAffineQuantization*>(std::calloc(1, sizeof(TfLiteAffineQuantization)));
    auto* scales = static_cast<TfLiteFloatArray*>(std::malloc(sizeof(TfLiteFloatArray) + sizeof(float) * q.scale_count));
    std::vector<int32_t> zeros(q.scale_count, 0);
    for (int32_t k = 0; q.zero_points && k < q.scale_count; ++k) zeros[k] = static_cast<int32_t>(q.zero_points[k]);
    TfLiteIntArray* zero_points = int_array(zeros.data(), q.scale_count);
    owned_.insert(owned_.end(), {affine, scales, zero_points});
    if (affine && scales && zero_points) {
      scales->size = q.scale_count;
      std::memcpy(scales->data, q.scales, sizeof(float) * q.scale_count);
      affine->scale = scales;
      affine->zero_point = zero_points;
      affine->quantized_dimension = q.quantized_dimension;
      t.quantization.type = kTfLiteAffineQuantization;
      t.quantization.params = affine;
    }
  }
}

void TfliteGraph::build_nodes() {
  const int count = api_->graph_node_count(graph_);
  nodes_.resize(count);
  in_plan_.assign(count, 0);
  replaced_.assign(count, 0);
  for (int i = 0; i < count; ++i) {
    const baton_node* n = api_->graph_node(graph_, i);
    if (!n) continue;
    NodeSlot& slot = nodes_[i];
    const int32_t code = api_->node_builtin_code(n);
    const baton_builtin_options* options = api_->node_builtin_options(n);
    if (code != BATON_OP_CUSTOM && !builtin_data_for(code, *options, &slot.data)) continue;
    std::vector<int32_t> ins(api_->node_input_count(n)), outs(api_->node_output_count(n));
    for (size_t k = 0; k < ins.size(); ++k) {
      const baton_tensor* t = api_->node_input(n, static_cast<int32_t>(k));
      ins[k] = t ? api_->tensor_index(t) : -1;  // kTfLiteOptionalTensor
    }
    for (size_t k = 0; k < outs.size(); ++k) outs[k] = api_->tensor_index(api_->node_output(n, static_cast<int32_t>(k)));
    slot.node.inputs = int_array(ins.data(), static_cast<int32_t>(ins.size()));
    slot.node.outputs = int_array(outs.data(), static_cast<int32_t>(outs.size()));
    slot.node.intermediates = int_array(nullptr, 0);
    slot.node.temporaries = int_array(nullptr, 0);
    if (code == BATON_OP_CUSTOM) {
      size_t size = 0;
      const uint8_t* bytes = api_->node_custom_options(n, &size);
      slot.node.custom_initial_data = bytes;
      slot.node.custom_initial_data_size = static_cast<int>(size);
      slot.registration.custom_name = api_->node_custom_name(n);
    } else {
      slot.node.builtin_data = slot.data.bytes;
    }
    slot.registration.builtin_code = code;
    slot.registration.version = api_->node_version(n);
    slot.present = true;
  }
}

void TfliteGraph::refresh_shape(int index) {
  TfLiteTensor& t = tensors_[index];
  const int32_t* dims = nullptr;
  const int32_t rank = api_->tensor_shape(handles_[index], &dims);
  if (!same_dims(t.dims, dims, rank)) {
    std::free(t.dims);
    t.dims = int_array(dims, rank);
  }
  t.bytes = api_->tensor_byte_size(handles_[index]);
}

TfLiteRegistrationExternal* TfliteGraph::node_registration(int index) {
  if (index < 0 || static_cast<size_t>(index) >= nodes_.size() || !nodes_[index].present) return nullptr;
  if (node_registrations_.empty()) node_registrations_.resize(nodes_.size());
  auto& r = node_registrations_[index];
  if (!r) {
    const TfLiteRegistration& from = nodes_[index].registration;
    r = std::make_unique<TfLiteRegistrationExternal>();
    r->builtin_code = from.builtin_code;
    r->custom_name = from.custom_name;
    r->version = from.version;
  }
  return r.get();
}

std::string TfliteGraph::take_reported() {
  std::string out = problem_.empty() ? reported_ : problem_ + (reported_.empty() ? "" : "; " + reported_);
  problem_.clear();
  reported_.clear();
  return out;
}

baton_status TfliteGraph::select(const int32_t* free_nodes, int32_t count, uint8_t* selected, baton_error* error) {
  std::vector<int32_t> plan;
  for (int32_t i = 0; i < count; ++i) {
    const int32_t n = free_nodes[i];
    if (n >= 0 && static_cast<size_t>(n) < nodes_.size() && nodes_[n].present) {
      in_plan_[n] = 1;
      plan.push_back(n);
    }
  }
  plan_ = int_array(plan.data(), static_cast<int32_t>(plan.size()));
  const TfLiteStatus st = delegate_->Prepare ? delegate_->Prepare(&context_, delegate_) : kTfLiteOk;
  if (st != kTfLiteOk || !problem_.empty()) {
    const std::string why = take_reported();
    api_->error_set(error, ("the delegate's Prepare failed: " + (why.empty() ? "no reason given" : why)).c_str());
    return BATON_ERROR;
  }
  take_reported();
  for (int32_t i = 0; i < count; ++i) {
    const int32_t n = free_nodes[i];
    selected[i] = n >= 0 && static_cast<size_t>(n) < nodes_.size() && replaced_[n];
  }
  api_->error_set(error, "not claimed by the TFLite delegate");
  return BATON_OK;
}

TfLiteStatus TfliteGraph::get_execution_plan(TfLiteContext* context, TfLiteIntArray** plan) {
  *plan = self(context)->plan_;
  return kTfLiteOk;
}

TfLiteStatus TfliteGraph::get_node_and_registration(TfLiteContext* context, int index, TfLiteNode** node,
                                                    TfLiteRegistration** registration) {
  TfliteGraph* g = self(context);
  if (index < 0 || static_cast<size_t>(index) >= g->nodes_.size() || !g->nodes_[index].present) {
    report_error(context, "GetNodeAndRegistration: no node %d in this graph", index);
    return kTfLiteError;
  }
  *node = &g->nodes_[index].node;
  *registration = &g->nodes_[index].registration;
  return kTfLiteOk;
}

// TFLite trusts the delegate here; baton checks each node and refuses the whole call, naming the node.
TfLiteStatus TfliteGraph::replace_node_subsets(TfLiteContext* context, TfLiteRegistration registration,
                                               const TfLiteIntArray* nodes, TfLiteDelegate* delegate) {
  TfliteGraph* g = self(context);
  auto refuse = [&](const std::string& why) {
    g->problem_ = "ReplaceNodeSubsetsWithDelegateKernels: " + why;
    return kTfLiteError;
  };
  if (g->has_kernel_) return refuse("called a second time in one Prepare (baton hosts one kernel per delegate)");
  if (!delegate) return refuse("no delegate (NULL) to own the kernel");
  if (!registration.invoke) return refuse("the kernel registration has no invoke function");
  if (!nodes) return refuse("no node list");
  std::vector<uint8_t> seen(g->nodes_.size(), 0);
  for (int k = 0; k < nodes->size; ++k) {
    const int n = nodes->data[k];
    if (n < 0 || static_cast<size_t>(n) >= g->nodes_.size() || !g->nodes_[n].present) {
      return refuse("node " + std::to_string(n) + " is not a node of this graph");
    }
    if (!g->in_plan_[n]) {
      return refuse("node " + std::to_string(n) + " is not in the execution plan it was given (another delegate "
                    "holds it, or it was not offered to this one)");
    }
    if (seen[n]) return refuse("node " + std::to_string(n) + " is listed twice");
    seen[n] = 1;
  }
  g->kernel_ = registration;
  g->kernel_delegate_ = delegate;
  g->has_kernel_ = true;
  g->replaced_ = std::move(seen);
  return kTfLiteOk;
}

TfLiteStatus TfliteGraph::resize_tensor(TfLiteContext* context, TfLiteTensor* tensor, TfLiteIntArray* dims) {
  TfliteGraph* g = self(context);
  const ptrdiff_t index = tensor - g->tensors_.data();
  if (!dims) return kTfLiteError;
  if (index < 0 || static_cast<size_t>(index) >= g->tensors_.size() || !g->handles_[index]) {
    std::free(dims);  // ResizeTensor owns the array it is given, even when it fails
    report_error(context, "ResizeTensor: not a tensor of this graph");
    return kTfLiteError;
  }
  baton_error* error = nullptr;  // the host's message comes back through its status only
  if (g->api_->tensor_set_shape(g->handles_[index], dims->size, dims->data, error) != BATON_OK) {
    report_error(context, "ResizeTensor: tensor %d cannot be resized here (only a partition's outputs, during "
                 "prepare)", static_cast<int>(index));
    std::free(dims);
    return kTfLiteError;
  }
  std::free(tensor->dims);
  tensor->dims = dims;
  tensor->bytes = g->api_->tensor_byte_size(g->handles_[index]);
  return kTfLiteOk;
}

TfLiteStatus TfliteGraph::resize_tensor_explicit(TfLiteContext* context, TfLiteTensor* tensor, int rank,
                                                 const int* dims) {
  if (rank < 0 || (rank > 0 && !dims)) return kTfLiteError;
  return resize_tensor(context, tensor, int_array(dims, rank));
}

void TfliteGraph::report_error(TfLiteContext* context, const char* format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format ? format : "", args);
  va_end(args);
  TfliteGraph* g = self(context);
  if (!g->reported_.empty()) g->reported_ += "; ";
  g->reported_ += buffer;
  g->api_->log(g->host_, BATON_LOG_DEBUG, buffer);
}

// Tensors a delegate adds are its own: they get no host memory (their data stays NULL unless the
// delegate sets it), like tensors inside a partition.
TfLiteStatus TfliteGraph::add_tensors(TfLiteContext* context, int count, int* first) {
  TfliteGraph* g = self(context);
  if (count < 0 || count > (1 << 20)) return kTfLiteError;
  if (first) *first = static_cast<int>(g->tensors_.size());
  for (int i = 0; i < count; ++i) {
    TfLiteTensor t{};
    t.buffer_handle = kTfLiteNullBufferHandle;
    t.allocation_type = kTfLiteDynamic;
    t.dims = int_array(nullptr, 0);
    g->tensors_.push_back(t);
    g->handles_.push_back(nullptr);
  }
  g->context_.tensors = g->tensors_.data();
  g->context_.tensors_size = g->tensors_.size();
  return kTfLiteOk;
}

TfLiteExternalContext* TfliteGraph::get_external_context(TfLiteContext* context, TfLiteExternalContextType type) {
  if (type < 0 || type >= kTfLiteMaxExternalContexts) return nullptr;
  return self(context)->external_[type];
}

void TfliteGraph::set_external_context(TfLiteContext* context, TfLiteExternalContextType type,
                                       TfLiteExternalContext* value) {
  if (type >= 0 && type < kTfLiteMaxExternalContexts) self(context)->external_[type] = value;
}

void* TfliteGraph::allocate_persistent_buffer(TfLiteContext* context, size_t bytes) {
  void* p = std::calloc(1, bytes ? bytes : 1);
  if (p) self(context)->owned_.push_back(p);
  return p;
}

TfLiteTensor* TfliteGraph::get_tensor(const TfLiteContext* context, int index) {
  TfliteGraph* g = self(context);
  return index >= 0 && static_cast<size_t>(index) < g->tensors_.size() ? &g->tensors_[index] : nullptr;
}

TfLiteStatus TfliteGraph::not_in_tflite_interpreter(TfLiteContext* context, size_t, int*) {
  report_error(context, "RequestScratchBufferInArena is for TFLite Micro; TFLite's interpreter has none either");
  return kTfLiteError;
}

TfLiteStatus TfliteGraph::no_metadata(const TfLiteContext*, const char*, const char**, size_t*) {
  return kTfLiteError;  // as TFLite answers for a name the model's metadata lacks
}

}  // namespace tflite_delegates
