// PreviewDelegatePartitioning: how TFLite would group a set of nodes into delegate kernels, so that a
// delegate can drop partitions it does not want (too small, too many) before it replaces nodes.
#include <algorithm>
#include <cstdlib>

#include "tflite_graph.h"

namespace tflite_delegates {

void TfliteGraph::free_preview() {
  for (void* p : preview_owned_) std::free(p);
  preview_owned_.clear();
  preview_.clear();
}

// TFLite's rule (independent node subsets in epochs): repeatedly take every node of one kind (to be
// replaced, or not) whose producers are done, then switch kinds; each epoch of replaced nodes is one
// subset. Here every running node is its own unit, so the host, which treats an earlier delegate's
// partition as one unit, may still split a subset further.
TfLiteStatus TfliteGraph::preview_partitioning(TfLiteContext* context, const TfLiteIntArray* nodes,
                                               TfLiteDelegateParams** params, int* count) {
  TfliteGraph* g = self(context);
  g->free_preview();
  if (!nodes || !params || !count) return kTfLiteError;
  const int n = static_cast<int>(g->nodes_.size());
  std::vector<uint8_t> wanted(n, 0);
  for (int k = 0; k < nodes->size; ++k) {
    const int i = nodes->data[k];
    if (i < 0 || i >= n || !g->in_plan_[i]) {
      report_error(context, "PreviewDelegatePartitioning: node %d is not in the execution plan", i);
      return kTfLiteError;
    }
    wanted[i] = 1;
  }
  std::vector<int> producer(g->tensors_.size(), -1);
  std::vector<std::vector<int>> consumers(g->tensors_.size());
  for (int i = 0; i < n; ++i) {
    if (!g->nodes_[i].present) continue;
    for (int t : std::span(g->nodes_[i].node.outputs->data, g->nodes_[i].node.outputs->size)) producer[t] = i;
    for (int t : std::span(g->nodes_[i].node.inputs->data, g->nodes_[i].node.inputs->size)) {
      if (t >= 0) consumers[t].push_back(i);
    }
  }
  std::vector<uint8_t> done(n, 0);
  for (int i = 0; i < n; ++i) done[i] = !g->nodes_[i].present;  // not running: never waited on
  std::vector<std::vector<int>> subsets;
  bool kind = false;
  for (int idle = 0; idle < 2;) {
    std::vector<int> epoch;
    for (bool progress = true; progress;) {
      progress = false;
      for (int i = 0; i < n; ++i) {
        if (done[i] || static_cast<bool>(wanted[i]) != kind) continue;
        const TfLiteIntArray* in = g->nodes_[i].node.inputs;
        const bool ready = std::all_of(in->data, in->data + in->size, [&](int t) { return t < 0 || producer[t] < 0 || done[producer[t]]; });
        if (!ready) continue;
        done[i] = progress = true;
        epoch.push_back(i);
      }
    }
    idle = epoch.empty() ? idle + 1 : 0;
    if (kind && !epoch.empty()) subsets.push_back(std::move(epoch));
    kind = !kind;
  }
  for (const std::vector<int>& subset : subsets) {
    std::vector<int32_t> ins, outs;
    std::vector<uint8_t> inside(n, 0);
    for (int i : subset) inside[i] = 1;
    for (int i : subset) {
      const TfLiteNode& node = g->nodes_[i].node;
      for (int t : std::span(node.inputs->data, node.inputs->size)) {
        if (t >= 0 && !(producer[t] >= 0 && inside[producer[t]]) && std::find(ins.begin(), ins.end(), t) == ins.end()) ins.push_back(t);
      }
      for (int t : std::span(node.outputs->data, node.outputs->size)) {
        const bool read_outside = consumers[t].empty() ||
                                  std::any_of(consumers[t].begin(), consumers[t].end(), [&](int c) { return !inside[c]; });
        if (read_outside) outs.push_back(t);
      }
    }
    TfLiteDelegateParams p{g->delegate_, int_array(subset.data(), static_cast<int32_t>(subset.size())),
                           int_array(ins.data(), static_cast<int32_t>(ins.size())),
                           int_array(outs.data(), static_cast<int32_t>(outs.size()))};
    g->preview_owned_.insert(g->preview_owned_.end(), {p.nodes_to_replace, p.input_tensors, p.output_tensors});
    g->preview_.push_back(p);
  }
  *params = g->preview_.data();
  *count = static_cast<int>(g->preview_.size());
  return kTfLiteOk;
}

}  // namespace tflite_delegates
