// The xnnpack delegate's choice of nodes from the whole graph (select_nodes, ABI 1.2). Each free node is
// judged as check_node would judge it (PluginState::check, its reason given per node through
// graph_refuse_node), with one rule of the graph's: a connected group of nodes this delegate could take
// that holds only elementwise ops (and reshapes), has fewer than `min-elementwise-group` nodes, and sits
// between nodes that run elsewhere (it reads what another node computes and feeds another node) stays
// with the rest of the chain. There XNNPACK would run what the builtin pack's vectorised kernels run as
// fast, and cost its start (its tables and pool: about 0.5 MB resident), a runtime, and a host round trip
// on either side; an 8-bit model's float tail (MoveNet's lone SQRT and DIV) no longer starts it. Such
// groups are found before any of their nodes is checked, so that refusing them starts nothing.
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "baton/tflite_ops.h"
#include "ops.h"
#include "partition.h"

namespace baton::xnnpack {
namespace {

// Ops that compute each output element from the matching input elements (or only reshape): what the
// builtin pack runs as fast as XNNPACK.
bool elementwise(int32_t code) {
  switch (code) {
    case BATON_OP_ABS: case BATON_OP_ADD: case BATON_OP_CEIL: case BATON_OP_DEQUANTIZE: case BATON_OP_DIV:
    case BATON_OP_ELU: case BATON_OP_FLOOR: case BATON_OP_HARD_SWISH: case BATON_OP_LEAKY_RELU:
    case BATON_OP_LOGISTIC: case BATON_OP_MAXIMUM: case BATON_OP_MINIMUM: case BATON_OP_MUL: case BATON_OP_NEG:
    case BATON_OP_PRELU: case BATON_OP_QUANTIZE: case BATON_OP_RELU: case BATON_OP_RELU6:
    case BATON_OP_RELU_N1_TO_1: case BATON_OP_RESHAPE: case BATON_OP_ROUND: case BATON_OP_SQRT:
    case BATON_OP_SQUARE: case BATON_OP_SQUARED_DIFFERENCE: case BATON_OP_SUB: case BATON_OP_TANH:
      return true;
    default:
      return false;
  }
}

// Why the descriptor's declarations do not cover the node, or "" (the host's wording for check_node
// delegates: with select_nodes it leaves declarations to the delegate).
std::string declaration_refusal(const baton_host_api* api, const baton_node* node) {
  const OpDef* def = find_op(api, node);
  if (!def) return "op not declared";
  const int32_t version = api->node_version(node);
  if (version >= def->min_version && version <= def->max_version) return "";
  return "version " + std::to_string(version) + " out of range (declares v" + std::to_string(def->min_version) +
         "-" + std::to_string(def->max_version) + ")";
}

// Whether the node's computed tensors have types this delegate takes (what the op's own checks look at
// first), read without defining it: the group rule counts only nodes that may pass.
bool types_may_pass(const baton_host_api* api, const baton_node* node, bool quantized) {
  auto ok = [&](const baton_tensor* t) {
    if (!t || api->tensor_is_constant(t)) return true;
    const baton_tensor_type type = api->tensor_type(t);
    return type == BATON_TYPE_FLOAT32 || (quantized && (type == BATON_TYPE_INT8 || type == BATON_TYPE_UINT8));
  };
  for (int32_t i = 0; i < api->node_input_count(node); ++i) {
    if (!ok(api->node_input(node, i))) return false;
  }
  for (int32_t i = 0; i < api->node_output_count(node); ++i) {
    if (!ok(api->node_output(node, i))) return false;
  }
  return true;
}

struct Groups {
  std::vector<int32_t> parent;
  int32_t find(int32_t a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  }
  void join(int32_t a, int32_t b) { parent[find(a)] = find(b); }
};

}  // namespace

void PluginState::select(const baton_graph* graph, const int32_t* free_nodes, int32_t count, uint8_t* selected) {
  auto refuse_node = [&](int32_t k, const std::string& why) {
    if (BATON_STRUCT_HAS(api, baton_host_api, graph_refuse_node) && api->graph_refuse_node) {
      api->graph_refuse_node(graph, free_nodes[k], why.c_str());
    }
  };
  auto judge = [&](int32_t k, const baton_node* node) {
    if (!unavailable.empty()) return refuse_node(k, unavailable);
    if (std::string why = quick_refusal(node); !why.empty()) return refuse_node(k, why);
    try {
      check(node);
      selected[k] = 1;
    } catch (const kit::Refusal& r) {
      refuse_node(k, r.what());
    }
  };
  // The free nodes; over the whole graph, each tensor's producer and readers (node indices).
  std::vector<const baton_node*> nodes(static_cast<size_t>(count));
  for (int32_t k = 0; k < count; ++k) nodes[k] = api->graph_node(graph, free_nodes[k]);
  const int32_t node_count = api->graph_node_count(graph), tensor_count = api->graph_tensor_count(graph);
  std::vector<int32_t> place(static_cast<size_t>(node_count), -1);  // a node's position among the free ones
  for (int32_t k = 0; k < count; ++k) {
    if (free_nodes[k] >= 0 && free_nodes[k] < node_count) place[free_nodes[k]] = k;
  }
  auto index_of = [&](const baton_tensor* t) {
    const int32_t i = t ? api->tensor_index(t) : -1;
    return i >= 0 && i < tensor_count ? i : -1;
  };
  std::vector<int32_t> producer(static_cast<size_t>(tensor_count), -1);
  std::vector<std::vector<int32_t>> readers(static_cast<size_t>(tensor_count));
  for (int32_t n = 0; n < node_count; ++n) {
    const baton_node* node = api->graph_node(graph, n);
    if (!node) continue;
    for (int32_t i = 0; i < api->node_input_count(node); ++i) {
      if (const int32_t t = index_of(api->node_input(node, i)); t >= 0) readers[t].push_back(n);
    }
    for (int32_t o = 0; o < api->node_output_count(node); ++o) {
      if (const int32_t t = index_of(api->node_output(node, o)); t >= 0) producer[t] = n;
    }
  }
  // 0: not declared or types refused; 1: elementwise, not yet checked; 2: another op, checked and taken.
  std::vector<int8_t> role(static_cast<size_t>(count), 0);
  for (int32_t k = 0; k < count; ++k) {
    const baton_node* node = nodes[k];
    if (!node) continue;
    if (std::string why = declaration_refusal(api, node); !why.empty()) {
      refuse_node(k, why);
    } else if (!elementwise(api->node_builtin_code(node))) {
      judge(k, node);
      role[k] = selected[k] ? 2 : 0;
    } else if (!types_may_pass(api, node, quantized)) {
      judge(k, node);  // refused on its types, with the op's own reason; XNNPACK does not start for it
    } else {
      role[k] = 1;
    }
  }
  // The groups of the free nodes that `member` holds, joined along the tensors between them. An island is
  // a group of only elementwise nodes, fewer than min-elementwise-group, that reads what another node
  // computes and feeds another node: the nodes around it stay elsewhere, so taking it would add two host
  // round trips for nothing. (A group that reads only the graph's inputs, or feeds only its outputs, is
  // taken: a small model's or subgraph's whole graph.) The function returns, per free node, the size of
  // its island, or 0.
  auto islands = [&](auto member) {
    Groups g;
    g.parent.resize(static_cast<size_t>(count));
    std::iota(g.parent.begin(), g.parent.end(), 0);
    auto in_group = [&](int32_t node) { return node >= 0 && place[node] >= 0 && member(place[node]); };
    for (int32_t k = 0; k < count; ++k) {
      if (!member(k)) continue;
      for (int32_t i = 0; i < api->node_input_count(nodes[k]); ++i) {
        const int32_t t = index_of(api->node_input(nodes[k], i));
        if (t >= 0 && in_group(producer[t])) g.join(k, place[producer[t]]);
      }
    }
    std::vector<int32_t> size(static_cast<size_t>(count), 0);
    std::vector<bool> other(static_cast<size_t>(count), false), reads(other), feeds(other);
    for (int32_t k = 0; k < count; ++k) {
      if (!member(k)) continue;
      const int32_t root = g.find(k);
      ++size[root];
      if (!elementwise(api->node_builtin_code(nodes[k]))) other[root] = true;
      auto outside = [&](int32_t node) { return node >= 0 && (!in_group(node) || g.find(place[node]) != root); };
      for (int32_t i = 0; i < api->node_input_count(nodes[k]); ++i) {
        const int32_t t = index_of(api->node_input(nodes[k], i));
        if (t >= 0 && outside(producer[t])) reads[root] = true;
      }
      for (int32_t o = 0; o < api->node_output_count(nodes[k]); ++o) {
        const int32_t t = index_of(api->node_output(nodes[k], o));
        if (t < 0) continue;
        for (int32_t r : readers[t]) feeds[root] = feeds[root] || outside(r);
      }
    }
    std::vector<int32_t> island(static_cast<size_t>(count), 0);
    for (int32_t k = 0; k < count; ++k) {
      const int32_t root = g.find(k);
      if (member(k) && !other[root] && reads[root] && feeds[root] && size[root] < min_elementwise_group) {
        island[k] = size[root];
      }
    }
    return island;
  };
  auto island_refusal = [&](int32_t n) {
    return "only elementwise ops in a group of " + std::to_string(n) + " node(s) between nodes that run elsewhere (min-elementwise-group = " +
           std::to_string(min_elementwise_group) + "): left to the rest of the chain, which runs them as fast without starting XNNPACK and without two host round trips";
  };
  // Before checking: the elementwise nodes of an island are left unchecked.
  const std::vector<int32_t> before = islands([&](int32_t k) { return role[k] != 0; });
  for (int32_t k = 0; k < count; ++k) {
    if (role[k] != 1) continue;
    if (before[k]) {
      refuse_node(k, island_refusal(before[k]));
    } else {
      judge(k, nodes[k]);
    }
  }
  // After: a group its own refusals made an island is given back too.
  const std::vector<int32_t> after = islands([&](int32_t k) { return selected[k] != 0; });
  for (int32_t k = 0; k < count; ++k) {
    if (selected[k] && after[k]) {
      selected[k] = 0;
      refuse_node(k, island_refusal(after[k]));
    }
  }
}

}  // namespace baton::xnnpack
