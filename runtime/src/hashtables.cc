// The hash tables of TFLite's lookup ops (what a converted tf.lookup.StaticHashTable becomes), kept by the
// runtime like resource variables: in the RunState, by table id, shared by every subgraph.
//   HASHTABLE         makes the table its options name (if none is there yet) and gives its handle, a
//                     RESOURCE (or int32) tensor [1] holding the table id;
//   HASHTABLE_IMPORT  fills the table from keys and values of one shape, once: later imports leave it as
//                     it is, as TFLite does (a converted model imports at every invoke); of duplicate
//                     keys the first wins;
//   HASHTABLE_FIND    looks keys up, giving the first element of its default value for the missing ones;
//                     the output has the keys' shape;
//   HASHTABLE_SIZE    the number of entries, int64 [1].
// TFLite 2.9 has two kinds of table, int64 keys to string values and string keys to int64 values; the
// checks below are its kernels', with the reasons spelt out.
#include <cstring>

#include "baton/string_tensor.hpp"
#include "subgraph_values.h"
#include "subgraph.h"

namespace baton {

using subgraph_values::bytes_of;
using subgraph_values::set_shape;

namespace {

bool is_table_kind(baton_tensor_type key, baton_tensor_type value) {
  return (key == BATON_TYPE_INT64 && value == BATON_TYPE_STRING) ||
         (key == BATON_TYPE_STRING && value == BATON_TYPE_INT64);
}

std::string kind_text(baton_tensor_type key, baton_tensor_type value) {
  return std::string(type_name(key)) + " keys to " + type_name(value) + " values";
}

const char* const kKinds = "TFLite 2.9's tables map INT64 keys to STRING values or STRING keys to INT64 values";

// A table handle: one RESOURCE or INT32 element.
Status check_handle(const Tensor* t) {
  if (!t || (t->type != BATON_TYPE_RESOURCE && t->type != BATON_TYPE_INT32) || element_count(*t) != 1) {
    return Status::error("its first input must be a table handle (a RESOURCE or INT32 tensor of one element, "
                         "from HASHTABLE)");
  }
  return Status::ok();
}

int64_t int64_at(const Tensor& t, int64_t i) {
  int64_t v = 0;
  std::memcpy(&v, bytes_of(t) + 8 * i, sizeof v);
  return v;
}

}  // namespace

Status Subgraph::prepare_hashtable_node(Node& node) {
  const NodeInfo& info = *node.info;
  switch (node.runtime) {
    case RuntimeOp::hashtable: {
      if (!node.inputs.empty() || node.outputs.size() != 1) return Status::error("takes no input and gives one output");
      Tensor& out = *node.outputs[0];
      if (out.type != BATON_TYPE_RESOURCE && out.type != BATON_TYPE_INT32) {
        return Status::error("its output must be a RESOURCE or INT32 tensor, not " + std::string(type_name(out.type)));
      }
      if (!is_table_kind(info.table_key_type, info.table_value_type)) {
        return Status::error("table " + std::to_string(info.table_id) + " would map " +
                             kind_text(info.table_key_type, info.table_value_type) + "; " + kKinds);
      }
      out.shape = {1};
      out.bytes = sizeof(int32_t);
      return Status::ok();
    }
    case RuntimeOp::hashtable_import: {
      if (node.inputs.size() != 3 || !node.inputs[1] || !node.inputs[2] || !node.outputs.empty()) {
        return Status::error("takes a table handle, keys and values, and gives no output");
      }
      if (Status s = check_handle(node.inputs[0]); !s) return s;
      if (!is_table_kind(node.inputs[1]->type, node.inputs[2]->type)) {
        return Status::error("imports " + kind_text(node.inputs[1]->type, node.inputs[2]->type) + "; " + kKinds);
      }
      return Status::ok();
    }
    case RuntimeOp::hashtable_find: {
      if (node.inputs.size() != 3 || !node.inputs[1] || !node.inputs[2] || node.outputs.size() != 1) {
        return Status::error("takes a table handle, keys and a default value, and gives one output");
      }
      if (Status s = check_handle(node.inputs[0]); !s) return s;
      const Tensor& keys = *node.inputs[1];
      Tensor& out = *node.outputs[0];
      if (node.inputs[2]->type != out.type) {
        return Status::error("its default value is " + std::string(type_name(node.inputs[2]->type)) +
                             " but its output " + type_name(out.type) + "; they must be of one type");
      }
      if (!is_table_kind(keys.type, out.type)) {
        return Status::error("looks up " + std::string(type_name(keys.type)) + " keys for " + type_name(out.type) + " values; " + kKinds);
      }
      // A string output's size comes from the values found, and keys whose shape comes at invoke give the
      // output its shape there.
      node.deferred = out.type == BATON_TYPE_STRING || keys.dynamic;
      if (node.deferred) {
        out.dynamic = true;
      } else {
        set_shape(out, keys.shape);
      }
      return Status::ok();
    }
    case RuntimeOp::hashtable_size: {
      if (node.inputs.size() != 1 || node.outputs.size() != 1) return Status::error("takes a table handle and gives one output");
      if (Status s = check_handle(node.inputs[0]); !s) return s;
      Tensor& out = *node.outputs[0];
      if (out.type != BATON_TYPE_INT64) {
        return Status::error("its output must be INT64, not " + std::string(type_name(out.type)));
      }
      set_shape(out, {1});
      return Status::ok();
    }
    default: break;
  }
  return Status::error("is no hash table op");
}

Status Subgraph::invoke_hashtable_node(Node& node) {
  auto fail = [&](const std::string& why) { return Status::error(source() + ": " + node_label(node) + ": " + why); };
  if (node.runtime == RuntimeOp::hashtable) {
    const NodeInfo& info = *node.info;
    std::memcpy(node.outputs[0]->data, &info.table_id, sizeof info.table_id);
    auto [it, made] = state_.tables.try_emplace(info.table_id);
    if (made) {
      it->second.key_type = info.table_key_type;
      it->second.value_type = info.table_value_type;
    } else if (it->second.key_type != info.table_key_type || it->second.value_type != info.table_value_type) {
      return fail("table " + std::to_string(info.table_id) + " maps " +
                  kind_text(it->second.key_type, it->second.value_type) + "; this HASHTABLE asks for " +
                  kind_text(info.table_key_type, info.table_value_type));
    }
    return Status::ok();
  }
  int32_t id = 0;
  std::memcpy(&id, bytes_of(*node.inputs[0]), sizeof id);
  const auto found = state_.tables.find(id);
  if (found == state_.tables.end()) {
    return fail("no hash table " + std::to_string(id) + ": no HASHTABLE op has made it before this node ran");
  }
  HashTable& table = found->second;
  const std::string name = "hash table " + std::to_string(id) + " (" + kind_text(table.key_type, table.value_type) + ")";
  if (node.runtime == RuntimeOp::hashtable_size) {
    const int64_t size = table.key_type == BATON_TYPE_INT64 ? static_cast<int64_t>(table.text_of.size())
                                                            : static_cast<int64_t>(table.number_of.size());
    std::memcpy(node.outputs[0]->data, &size, sizeof size);
    return Status::ok();
  }
  const Tensor& keys = *node.inputs[1];
  const Tensor& other = node.runtime == RuntimeOp::hashtable_import ? *node.inputs[2] : *node.outputs[0];
  if (keys.type != table.key_type || other.type != table.value_type) {
    return fail(name + " cannot take " + kind_text(keys.type, other.type));
  }
  const int64_t n = element_count(keys);
  if (node.runtime == RuntimeOp::hashtable_import) {
    if (table.imported) return Status::ok();
    const Tensor& values = *node.inputs[2];
    if (keys.shape != values.shape) {
      return fail("keys " + shape_text(keys.shape) + " and values " + shape_text(values.shape) +
                  " must have one shape");
    }
    if (table.key_type == BATON_TYPE_INT64) {
      const strings::PackedStrings texts(bytes_of(values));
      for (int64_t i = 0; i < n; ++i) table.text_of.try_emplace(int64_at(keys, i), texts.at(i));
    } else {
      const strings::PackedStrings texts(bytes_of(keys));
      for (int64_t i = 0; i < n; ++i) table.number_of.try_emplace(std::string(texts.at(i)), int64_at(values, i));
    }
    table.imported = true;
    return Status::ok();
  }
  // HASHTABLE_FIND
  if (!table.imported) return fail(name + " is looked up before anything was imported into it");
  const Tensor& fallback = *node.inputs[2];
  if (element_count(fallback) < 1) return fail("its default value is empty; it needs one element");
  Tensor& out = *node.outputs[0];
  if (table.key_type == BATON_TYPE_INT64) {
    strings::PackedWriter writer;
    const std::string_view missing = strings::PackedStrings(bytes_of(fallback)).at(0);
    for (int64_t i = 0; i < n; ++i) {
      const auto hit = table.text_of.find(int64_at(keys, i));
      writer.add(hit == table.text_of.end() ? missing : std::string_view(hit->second));
    }
    if (out.shape != keys.shape) out.shape = keys.shape;
    out.bytes = writer.packed_size();
    if (Status s = give_dynamic_memory(node, out); !s) return s;
    writer.write_to(out.data);
    return Status::ok();
  }
  if (node.deferred) {
    set_shape(out, keys.shape);
    if (Status s = give_dynamic_memory(node, out); !s) return s;
  }
  const strings::PackedStrings texts(bytes_of(keys));
  const int64_t missing = int64_at(fallback, 0);
  for (int64_t i = 0; i < n; ++i) {
    const auto hit = table.number_of.find(texts.at(i));
    const int64_t v = hit == table.number_of.end() ? missing : hit->second;
    std::memcpy(out.data + 8 * i, &v, sizeof v);
  }
  return Status::ok();
}

}  // namespace baton
