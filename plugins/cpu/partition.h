// The cpu delegate's state (the kernels this CPU runs, the host's thread pool) and its partitions. The
// delegate chooses its nodes from the whole graph (select_nodes): every DEPTHWISE_CONV_2D whose only
// reader is a 1x1 CONV_2D, both of a form FusedPair runs, and every other CONV_2D NarrowConv or Pointwise
// runs, each with a RELU node that alone reads its (last) convolution. A partition is one or more such
// steps in execution order (the host groups connected ones); a 1x1 convolution whose output only a
// pair's depthwise reads becomes that pair's expansion. A residual ADD after a step joins it, also when
// its other input is a shortcut (see Shortcut: a 2x2 MAX_POOL_2D, a PAD of channels) of a tensor that
// exists before the step; the step computes the shortcut, whose nodes the host no longer runs. A tensor
// that passes between two steps of one partition lives in a buffer of the partition, the others in the
// host's memory.
#ifndef BATON_CPU_PARTITION_H
#define BATON_CPU_PARTITION_H

#include <memory>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "baton/plugin_kit_pthreadpool.hpp"
#include "baton/plugin_kit_scratch.hpp"
#include "cpu_op.h"
#include "fused_pair.h"
#include "narrow_conv.h"
#include "pointwise.h"

namespace baton::cpu {

struct PluginState {
  const baton_host_api* api = nullptr;
  const baton_plugin_host* host = nullptr;
  const Kernels* kernels = nullptr;
  int threads = 1;        // the host's
  kit::SharedPool pool;   // the host's pool of that many threads, shared with other plugins (none for 1)
  bool pool_started = false;

  // Takes the host's pool (ABI 1.4), once, with the first partition: a delegate that takes no node of
  // the environment's models asks the host for nothing, and can be parked. Throws kit::Refusal.
  void start_pool();

  // Sets selected[i] for the free nodes that form pairs; writes why the others were not taken.
  baton_status select(const baton_graph* graph, const int32_t* free_nodes, int32_t count, uint8_t* selected,
                      baton_error* error) const;
};

class Partition {
 public:
  explicit Partition(PluginState& plugin) : plugin_(plugin) {}

  // Pairs the partition's nodes and packs the weights. Throws kit::Refusal.
  void build(const baton_partition* partition);
  baton_status prepare(const baton_partition* partition, baton_error* error);
  baton_status invoke(baton_error* error);

 private:
  // Where a step reads or writes: a host tensor, or the partition's buffer `buffer`.
  struct Place {
    baton_tensor* host = nullptr;
    int buffer = -1;
  };
  struct Step {
    std::unique_ptr<CpuOp> op;
    const baton_tensor* in_tensor = nullptr;  // for its shape when it is a partition input
    const baton_tensor* residual_tensor = nullptr;
    Place in, out, residual;  // residual: the other input of a residual ADD the step ends in
    std::vector<int32_t> out_dims;
    kit::Place work;  // where the op's working memory lies
  };

  PluginState& plugin_;
  std::vector<Step> steps_;
  // Tensors between two steps of this partition: `buffers_` of them, placed at prepare in one scratch
  // block (plugin_kit_scratch.hpp; tensors with lives apart share bytes), in the host's arena where it
  // gives one. Each step's working memory lies there too, alive during that step only. Where they fit,
  // both lie instead in host tensors the partition may compute in (kit::plan_with_regions, ABI 1.8): an
  // output before the step that writes it, a reusable input after the last step that reads it.
  int buffers_ = 0;
  std::vector<kit::Place> buffer_place_;
  std::vector<baton_tensor*> region_tensor_;  // by region
  const baton_partition* partition_ = nullptr;
  kit::PartitionScratch scratch_;
  size_t scratch_bytes_ = 0;
  uint8_t* scratch_base_ = nullptr;       // the block's address for the invoke under way
  std::vector<uint8_t*> region_base_;     // the regions' addresses for the invoke under way
  uint8_t* at(const kit::Place& p) const {
    return (p.region < 0 ? scratch_base_ : region_base_[static_cast<size_t>(p.region)]) + p.offset;
  }
  float* buffer(int b) { return reinterpret_cast<float*>(at(buffer_place_[static_cast<size_t>(b)])); }
};

}  // namespace baton::cpu

#endif  // BATON_CPU_PARTITION_H
