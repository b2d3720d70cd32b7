// The nodes the runtime runs itself: WHILE, IF, STABLEHLO_CASE, CALL_ONCE and STABLEHLO_COMPOSITE run other
// subgraphs of the model (each resolved, partitioned, planned and prepared like the first, so their bodies
// run on the delegate chain too; all but CALL_ONCE are in subgraph_calls.cc); VAR_HANDLE, ASSIGN_VARIABLE and READ_VARIABLE keep
// resource variables in the RunState, across invokes. Values cross between subgraphs by copy: each
// subgraph keeps its own arena.
#include <algorithm>
#include <cstring>

#include "subgraph_values.h"
#include "subgraph.h"

namespace baton {

using subgraph_values::bytes_of;
using subgraph_values::set_shape;

Subgraph& Subgraph::callee(const Node& node, int which) const {
  return *state_.subgraphs[node.info->callees[which]];
}

// Whether a READ_VARIABLE may see its variable in a shape other than the one the model declares for its
// output: the declaration leaves a dimension open (-1 in the shape signature), or an ASSIGN_VARIABLE
// anywhere in the model that may write the same variable (the same VAR_HANDLE name, or a resource that
// comes from elsewhere, a subgraph input) assigns a tensor declared in another shape or with an open
// dimension. Only then is the read dynamic: the others keep their planned memory, and the nodes after
// them their plan (and their delegates).
bool Subgraph::read_may_change_shape(const Node& read) const {
  auto open = [](const TensorInfo& t) {
    return std::any_of(t.shape_signature.begin(), t.shape_signature.end(), [](int32_t d) { return d < 0; });
  };
  // The VAR_HANDLE of `g` that makes the resource `tensor`, if one does.
  auto handle_of = [](const SubgraphInfo& g, int32_t tensor) -> const NodeInfo* {
    for (const NodeInfo& n : g.nodes) {
      if (runtime_op(n.op_code) == RuntimeOp::var_handle && !n.outputs.empty() && n.outputs[0] == tensor) return &n;
    }
    return nullptr;
  };
  const TensorInfo& out = *read.outputs[0]->info;
  if (open(out)) return true;
  const NodeInfo* mine = handle_of(*graph_, read.info->inputs[0]);
  for (const SubgraphInfo& g : state_.model->subgraphs) {
    for (const NodeInfo& n : g.nodes) {
      if (runtime_op(n.op_code) != RuntimeOp::assign_variable || n.inputs.size() != 2 || n.inputs[1] < 0) continue;
      const NodeInfo* theirs = handle_of(g, n.inputs[0]);
      if (mine && theirs &&
          (mine->var_container != theirs->var_container || mine->var_shared_name != theirs->var_shared_name)) {
        continue;
      }
      const TensorInfo& value = g.tensors[n.inputs[1]];
      if (open(value) || value.shape != out.shape) return true;
    }
  }
  return false;
}

Status Subgraph::prepare_runtime_node(Node& node) {
  switch (node.runtime) {
    case RuntimeOp::while_loop: return prepare_while(node);
    case RuntimeOp::if_else: return prepare_if(node);
    case RuntimeOp::case_of: return prepare_case(node);
    case RuntimeOp::composite: return prepare_composite(node);
    case RuntimeOp::call_once: {
      Subgraph& init = callee(node, 0);
      if (init.input_count() != 0 || !node.inputs.empty()) {
        return Status::error("the initialisation subgraph " + std::to_string(init.index()) + " must take no inputs");
      }
      return init.ensure_prepared();
    }
    case RuntimeOp::var_handle:
      if (node.outputs.size() != 1 || node.outputs[0]->type != BATON_TYPE_RESOURCE) {
        return Status::error("must have one RESOURCE output");
      }
      node.variable = state_.variable_id(node.info->var_container, node.info->var_shared_name);
      return Status::ok();
    case RuntimeOp::read_variable:
      if (node.inputs.size() != 1 || !node.inputs[0] || node.inputs[0]->type != BATON_TYPE_RESOURCE ||
          node.outputs.size() != 1) {
        return Status::error("takes one RESOURCE input and gives one output");
      }
      if (read_may_change_shape(node)) {
        // The value's shape is the variable's at invoke, as in TFLite, where every read is dynamic.
        node.deferred = true;
        node.outputs[0]->dynamic = true;
      }
      return Status::ok();
    case RuntimeOp::assign_variable:
      if (node.inputs.size() != 2 || !node.inputs[0] || node.inputs[0]->type != BATON_TYPE_RESOURCE ||
          !node.inputs[1]) {
        return Status::error("takes a RESOURCE input and a value");
      }
      return Status::ok();
    case RuntimeOp::hashtable:
    case RuntimeOp::hashtable_find:
    case RuntimeOp::hashtable_import:
    case RuntimeOp::hashtable_size: return prepare_hashtable_node(node);
    case RuntimeOp::none: break;
  }
  return Status::error("is not run by the runtime");
}

Status Subgraph::invoke_runtime_node(Node& node) {
  auto fail = [&](const std::string& why) { return Status::error(source() + ": " + node_label(node) + ": " + why); };
  switch (node.runtime) {
    case RuntimeOp::while_loop: return node.deferred ? invoke_dynamic_while(node) : invoke_while(node);
    case RuntimeOp::if_else: return invoke_if(node);
    case RuntimeOp::case_of: return invoke_case(node);
    case RuntimeOp::composite: return invoke_composite(node);
    case RuntimeOp::call_once:
      if (node.called) return Status::ok();
      if (Status s = callee(node, 0).invoke(); !s) return s;
      node.called = true;
      return Status::ok();
    case RuntimeOp::var_handle:
      std::memcpy(node.outputs[0]->data, &node.variable, sizeof node.variable);
      return Status::ok();
    case RuntimeOp::read_variable:
    case RuntimeOp::assign_variable: {
      int32_t id = -1;
      std::memcpy(&id, bytes_of(*node.inputs[0]), sizeof id);
      if (id < 0 || static_cast<size_t>(id) >= state_.variables.size()) {
        return fail("resource " + std::to_string(id) + " is no variable");
      }
      ResourceVariable& v = state_.variables[id];
      const std::string name = "variable \"" + v.container + (v.container.empty() ? "" : "/") + v.shared_name + "\"";
      if (node.runtime == RuntimeOp::assign_variable) {
        const Tensor& value = *node.inputs[1];
        if (v.assigned && v.type != value.type) {
          return fail(name + " holds " + type_name(v.type) + ", cannot take " + type_name(value.type));
        }
        v.type = value.type;
        if (v.shape != value.shape) v.shape = value.shape;
        if (v.value.size() != value.bytes) v.value.resize(value.bytes);  // only when the size changes
        if (value.bytes) std::memcpy(v.value.data(), bytes_of(value), value.bytes);
        v.assigned = true;
        return Status::ok();
      }
      Tensor& out = *node.outputs[0];
      if (!v.assigned) return fail(name + " is read before anything is assigned to it");
      if (v.type != out.type) {
        return fail(name + " holds " + type_name(v.type) + " but the output is " + type_name(out.type));
      }
      if (node.deferred) {
        set_shape(out, v.shape);
        if (Status s = give_dynamic_memory(node, out); !s) return s;
      } else if (v.shape != out.shape) {
        // The model declares the read's shape and assigns nothing of another shape (read_may_change_shape),
        // but a value computed at run time came in another.
        return fail(name + " holds " + type_name(v.type) + " " + shape_text(v.shape) + " but the output is " +
                    shape_text(out.shape) + ", a shape the model fixes (no -1 in its shape signature, and no " +
                    "ASSIGN_VARIABLE of a tensor declared in another shape)");
      }
      if (out.bytes) std::memcpy(out.data, v.value.data(), out.bytes);
      return Status::ok();
    }
    case RuntimeOp::hashtable:
    case RuntimeOp::hashtable_find:
    case RuntimeOp::hashtable_import:
    case RuntimeOp::hashtable_size: return invoke_hashtable_node(node);
    case RuntimeOp::none: break;
  }
  return fail("is not run by the runtime");
}

}  // namespace baton
