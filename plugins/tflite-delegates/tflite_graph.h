// What a TFLite delegate sees when baton hosts it: a TfLiteContext over one baton graph, with TFLite
// 2.9's struct layouts (tensorflow/lite/c/common.h of the pinned headers). One TfliteGraph lives for one
// partitioning round of one delegate: select() runs the delegate's Prepare over the nodes still free,
// and its ReplaceNodeSubsetsWithDelegateKernels call says which nodes it takes; the host then groups them
// into partitions, and each partition runs the delegate's kernel (TfliteKernel) over this context.
//
// Tensors: the `tensors` array holds every tensor of the graph, with its type, shape, quantization and
// name. Constants point into the read-only model (kTfLiteMmapRo); a partition refreshes the data
// pointers of the tensors that cross its boundary before each invoke (the host's memory for that
// invoke); tensors inside a partition have no host memory, as in TFLite.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "tensorflow/lite/c/common.h"
#include "tflite_opaque_internal.h"
#include "tflite_params.h"

namespace tflite_delegates {

// malloc-based TfLiteIntArray, as TFLite allocates them (a delegate may keep or free one it is given
// through ResizeTensor's contract).
TfLiteIntArray* int_array(const int32_t* values, int32_t count);

class TfliteGraph {
 public:
  TfliteGraph(const baton_host_api* api, const baton_plugin_host* host, TfLiteDelegate* delegate,
              const baton_graph* graph);
  ~TfliteGraph();
  TfliteGraph(const TfliteGraph&) = delete;
  TfliteGraph& operator=(const TfliteGraph&) = delete;

  // Runs the delegate's Prepare with `free_nodes` as the execution plan; selected[i] = 1 for each node
  // it replaced. A bad ReplaceNodeSubsetsWithDelegateKernels call or a failing Prepare fails the round.
  baton_status select(const int32_t* free_nodes, int32_t count, uint8_t* selected, baton_error* error);

  const baton_host_api* api() const { return api_; }
  TfLiteContext* context() { return &context_; }
  // The delegate being prepared, and the one its Prepare named to ReplaceNodeSubsetsWithDelegateKernels,
  // which owns the kernel (its params' and node's delegate, the one whose buffer handles the tensors
  // hold). They differ for a wrapper, such as TFLite's external-delegate wrapper, whose Prepare runs the
  // inner delegate's Prepare with the inner delegate; TFLite 2.9 takes any delegate there.
  TfLiteDelegate* delegate() const { return delegate_; }
  TfLiteDelegate* kernel_delegate() const { return kernel_delegate_ ? kernel_delegate_ : delegate_; }
  const TfLiteRegistration& kernel() const { return kernel_; }
  TfLiteTensor& tensor(int index) { return tensors_[index]; }
  baton_tensor* handle(int index) const { return handles_[index]; }
  // Messages the delegate reported since the last call, for the failing call's error.
  std::string take_reported();
  // Brings a tensor's dims and bytes to the host's current shape (after an input resize).
  void refresh_shape(int index);

  // For the opaque API (tflite_opaque.cc): the graph behind a context, the number of nodes, why a call
  // was refused (fails the delegate's Prepare with that reason), the registration TFLite's opaque
  // GetNodeAndRegistration gives for a node (owned by the graph), and the opaque kernel registration
  // a stable delegate handed to ReplaceNodeSubsetsWithDelegateKernels (owned by the graph from then on,
  // as TFLite owns it; null for a delegate of the TfLiteContext API).
  static TfliteGraph* of(const TfLiteContext* context) { return self(context); }
  size_t node_count() const { return nodes_.size(); }
  void refuse(const std::string& why) { problem_ = why; }
  TfLiteRegistrationExternal* node_registration(int index);
  void adopt_opaque_kernel(TfLiteRegistrationExternal* registration) { opaque_kernel_.reset(registration); }
  const TfLiteRegistrationExternal* opaque_kernel() const { return opaque_kernel_.get(); }

 private:
  static TfliteGraph* self(const TfLiteContext* context);
  void fill_tensor(int index);
  void build_nodes();
  void free_preview();
  // The context's functions.
  static TfLiteStatus get_execution_plan(TfLiteContext* context, TfLiteIntArray** plan);
  static TfLiteStatus get_node_and_registration(TfLiteContext* context, int index, TfLiteNode** node,
                                                TfLiteRegistration** registration);
  static TfLiteStatus replace_node_subsets(TfLiteContext* context, TfLiteRegistration registration,
                                           const TfLiteIntArray* nodes, TfLiteDelegate* delegate);
  static TfLiteStatus resize_tensor(TfLiteContext* context, TfLiteTensor* tensor, TfLiteIntArray* dims);
  static TfLiteStatus resize_tensor_explicit(TfLiteContext* context, TfLiteTensor* tensor, int rank,
                                             const int* dims);
  static void report_error(TfLiteContext* context, const char* format, ...);
  static TfLiteStatus add_tensors(TfLiteContext* context, int count, int* first);
  static TfLiteExternalContext* get_external_context(TfLiteContext* context, TfLiteExternalContextType type);
  static void set_external_context(TfLiteContext* context, TfLiteExternalContextType type,
                                   TfLiteExternalContext* value);
  static void* allocate_persistent_buffer(TfLiteContext* context, size_t bytes);
  static TfLiteTensor* get_tensor(const TfLiteContext* context, int index);
  static TfLiteStatus preview_partitioning(TfLiteContext* context, const TfLiteIntArray* nodes,
                                           TfLiteDelegateParams** params, int* count);
  static TfLiteStatus not_in_tflite_interpreter(TfLiteContext* context, size_t bytes, int* index);
  static TfLiteStatus no_metadata(const TfLiteContext* context, const char* name, const char** ptr,
                                  size_t* bytes);

  struct NodeSlot {
    bool present = false;  // runs, and its TFLite parameters could be expressed
    TfLiteNode node{};
    TfLiteRegistration registration{};
    BuiltinData data{};
  };

  const baton_host_api* api_;
  const baton_plugin_host* host_;
  TfLiteDelegate* delegate_;
  TfLiteDelegate* kernel_delegate_ = nullptr;
  const baton_graph* graph_;
  TfLiteContext context_{};
  std::vector<TfLiteTensor> tensors_;
  std::vector<baton_tensor*> handles_;  // nullptr for tensors the delegate added
  std::vector<NodeSlot> nodes_;
  std::vector<uint8_t> in_plan_;    // per node: offered to the delegate this round
  std::vector<uint8_t> replaced_;   // per node: taken by ReplaceNodeSubsetsWithDelegateKernels
  TfLiteIntArray* plan_ = nullptr;
  TfLiteRegistration kernel_{};
  bool has_kernel_ = false;
  std::string problem_;   // why a context call was refused, for select's error
  std::string reported_;  // ReportError text
  TfLiteExternalContext* external_[kTfLiteMaxExternalContexts] = {};
  std::vector<void*> owned_;  // malloc'd blocks freed with the graph
  // PreviewDelegatePartitioning's answer, owned until the next call or the graph's end (as in TFLite).
  std::vector<TfLiteDelegateParams> preview_;
  std::vector<void*> preview_owned_;
  std::vector<std::unique_ptr<TfLiteRegistrationExternal>> node_registrations_;  // per node, made on demand
  std::unique_ptr<TfLiteRegistrationExternal> opaque_kernel_;
};

// One partition run by the delegate's kernel registration: init at partition_init, prepare, invoke,
// free. Holds the delegate node TFLite would have made: the partition's inputs (constants included,
// as TFLite lists them), outputs, and the kernel's user data. A kernel registered through the opaque
// API gets TfLiteOpaqueDelegateParams (also as its node's builtin data, as in TFLite).
//
// Buffer handles: a delegate may keep a tensor's data in its own buffer (it sets the tensor's
// buffer_handle, and data_is_stale when the host memory is behind). baton's boundary tensors live in
// host memory, which the other partitions and op packs read and write, so before each invoke the
// kernel's boundary inputs that have a handle get CopyToBufferHandle (the host memory holds what their
// producer wrote), and after it every boundary output whose data is stale gets CopyFromBufferHandle
// (then data_is_stale is cleared). FreeBufferHandle runs for every handle left when the graph ends.
class TfliteKernel {
 public:
  static baton_status create(TfliteGraph& graph, const baton_partition* partition, TfliteKernel** out,
                             baton_error* error);
  ~TfliteKernel();
  baton_status prepare(baton_error* error);
  baton_status invoke(baton_error* error);

 private:
  explicit TfliteKernel(TfliteGraph& graph) : graph_(graph) {}
  TfliteGraph& graph_;
  baton_status sync_inputs(baton_error* error);
  baton_status sync_outputs(baton_error* error);
  TfLiteDelegateParams params_{};
  TfLiteOpaqueDelegateParams opaque_params_{};
  TfLiteNode node_{};
  std::vector<int> inputs_;   // non-constant boundary inputs
  std::vector<int> outputs_;  // boundary outputs
  bool initialised_ = false;
  std::vector<void*> owned_;
};

}  // namespace tflite_delegates
