// TfliteKernel: a baton partition run by a TFLite delegate's kernel registration (see tflite_graph.h).
#include <algorithm>
#include <cstdlib>

#include "tflite_graph.h"

namespace tflite_delegates {

namespace {

baton_status fail(const baton_host_api* api, baton_error* error, const std::string& what, std::string why) {
  api->error_set(error, (what + (why.empty() ? std::string(" (no reason reported)") : ": " + why)).c_str());
  return BATON_ERROR;
}

}  // namespace

baton_status TfliteKernel::create(TfliteGraph& graph, const baton_partition* partition, TfliteKernel** out,
                                  baton_error* error) {
  const baton_host_api* api = graph.api();
  std::unique_ptr<TfliteKernel> k(new TfliteKernel(graph));
  // TFLite's delegate node: the partition's nodes; as inputs every tensor they read that none of them
  // writes, in order of first use, constants included; as outputs the partition's boundary outputs.
  std::vector<int32_t> nodes, inputs, outputs;
  std::vector<int32_t> written;
  const int32_t count = api->partition_node_count(partition);
  for (int32_t i = 0; i < count; ++i) {
    const baton_node* n = api->partition_node(partition, i);
    nodes.push_back(api->node_index(n));
    for (int32_t o = 0; o < api->node_output_count(n); ++o) written.push_back(api->tensor_index(api->node_output(n, o)));
  }
  for (int32_t i = 0; i < count; ++i) {
    const baton_node* n = api->partition_node(partition, i);
    for (int32_t in = 0; in < api->node_input_count(n); ++in) {
      const baton_tensor* t = api->node_input(n, in);
      if (!t) continue;
      const int32_t index = api->tensor_index(t);
      if (std::find(written.begin(), written.end(), index) != written.end()) continue;
      if (std::find(inputs.begin(), inputs.end(), index) != inputs.end()) continue;
      inputs.push_back(index);
      if (!api->tensor_is_constant(t)) k->inputs_.push_back(index);
    }
  }
  for (int32_t o = 0; o < api->partition_output_count(partition); ++o) {
    outputs.push_back(api->tensor_index(api->partition_output(partition, o)));
  }
  k->outputs_.assign(outputs.begin(), outputs.end());
  k->params_.delegate = graph.kernel_delegate();
  k->params_.nodes_to_replace = int_array(nodes.data(), static_cast<int32_t>(nodes.size()));
  k->params_.input_tensors = int_array(inputs.data(), static_cast<int32_t>(inputs.size()));
  k->params_.output_tensors = int_array(outputs.data(), static_cast<int32_t>(outputs.size()));
  k->node_.inputs = int_array(inputs.data(), static_cast<int32_t>(inputs.size()));
  k->node_.outputs = int_array(outputs.data(), static_cast<int32_t>(outputs.size()));
  k->node_.intermediates = int_array(nullptr, 0);
  k->node_.temporaries = int_array(nullptr, 0);
  k->node_.delegate = graph.kernel_delegate();
  k->owned_ = {k->params_.nodes_to_replace, k->params_.input_tensors, k->params_.output_tensors, k->node_.inputs,
               k->node_.outputs, k->node_.intermediates, k->node_.temporaries};
  if (std::find(k->owned_.begin(), k->owned_.end(), nullptr) != k->owned_.end()) {
    api->error_set(error, "out of memory");
    return BATON_OUT_OF_MEMORY;
  }
  graph.take_reported();
  k->node_.builtin_data = &k->params_;  // TFLite gives a delegate node its params as builtin data too
  if (const TfLiteRegistrationExternal* opaque_kernel = graph.opaque_kernel()) {
    k->opaque_params_ = {opaque(graph.kernel_delegate()), TfLiteOpaqueDelegateGetData(opaque(graph.kernel_delegate())),
                         k->params_.nodes_to_replace, k->params_.input_tensors, k->params_.output_tensors};
    k->node_.builtin_data = &k->opaque_params_;
    if (opaque_kernel->init) {
      k->node_.user_data = opaque_kernel->init(opaque(graph.context()), reinterpret_cast<const char*>(&k->opaque_params_),
                                               0);
    }
  } else if (const TfLiteRegistration& kernel = graph.kernel(); kernel.init) {
    k->node_.user_data = kernel.init(graph.context(), reinterpret_cast<const char*>(&k->params_), 0);
  }
  k->initialised_ = true;
  const std::string reported = graph.take_reported();
  if (!reported.empty()) {
    // TFLite's init cannot fail; delegates report there and fail prepare. baton fails the partition now.
    *out = k.release();
    return fail(api, error, "the delegate kernel's init reported an error", reported);
  }
  *out = k.release();
  return BATON_OK;
}

TfliteKernel::~TfliteKernel() {
  const TfLiteRegistrationExternal* opaque_kernel = graph_.opaque_kernel();
  const TfLiteRegistration& kernel = graph_.kernel();
  if (initialised_ && opaque_kernel && opaque_kernel->free) {
    opaque_kernel->free(opaque(graph_.context()), node_.user_data);
  } else if (initialised_ && !opaque_kernel && kernel.free) {
    kernel.free(graph_.context(), node_.user_data);
  }
  for (void* p : owned_) std::free(p);
}

baton_status TfliteKernel::prepare(baton_error* error) {
  for (int index : inputs_) graph_.refresh_shape(index);
  graph_.take_reported();
  TfLiteStatus st = kTfLiteOk;
  if (const TfLiteRegistrationExternal* opaque_kernel = graph_.opaque_kernel()) {
    if (opaque_kernel->prepare) st = opaque_kernel->prepare(opaque(graph_.context()), opaque(&node_));
  } else if (const TfLiteRegistration& kernel = graph_.kernel(); kernel.prepare) {
    st = kernel.prepare(graph_.context(), &node_);
  }
  if (st != kTfLiteOk) return fail(graph_.api(), error, "the delegate kernel's prepare failed", graph_.take_reported());
  return BATON_OK;
}

// The hot path: point the boundary tensors at this invoke's host memory, then run the kernel.
baton_status TfliteKernel::invoke(baton_error* error) {
  const baton_host_api* api = graph_.api();
  for (int index : inputs_) {
    graph_.tensor(index).data.raw_const = static_cast<const char*>(api->tensor_data(graph_.handle(index)));
  }
  for (int index : outputs_) graph_.tensor(index).data.raw = static_cast<char*>(api->tensor_mutable_data(graph_.handle(index)));
  if (sync_inputs(error) != BATON_OK) return BATON_ERROR;
  const TfLiteRegistrationExternal* opaque_kernel = graph_.opaque_kernel();
  const TfLiteStatus st = opaque_kernel ? opaque_kernel->invoke(opaque(graph_.context()), opaque(&node_))
                                        : graph_.kernel().invoke(graph_.context(), &node_);
  if (st != kTfLiteOk) return fail(api, error, "the delegate kernel's invoke failed", graph_.take_reported());
  return sync_outputs(error);
}

// Host memory -> the delegate's buffer, for boundary inputs the delegate gave a buffer handle.
baton_status TfliteKernel::sync_inputs(baton_error* error) {
  TfLiteDelegate* delegate = graph_.kernel_delegate();
  for (int index : inputs_) {
    TfLiteTensor& t = graph_.tensor(index);
    if (t.buffer_handle == kTfLiteNullBufferHandle) continue;
    if (!delegate->CopyToBufferHandle) {
      const std::string why = "tensor " + std::to_string(index) + " has a buffer handle but the delegate has no "
                              "CopyToBufferHandle";
      graph_.api()->error_set(error, why.c_str());
      return BATON_ERROR;
    }
    if (delegate->CopyToBufferHandle(graph_.context(), delegate, t.buffer_handle, &t) != kTfLiteOk) {
      return fail(graph_.api(), error, "the delegate's CopyToBufferHandle failed for tensor " + std::to_string(index),
                  graph_.take_reported());
    }
  }
  return BATON_OK;
}

// The delegate's buffer -> host memory, for boundary outputs whose host copy is stale, so that the
// partitions and op packs that read them find this invoke's values.
baton_status TfliteKernel::sync_outputs(baton_error* error) {
  TfLiteDelegate* delegate = graph_.kernel_delegate();
  for (int index : outputs_) {
    TfLiteTensor& t = graph_.tensor(index);
    if (t.buffer_handle == kTfLiteNullBufferHandle || !t.data_is_stale) continue;
    if (!delegate->CopyFromBufferHandle) {
      const std::string why = "tensor " + std::to_string(index) + " is stale in a buffer of the delegate, which has no "
                              "CopyFromBufferHandle";
      graph_.api()->error_set(error, why.c_str());
      return BATON_ERROR;
    }
    if (delegate->CopyFromBufferHandle(graph_.context(), delegate, t.buffer_handle, &t) != kTfLiteOk) {
      return fail(graph_.api(), error, "the delegate's CopyFromBufferHandle failed for tensor " + std::to_string(index),
                  graph_.take_reported());
    }
    t.data_is_stale = false;
  }
  return BATON_OK;
}

}  // namespace tflite_delegates
