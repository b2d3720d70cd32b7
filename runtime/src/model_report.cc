// `baton inspect`'s report (baton_model_report): what a model contains, read without any plugin.
#include "model_report.h"

#include <map>

#include "appendf.h"
#include "baton/tflite_ops.h"
#include "folder.h"
#include "json_writer.h"

namespace baton {

namespace {

std::string printable(std::span<const uint8_t> data) {
  std::string s;
  for (uint8_t c : data) {
    if (c == 0) break;
    if (c < 0x20 || c > 0x7e) return "";
    s += static_cast<char>(c);
  }
  return s;
}

// "scale 0.0078125 zero point 128", or "per-channel: 32 scales along dimension 0"; "" when not quantized.
std::string quantization_text(const Quantization& q) {
  if (q.blockwise()) {
    return "blockwise: blocks of " + std::to_string(q.block_size) + ", " + type_name(q.block_scale_type) +
           " scales in tensor " + std::to_string(q.block_scales_tensor);
  }
  if (q.empty()) return "";
  char buf[96];
  if (q.scales.size() == 1) {
    std::snprintf(buf, sizeof buf, "scale %.9g zero point %lld", static_cast<double>(q.scales[0]),
                  static_cast<long long>(q.zero_points.empty() ? 0 : q.zero_points[0]));
  } else {
    std::snprintf(buf, sizeof buf, "per-channel: %zu scales along dimension %d", q.scales.size(), q.quantized_dimension);
  }
  return buf;
}

void quantization_json(JsonWriter& j, const Quantization& q) {
  if (q.empty() && !q.blockwise()) return;
  j.key("quantization").begin_object();
  j.key("scales").begin_array();
  for (float s : q.scales) j.value(static_cast<double>(s));
  j.end_array();
  j.key("zero_points").begin_array();
  for (size_t i = 0; i < q.scales.size(); ++i) j.value(static_cast<int64_t>(q.zero_points.empty() ? 0 : q.zero_points[i]));
  j.end_array();
  j.field("quantized_dimension", q.quantized_dimension);
  if (q.blockwise()) {
    j.field("block_size", q.block_size).field("block_scales_tensor", q.block_scales_tensor);
    j.field("block_scale_type", std::string(type_name(q.block_scale_type)));
  }
  j.end_object();
}

using OpCounts = std::map<std::pair<std::string, int>, int>;

OpCounts count_ops(const SubgraphInfo& s) {
  OpCounts counts;
  for (const NodeInfo& n : s.nodes) counts[{node_op_name(n), n.version}]++;
  return counts;
}

// What both forms of the report count.
struct ModelFacts {
  OpCounts op_counts;                              // the entry subgraph's
  std::vector<std::vector<std::string>> callers;  // who runs each subgraph: "WHILE node 0 of subgraph 0", "signature KEY"
  std::map<std::string, int> folded_counts;        // nodes load folds into constants, by op
  size_t folded = 0, dropped = 0;
  std::map<std::string, int> type_counts;
  uint64_t quantized = 0, per_channel = 0, blockwise = 0;
};

ModelFacts facts_of(const Model& m) {
  ModelFacts f;
  const SubgraphInfo& g = m.main();
  f.op_counts = count_ops(g);
  f.callers.resize(m.subgraphs.size());
  f.callers[0].push_back("invoke");
  for (size_t s = 0; s < m.subgraphs.size(); ++s) {
    for (const NodeInfo& n : m.subgraphs[s].nodes) {
      for (int32_t c : n.callees) {
        if (c >= 0) f.callers[c].push_back(node_op_name(n) + " node " + std::to_string(n.index) + " of subgraph " + std::to_string(s));
      }
    }
  }
  for (const SignatureInfo& sig : m.signatures) f.callers[sig.subgraph].push_back("signature " + sig.key);
  const std::vector<bool> foldable = foldable_nodes(g);
  const std::vector<bool> dead = dead_nodes(g);
  for (const NodeInfo& n : g.nodes) {
    if (dead[n.index]) {  // dropped before folding
      ++f.dropped;
      continue;
    }
    // DENSIFY of a sparse constant is expanded at load as well.
    const bool densify = n.op_code == BATON_OP_DENSIFY && n.inputs.size() == 1 && n.inputs[0] >= 0 &&
                         g.tensors[n.inputs[0]].sparsity != nullptr;
    if (foldable[n.index] || densify) {
      ++f.folded;
      f.folded_counts[node_op_name(n)]++;
    }
  }
  for (const TensorInfo& t : g.tensors) {
    f.type_counts[type_name(t.type)]++;
    f.quantized += !t.quant.empty() || t.quant.blockwise();
    f.blockwise += t.quant.blockwise();
    f.per_channel += t.quant.scales.size() > 1;
  }
  return f;
}

}  // namespace

std::string model_json(const Model& m) {
  const SubgraphInfo& g = m.main();
  const ModelFacts f = facts_of(m);
  const std::string& path = m.source();
  JsonWriter j;
  j.begin_object();
  j.field("model", path).field("file_bytes", static_cast<uint64_t>(m.file_size));
  j.field("schema_version", static_cast<uint64_t>(m.schema_version)).field("description", m.description);
  j.field("min_runtime_version", m.min_runtime_version);
  auto io = [&](const char* key, const std::vector<int32_t>& list) {
    j.key(key).begin_array();
    for (size_t i = 0; i < list.size(); ++i) {
      const TensorInfo& t = g.tensors[list[i]];
      j.begin_object().field("index", static_cast<int>(i)).field("tensor", t.index).field("name", t.name);
      j.field("type", type_name(t.type)).array_of("shape", t.shape);
      quantization_json(j, t.quant);
      j.end_object();
    }
    j.end_array();
  };
  io("inputs", g.inputs);
  io("outputs", g.outputs);
  j.key("subgraphs").begin_array();
  for (const SubgraphInfo& s : m.subgraphs) {
    j.begin_object().field("name", s.name).field("nodes", static_cast<uint64_t>(s.nodes.size()));
    j.field("tensors", static_cast<uint64_t>(s.tensors.size()));
    j.key("run_by").begin_array();
    for (const std::string& c : f.callers[&s - m.subgraphs.data()]) j.value(c);
    j.end_array();
    j.key("ops").begin_array();
    for (const auto& [op, count] : count_ops(s)) {
      j.begin_object().field("op", op.first).field("version", op.second).field("count", count).end_object();
    }
    j.end_array().end_object();
  }
  j.end_array();
  j.key("signatures").begin_array();
  for (const SignatureInfo& s : m.signatures) {
    j.begin_object().field("key", s.key).field("subgraph", s.subgraph);
    for (const char* which : {"inputs", "outputs"}) {
      j.key(which).begin_object();
      for (const auto& [name, t] : (which[0] == 'i' ? s.inputs : s.outputs)) j.field(name, t);
      j.end_object();
    }
    j.end_object();
  }
  j.end_array();
  j.key("ops").begin_array();
  for (const auto& [op, count] : f.op_counts) {
    j.begin_object().field("op", op.first).field("version", op.second).field("count", count).end_object();
  }
  j.end_array();
  j.key("tensors_by_type").begin_object();
  for (const auto& [t, c] : f.type_counts) j.field(t, c);
  j.end_object();
  j.field("quantized_tensors", f.quantized).field("per_channel_tensors", f.per_channel).field("blockwise_tensors", f.blockwise);
  j.field("constant_bytes", static_cast<uint64_t>(m.constant_bytes));
  j.field("folded_at_load", static_cast<uint64_t>(f.folded));
  j.field("dropped_at_load", static_cast<uint64_t>(f.dropped));
  j.key("folded_by_op").begin_object();
  for (const auto& [op, c] : f.folded_counts) j.field(op, c);
  j.end_object();
  j.key("metadata").begin_array();
  for (const MetadataInfo& md : m.metadata) {
    j.begin_object().field("name", md.name).field("bytes", static_cast<uint64_t>(md.data.size()));
    std::string text = printable(md.data);
    if (!text.empty()) j.field("text", text);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str();
}

std::string model_text(const Model& m) {
  const SubgraphInfo& g = m.main();
  const ModelFacts f = facts_of(m);
  const std::string& path = m.source();
  std::string out;

  appendf(out, "model: %s (%zu bytes, schema version %u)\n", path.c_str(), m.file_size, m.schema_version);
  if (!m.description.empty()) appendf(out, "description: %s\n", m.description.c_str());
  if (!m.min_runtime_version.empty()) appendf(out, "min_runtime_version: %s\n", m.min_runtime_version.c_str());
  appendf(out, "subgraphs: %zu\n", m.subgraphs.size());
  for (size_t i = 0; i < m.subgraphs.size(); ++i) {
    std::string by;
    for (const std::string& c : f.callers[i]) by += (by.empty() ? "" : ", ") + c;
    appendf(out, "  %zu%s%s: %zu nodes, %zu tensors (run by %s)\n", i, m.subgraphs[i].name.empty() ? "" : " ",
                m.subgraphs[i].name.c_str(), m.subgraphs[i].nodes.size(), m.subgraphs[i].tensors.size(),
                by.empty() ? "nothing" : by.c_str());
  }
  auto io = [&](const char* title, const std::vector<int32_t>& list) {
    appendf(out, "%s:\n", title);
    for (size_t i = 0; i < list.size(); ++i) {
      const TensorInfo& t = g.tensors[list[i]];
      const std::string q = quantization_text(t.quant);
      appendf(out, "  %zu: %s %s %s (tensor %d)%s%s\n", i, t.name.c_str(), type_name(t.type),
                  shape_text(t.shape).c_str(), t.index, q.empty() ? "" : ", ", q.c_str());
    }
  };
  io("inputs", g.inputs);
  io("outputs", g.outputs);
  if (!m.signatures.empty()) {
    appendf(out, "signatures:\n");
    for (const SignatureInfo& s : m.signatures) {
      appendf(out, "  %s (subgraph %d): inputs", s.key.c_str(), s.subgraph);
      for (const auto& [n, t] : s.inputs) appendf(out, " %s=t%d", n.c_str(), t);
      appendf(out, "; outputs");
      for (const auto& [n, t] : s.outputs) appendf(out, " %s=t%d", n.c_str(), t);
      appendf(out, "\n");
    }
  }
  appendf(out, "ops (subgraph 0, %zu nodes):\n", g.nodes.size());
  for (const auto& [op, count] : f.op_counts) appendf(out, "  %-28s v%-3d %5d\n", op.first.c_str(), op.second, count);
  for (size_t i = 1; i < m.subgraphs.size(); ++i) {
    if (m.subgraphs[i].nodes.empty()) continue;
    appendf(out, "ops (subgraph %zu, %zu nodes):\n", i, m.subgraphs[i].nodes.size());
    for (const auto& [op, count] : count_ops(m.subgraphs[i])) {
      appendf(out, "  %-28s v%-3d %5d\n", op.first.c_str(), op.second, count);
    }
  }
  appendf(out, "tensors by type:");
  for (const auto& [t, c] : f.type_counts) appendf(out, " %s %d", t.c_str(), c);
  appendf(out, "\n");
  if (f.quantized) {
    appendf(out, "quantized tensors: %llu (%llu per-channel", static_cast<unsigned long long>(f.quantized),
                static_cast<unsigned long long>(f.per_channel));
    if (f.blockwise) appendf(out, ", %llu blockwise", static_cast<unsigned long long>(f.blockwise));
    appendf(out, ")\n");
  }
  appendf(out, "constant bytes: %zu\n", m.constant_bytes);
  appendf(out, "nodes folded into constants at load: %zu of %zu", f.folded, g.nodes.size());
  for (const auto& [op, c] : f.folded_counts) appendf(out, "%s%s %d", op == f.folded_counts.begin()->first ? " (" : ", ", op.c_str(), c);
  appendf(out, "%s\n", f.folded ? ")" : "");
  if (f.dropped) appendf(out, "nodes dropped at load (nothing reads their outputs): %zu\n", f.dropped);
  if (!m.metadata.empty()) {
    appendf(out, "metadata:\n");
    for (const MetadataInfo& md : m.metadata) {
      std::string text = printable(md.data);
      appendf(out, "  %s: %zu bytes%s%s\n", md.name.c_str(), md.data.size(), text.empty() ? "" : " = ", text.c_str());
    }
  }
  return out;
}

}  // namespace baton
