// The delegate's state: one per loaded plugin (the thread pool, the runtime flags, whether XNNPACK
// started), and one XNNPACK runtime per partition. A partition's runtime is built at partition init from
// the model's shapes (weights are packed then, once), rebuilt at prepare only when the partition's input
// shapes change, and bound to host memory at invoke, again only when a boundary tensor or the scratch
// block (the tensors between its nodes, in the host's arena) moved.
#ifndef BATON_XNNPACK_PARTITION_H
#define BATON_XNNPACK_PARTITION_H

#include <pthreadpool.h>
#include <xnnpack.h>

#include "baton/plugin_kit_pthreadpool.hpp"
#include "baton/plugin_kit_scratch.hpp"

#include <memory>
#include <string>
#include <vector>

#include "node_view.h"
#include "subgraph_builder.h"

namespace baton::xnnpack {

struct PluginState {
  const baton_host_api* api = nullptr;
  const baton_plugin_host* host = nullptr;
  std::string unavailable;  // non-empty once XNNPACK failed to start: every node is refused with it
  bool initialized = false;
  int threads = 1;
  kit::SharedPool pool;  // none with one thread: XNNPACK runs on the caller's thread
  uint32_t runtime_flags = 0;
  bool quantized = false;  // take uint8/int8 quantized nodes (option `quantized`)
  int min_elementwise_group = 3;  // option `min-elementwise-group` (selection.cc)

  // Returns if the delegate takes `node`, else throws Refusal with the reason: the node is defined alone
  // in a scratch subgraph, meeting the checks and XNNPACK's validation the partition build will.
  void check(const baton_node* node);
  // The reasons check() would give that need no op's checks (an op this delegate does not declare, a
  // value of a type no op here takes, an 8-bit value without the `quantized` option), without a Refusal
  // thrown: an 8-bit model's every node has one, and a throw costs time and the unwinder's pages. ""
  // when check() must decide.
  std::string quick_refusal(const baton_node* node) const;
  // select_nodes (selection.cc): sets selected[k] for each free node taken, and gives the others their
  // reasons through graph_refuse_node.
  void select(const baton_graph* graph, const int32_t* free_nodes, int32_t count, uint8_t* selected);
  // Initialises XNNPACK and takes the thread pool, once. Not at create: the first node whose types and
  // options pass the op's own checks calls it, so a model this delegate refuses on those (an 8-bit model
  // without the `quantized` option) never maps XNNPACK's tables or its pool. Throws Refusal with
  // `unavailable` when XNNPACK cannot start.
  void start();

  ~PluginState();
};

struct RuntimeDeleter {
  void operator()(xnn_runtime_t r) const { xnn_delete_runtime(r); }
};
using RuntimePtr = std::unique_ptr<xnn_runtime, RuntimeDeleter>;

class Partition {
 public:
  explicit Partition(PluginState& plugin) : plugin_(plugin) {}

  // Defines every node in a fresh subgraph and creates the runtime (packs the weights). Throws Refusal.
  void build(const baton_partition* partition);
  // Rebuilds when the inputs' shapes differ from the ones built for; sets the outputs' shapes.
  baton_status prepare(const baton_partition* partition, baton_error* error);
  // Binds the boundary tensors (when they moved) and runs.
  baton_status invoke(baton_error* error);

 private:
  std::vector<Dims> input_shapes() const;
  // Places the tensors between nodes in one scratch block, sharing slots where their lives do not overlap.
  void plan_scratch(const std::vector<SubgraphBuilder::ScratchTensor>& tensors);

  PluginState& plugin_;
  const baton_partition* partition_ = nullptr;  // the host's handle, valid until partition_free
  std::vector<std::vector<float>> owned_data_;  // static data the runtime points at (zero biases, slopes)
  RuntimePtr runtime_;                          // declared after the data it points at: deleted first
  std::vector<Dims> built_input_shapes_;
  std::vector<Dims> output_shapes_;
  std::vector<baton_tensor*> externals_;        // partition inputs then outputs; external id = position
  std::vector<uint32_t> scratch_ids_;           // external ids of the tensors between nodes
  std::vector<size_t> scratch_offsets_;         // and their bytes into the scratch block
  size_t scratch_bytes_ = 0;
  kit::PartitionScratch scratch_;
  std::vector<xnn_external_value> bound_;       // what the runtime was last set up with
  bool set_up_ = false;
};

}  // namespace baton::xnnpack

#endif  // BATON_XNNPACK_PARTITION_H
