#include "node_selection.h"

#include "plugin_call.h"

namespace baton {

NodeSelection select_nodes(LoadedPlugin& delegate, const GraphView& graph, const std::vector<int32_t>& free_nodes) {
  NodeSelection out;
  std::vector<uint8_t> selected(free_nodes.size(), 0);
  baton_error error;
  std::unordered_map<int32_t, std::string> reasons;  // graph_refuse_node's (ABI 1.16)
  GraphView view = graph;
  view.refusals = &reasons;
  const baton_status st = guarded_call(delegate, error, [&] {
    return delegate.delegate.select_nodes(delegate.state, reinterpret_cast<const baton_graph*>(&view),
                                          free_nodes.data(), static_cast<int32_t>(free_nodes.size()),
                                          selected.data(), &out.state, &error);
  });
  if (st != BATON_OK) {
    out.failed = true;
    out.refusal = "node selection failed: " + (error.message.empty() ? std::string("no reason given") : error.message);
    out.selected.assign(free_nodes.size(), false);
    return out;
  }
  out.refusal = error.message.empty() ? "not selected by the delegate" : error.message;
  out.selected.reserve(selected.size());
  for (uint8_t s : selected) out.selected.push_back(s != 0);
  if (!reasons.empty()) {
    out.reasons.resize(free_nodes.size());
    for (size_t k = 0; k < free_nodes.size(); ++k) {
      auto it = reasons.find(free_nodes[k]);
      if (it != reasons.end() && !out.selected[k]) out.reasons[k] = std::move(it->second);
    }
  }
  return out;
}

void free_selection(LoadedPlugin& delegate, void* state) {
  if (!delegate.delegate.selection_free) return;
  guarded_release(delegate, [&] { delegate.delegate.selection_free(delegate.state, state); });
}

}  // namespace baton
