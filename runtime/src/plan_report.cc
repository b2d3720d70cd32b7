#include "plan_report.h"

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "json_writer.h"

namespace baton {

namespace {

struct Totals {
  size_t nodes = 0;
  size_t folded = 0;
  size_t dropped = 0;
  std::map<std::string, size_t> per_plugin;            // running nodes per plugin
  std::map<std::string, size_t> partitions_per_plugin;
  std::vector<std::string> order;                      // plugins in first-seen order
  size_t round_trips = 0;
  std::set<std::string> isolated;                      // plugins that run in a process of their own
};

Totals totals(const Interpreter& in) {
  Totals t;
  t.nodes = in.nodes().size();
  for (size_t i = 0; i < in.nodes().size(); ++i) {
    Placement p = in.placement(i);
    if (p.kind == "folded") {
      ++t.folded;
      continue;
    }
    if (p.kind == "dropped") {
      ++t.dropped;
      continue;
    }
    if (!t.per_plugin.count(p.plugin)) t.order.push_back(p.plugin);
    ++t.per_plugin[p.plugin];
    if (const LoadedPlugin* plugin = in.environment().registry().find(p.plugin); plugin && plugin->isolated) {
      t.isolated.insert(p.plugin);
    }
  }
  for (const auto& p : in.partitions()) ++t.partitions_per_plugin[p->plugin->name];
  t.round_trips = in.partitions().size();
  return t;
}

size_t boundary_bytes(const Partition& p) {
  size_t bytes = 0;
  for (const Tensor* t : p.inputs) bytes += t->bytes;
  for (const Tensor* t : p.outputs) bytes += t->bytes;
  return bytes;
}

std::string tensor_list(const std::vector<Tensor*>& tensors) {
  std::string s;
  for (const Tensor* t : tensors) {
    s += (s.empty() ? "" : ", ") + std::string("t") + std::to_string(t->index) + " " + shape_text(t->shape);
  }
  return s;
}

std::string op_label(const Node& n) {
  return node_op_name(*n.info) + " v" + std::to_string(n.info->version);
}


// The refusals of the text format, each distinct (plugin, reason) once: a delegate gives the same
// reason for hundreds of nodes (the cpu delegate's runs to some 700 characters), so a node names its
// refusals by tag ("cpu refused: [r1]") and the reasons are printed once, under "refusals:"
// ("[r1] cpu refused: ...").
class RefusalLegend {
 public:
  // "[rN]" for this refusal; a pair seen for the first time gets the next number.
  std::string tag(const Refusal& r) {
    auto [it, added] = tags_.try_emplace({r.plugin, r.reason()}, entries_.size() + 1);
    if (added) entries_.push_back(&r);
    return "[r" + std::to_string(it->second) + "]";
  }
  std::string lines() const {
    std::string s;
    if (!entries_.empty()) s += "\nrefusals:\n";
    for (size_t k = 0; k < entries_.size(); ++k) {
      s += "  [r" + std::to_string(k + 1) + "] " + entries_[k]->plugin + " refused: " + entries_[k]->reason() + "\n";
    }
    return s;
  }

 private:
  std::map<std::pair<std::string, std::string>, size_t> tags_;
  std::vector<const Refusal*> entries_;  // borrowed from the interpreter, which outlives the report
};

// The nodes of one subgraph: where each runs and who refused it (by tag, see RefusalLegend).
std::string node_lines(const Subgraph& g, RefusalLegend& legend) {
  std::string s;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    Placement p = g.placement(i);
    char line[256];
    std::snprintf(line, sizeof line, "  %4zu %-28s ", i, op_label(n).c_str());
    s += line;
    if (p.kind == "delegate") {
      s += p.plugin + " (partition " + std::to_string(p.partition) + ")";
      if (!n.info->composite_name.empty()) s += ", " + n.info->composite_name + " fused";
    } else if (p.kind == "folded") {
      s += "folded at load";
    } else if (p.kind == "dropped") {
      s += "dropped at load (nothing reads its outputs)";
    } else if (p.kind == "runtime") {
      s += "runtime";
      for (int32_t c : n.info->callees) s += c >= 0 ? " -> subgraph " + std::to_string(c) : "";
      if (!n.info->composite_name.empty()) s += " (" + n.info->composite_name + ", its decomposition)";
    } else {
      s += p.plugin + " (op pack)";
    }
    s += "\n";
    if (p.kind == "runtime") continue;  // every delegate's reason is the same
    for (const Refusal& r : g.refusals(i)) s += "         " + r.plugin + " refused: " + legend.tag(r) + "\n";
  }
  return s;
}

std::string partition_lines(const Subgraph& g) {
  std::string s;
  if (!g.partitions().empty()) s += "\npartitions:\n";
  for (const auto& p : g.partitions()) {
    s += "  " + std::to_string(p->id) + ": " + p->plugin->name + (p->plugin->isolated ? " (isolated)" : "") + ", " +
         std::to_string(p->nodes.size()) +
         " nodes (";
    for (size_t k = 0; k < p->nodes.size(); ++k) s += (k ? " " : "") + std::to_string(p->nodes[k]->info->index);
    s += ")\n     inputs: " + tensor_list(p->inputs) + "\n     outputs: " + tensor_list(p->outputs) +
         "\n     boundary bytes: " + std::to_string(boundary_bytes(*p)) + "\n";
  }
  return s;
}

std::string subgraph_title(const Subgraph& g) {
  return "subgraph " + std::to_string(g.index()) + (g.info().name.empty() ? "" : " \"" + g.info().name + "\"");
}


// "nodes" and "partitions" of one subgraph, as fields of the open object.
void subgraph_json(JsonWriter& j, const Subgraph& g) {
  j.key("nodes").begin_array();
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    Placement p = g.placement(i);
    j.begin_object().field("index", static_cast<int>(i)).field("op", node_op_name(*n.info));
    j.field("version", n.info->version);
    j.key("placement").begin_object().field("kind", p.kind).field("plugin", p.plugin).key("partition");
    if (p.partition >= 0) j.value(p.partition); else j.null();
    j.end_object();
    j.key("refusals").begin_array();
    for (const Refusal& r : g.refusals(i)) j.begin_object().field("plugin", r.plugin).field("reason", r.reason()).end_object();
    j.end_array();
    if (n.runtime != RuntimeOp::none) {  // the subgraphs a control-flow node runs
      j.key("callees").begin_array();
      for (int32_t c : n.info->callees) {
        if (c >= 0) j.value(c);
      }
      j.end_array();
    }
    if (!n.info->composite_name.empty()) j.field("composite", n.info->composite_name);
    j.end_object();
  }
  j.end_array();
  j.key("partitions").begin_array();
  for (const auto& p : g.partitions()) {
    j.begin_object().field("id", p->id).field("plugin", p->plugin->name);
    j.key("nodes").begin_array();
    for (const Node* n : p->nodes) j.value(n->info->index);
    j.end_array();
    j.key("inputs").begin_array();
    for (const Tensor* t : p->inputs) j.value(t->index);
    j.end_array();
    j.key("outputs").begin_array();
    for (const Tensor* t : p->outputs) j.value(t->index);
    j.end_array();
    j.field("boundary_bytes", static_cast<uint64_t>(boundary_bytes(*p)));
    j.field("isolated", p->plugin->isolated != nullptr).end_object();
  }
  j.end_array();
}

}  // namespace

std::string plan_summary(const Interpreter& in) {
  const Totals t = totals(in);
  std::string s;
  for (const std::string& plugin : t.order) {
    const size_t n = t.per_plugin.at(plugin);
    s += (s.empty() ? "" : "; ") + plugin + (t.isolated.count(plugin) ? " (isolated)" : "") + ": ";
    if (t.partitions_per_plugin.count(plugin)) {
      const size_t parts = t.partitions_per_plugin.at(plugin);
      s += std::to_string(n) + " of " + std::to_string(t.nodes - t.folded - t.dropped) + " nodes in " + std::to_string(parts) +
           (parts == 1 ? " partition" : " partitions");
    } else {
      s += std::to_string(n) + (n == 1 ? " node" : " nodes");
    }
  }
  if (t.folded) s += (s.empty() ? "" : "; ") + std::to_string(t.folded) + " folded at load";
  if (t.dropped) s += (s.empty() ? "" : "; ") + std::to_string(t.dropped) + " dropped at load (outputs unused)";
  if (!in.fallbacks().empty()) s += "; " + std::to_string(in.fallbacks().size()) + " fallback(s)";
  return s;
}

std::string plan_text(const Interpreter& in) {
  std::string s = "plan for " + in.model().source() + "\n" + plan_summary(in) + "\n\n" +
                  (in.subgraph_count() > 1 ? subgraph_title(*in.subgraph(in.entry_subgraph())) + " " : "") + "nodes:\n";
  RefusalLegend legend;  // one for every subgraph: a tag means the same reason throughout
  s += node_lines(*in.subgraph(in.entry_subgraph()), legend);
  s += partition_lines(*in.subgraph(in.entry_subgraph()));
  for (size_t k = 0; k < in.subgraph_count(); ++k) {
    const Subgraph* g = in.subgraph(k);
    if (!g || static_cast<int>(k) == in.entry_subgraph()) continue;
    s += "\n" + subgraph_title(*g) + " (run by control flow):\n" + node_lines(*g, legend) + partition_lines(*g);
  }
  s += legend.lines();
  if (!in.fallbacks().empty()) s += "\nfallbacks:\n";
  for (const Fallback& f : in.fallbacks()) {
    if (f.partition < 0) {
      s += "  op pack " + f.plugin + " gave up node " + std::to_string(f.nodes.empty() ? -1 : f.nodes[0]) + " at " +
           f.stage + ": " + f.reason + "\n";
      continue;
    }
    s += "  " + f.plugin + " lost partition " + std::to_string(f.partition) + " (" + std::to_string(f.nodes.size()) +
         " nodes) at " + f.stage + ": " + f.reason + "\n";
  }
  const Totals t = totals(in);
  s += "\ntotals: " + std::to_string(t.nodes) + " nodes, " + std::to_string(t.folded) + " folded, " +
       std::to_string(t.dropped) + " dropped";
  for (const std::string& plugin : t.order) s += ", " + plugin + " " + std::to_string(t.per_plugin.at(plugin));
  s += "; " + std::to_string(in.partitions().size()) + " partitions, " + std::to_string(t.round_trips) +
       " host round trips\n";
  return s;
}

std::string plan_json(const Interpreter& in) {
  JsonWriter j;
  j.begin_object();
  j.field("model", in.model().source());
  j.field("entry_subgraph", in.entry_subgraph());
  subgraph_json(j, *in.subgraph(in.entry_subgraph()));
  // The other subgraphs that run (loop bodies, branches, initialisers), each like the entry one.
  j.key("subgraphs").begin_array();
  for (size_t k = 0; k < in.subgraph_count(); ++k) {
    const Subgraph* g = in.subgraph(k);
    if (!g || static_cast<int>(k) == in.entry_subgraph()) continue;
    j.begin_object().field("index", static_cast<int>(k)).field("name", g->info().name);
    subgraph_json(j, *g);
    j.end_object();
  }
  j.end_array();
  j.key("fallbacks").begin_array();
  for (const Fallback& f : in.fallbacks()) {
    j.begin_object().field("plugin", f.plugin).key("partition");
    if (f.partition >= 0) j.value(f.partition); else j.null();
    j.field("stage", f.stage);
    j.field("reason", f.reason).array_of("nodes", f.nodes).end_object();
  }
  j.end_array();
  const Totals t = totals(in);
  j.key("totals").begin_object().field("nodes", static_cast<uint64_t>(t.nodes)).field("folded", static_cast<uint64_t>(t.folded));
  j.field("dropped", static_cast<uint64_t>(t.dropped));
  j.key("per_plugin").begin_object();
  for (const std::string& plugin : t.order) j.field(plugin, static_cast<uint64_t>(t.per_plugin.at(plugin)));
  j.end_object();
  j.field("partitions", static_cast<uint64_t>(in.partitions().size()));
  j.field("host_round_trips", static_cast<uint64_t>(t.round_trips)).end_object();
  j.end_object();
  return j.str();
}

std::string plan_dot(const Interpreter& in) {
  static const char* const kColours[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3",
                                         "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd"};
  std::map<std::string, const char*> colour;
  auto colour_of = [&](const std::string& plugin) {
    auto it = colour.find(plugin);
    if (it != colour.end()) return it->second;
    const char* c = kColours[colour.size() % (sizeof kColours / sizeof kColours[0])];
    colour[plugin] = c;
    return c;
  };
  auto quote = [](const std::string& text) {
    std::string q = "\"";
    for (char c : text) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  };
  std::string s = "digraph plan {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"monospace\"];\n";
  std::map<int, std::vector<size_t>> by_partition;
  for (size_t i = 0; i < in.nodes().size(); ++i) {
    Placement p = in.placement(i);
    if (p.kind == "folded" || p.kind == "dropped") continue;
    if (p.partition >= 0) by_partition[p.partition].push_back(i);
  }
  auto node_line = [&](size_t i) {
    Placement p = in.placement(i);
    return "n" + std::to_string(i) + " [label=" + quote(std::to_string(i) + ": " + op_label(in.nodes()[i]) + "\\n" + p.plugin) +
           ", fillcolor=" + quote(colour_of(p.plugin)) + "];\n";
  };
  for (const auto& [id, nodes] : by_partition) {
    s += "  subgraph cluster_p" + std::to_string(id) + " {\n    label=" +
         quote("partition " + std::to_string(id) + " (" + in.partitions()[id]->plugin->name + ")") + ";\n";
    for (size_t i : nodes) s += "    " + node_line(i);
    s += "  }\n";
  }
  for (size_t i = 0; i < in.nodes().size(); ++i) {
    Placement p = in.placement(i);
    if (p.kind == "folded" || p.kind == "dropped" || p.partition >= 0) continue;
    s += "  " + node_line(i);
  }
  // Edges through non-constant tensors.
  std::map<int, size_t> producer;
  for (size_t i = 0; i < in.nodes().size(); ++i) {
    if (in.placement(i).kind == "folded" || in.placement(i).kind == "dropped") continue;
    for (const Tensor* t : in.nodes()[i].outputs) producer[t->index] = i;
  }
  for (size_t i = 0; i < in.nodes().size(); ++i) {
    if (in.placement(i).kind == "folded" || in.placement(i).kind == "dropped") continue;
    std::set<size_t> from;
    for (const Tensor* t : in.nodes()[i].inputs) {
      if (t && !t->is_constant && producer.count(t->index)) from.insert(producer[t->index]);
    }
    for (size_t f : from) s += "  n" + std::to_string(f) + " -> n" + std::to_string(i) + ";\n";
  }
  s += "}\n";
  return s;
}

}  // namespace baton
