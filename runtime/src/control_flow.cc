// The nodes the runtime runs itself: WHILE, IF and CALL_ONCE run other subgraphs of the model (each
// resolved, partitioned, planned and prepared like the first, so their bodies run on the delegate chain
// too); VAR_HANDLE, ASSIGN_VARIABLE and READ_VARIABLE keep resource variables in the RunState, across
// invokes. Values cross between subgraphs by copy: each subgraph keeps its own arena.
#include <cstring>

#include "subgraph.h"

namespace baton {

namespace {

const uint8_t* bytes_of(const Tensor& t) { return t.is_constant ? t.constant : t.data; }

void copy_tensor(Tensor& to, const Tensor& from) {
  if (to.bytes == 0 || &to == &from || to.data == bytes_of(from)) return;
  std::memcpy(to.data, bytes_of(from), to.bytes);
}

std::string shape_text(const std::vector<int32_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

void set_shape(Tensor& t, const std::vector<int32_t>& shape) {
  t.shape = shape;
  checked_byte_size(t.shape, t.type, &t.bytes);
}

// Gives a called subgraph's inputs the shapes of the values it will get, checking count and types.
Status feed(Subgraph& callee, const std::vector<Tensor*>& values, size_t first, const std::string& role) {
  const size_t count = values.size() - first;
  if (callee.input_count() != count) {
    return Status::error(role + " subgraph " + std::to_string(callee.index()) + " takes " +
                         std::to_string(callee.input_count()) + " inputs but is given " + std::to_string(count));
  }
  for (size_t i = 0; i < count; ++i) {
    const Tensor* v = values[first + i];
    if (!v) return Status::error("input " + std::to_string(first + i) + " is omitted");
    if (callee.input(i).type != v->type) {
      return Status::error(role + " subgraph " + std::to_string(callee.index()) + " input " + std::to_string(i) +
                           " is " + type_name(callee.input(i).type) + " but is given " + type_name(v->type));
    }
    if (Status s = callee.resize_input(i, v->shape); !s) return s;
  }
  return callee.ensure_prepared();
}

}  // namespace

Subgraph& Subgraph::callee(const Node& node, int which) const {
  return *state_.subgraphs[node.info->callees[which]];
}

Status Subgraph::prepare_runtime_node(Node& node) {
  switch (node.runtime) {
    case RuntimeOp::while_loop: {
      Subgraph& cond = callee(node, 0);
      Subgraph& body = callee(node, 1);
      const size_t n = node.inputs.size();
      if (node.outputs.size() != n) {
        return Status::error("has " + std::to_string(n) + " inputs but " + std::to_string(node.outputs.size()) +
                             " outputs; a loop's outputs are its loop variables");
      }
      if (Status s = feed(body, node.inputs, 0, "body"); !s) return s;
      if (Status s = feed(cond, node.inputs, 0, "condition"); !s) return s;
      if (body.output_count() != n) {
        return Status::error("body subgraph " + std::to_string(body.index()) + " gives " +
                             std::to_string(body.output_count()) + " outputs for " + std::to_string(n) +
                             " loop variables");
      }
      if (cond.output_count() != 1 || cond.output(0).type != BATON_TYPE_BOOL || cond.output(0).bytes < 1) {
        return Status::error("condition subgraph " + std::to_string(cond.index()) + " must give one BOOL value");
      }
      bool passes_through = false;  // a body output that is one of its inputs: copy through scratch
      size_t total = 0;
      for (size_t i = 0; i < n; ++i) {
        const Tensor& in = body.input(i);
        const Tensor& out = body.output(i);
        if (out.type != in.type || out.shape != in.shape) {
          return Status::error("body subgraph " + std::to_string(body.index()) + " turns loop variable " +
                               std::to_string(i) + " from " + type_name(in.type) + " " + shape_text(in.shape) +
                               " into " + type_name(out.type) + " " + shape_text(out.shape) +
                               "; loop variables that change shape are not supported yet");
        }
        passes_through = passes_through || out.is_model_input;
        total += in.bytes;
        if (node.outputs[i]->type != in.type) {
          return Status::error("output " + std::to_string(i) + " is " + type_name(node.outputs[i]->type) +
                               " but loop variable " + std::to_string(i) + " is " + type_name(in.type));
        }
        set_shape(*node.outputs[i], in.shape);
      }
      node.scratch.assign(passes_through ? total : 0, 0);
      return Status::ok();
    }
    case RuntimeOp::if_else: {
      if (node.inputs.empty() || !node.inputs[0] || node.inputs[0]->type != BATON_TYPE_BOOL ||
          node.inputs[0]->bytes < 1) {
        return Status::error("input 0, the condition, must be one BOOL value");
      }
      Subgraph& then_branch = callee(node, 0);
      Subgraph& else_branch = callee(node, 1);
      if (Status s = feed(then_branch, node.inputs, 1, "then"); !s) return s;
      if (Status s = feed(else_branch, node.inputs, 1, "else"); !s) return s;
      for (Subgraph* branch : {&then_branch, &else_branch}) {
        if (branch->output_count() != node.outputs.size()) {
          return Status::error("subgraph " + std::to_string(branch->index()) + " gives " +
                               std::to_string(branch->output_count()) + " outputs for " +
                               std::to_string(node.outputs.size()));
        }
      }
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        const Tensor& a = then_branch.output(i);
        const Tensor& b = else_branch.output(i);
        if (a.type != node.outputs[i]->type || b.type != node.outputs[i]->type) {
          return Status::error("output " + std::to_string(i) + " is " + type_name(node.outputs[i]->type) +
                               " but the branches give " + type_name(a.type) + " and " + type_name(b.type));
        }
        if (a.shape != b.shape) {
          return Status::error("the branches give output " + std::to_string(i) + " the shapes " +
                               shape_text(a.shape) + " and " + shape_text(b.shape) +
                               "; outputs whose shape depends on the branch are not supported yet");
        }
        set_shape(*node.outputs[i], a.shape);
      }
      return Status::ok();
    }
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
      return Status::ok();
    case RuntimeOp::assign_variable:
      if (node.inputs.size() != 2 || !node.inputs[0] || node.inputs[0]->type != BATON_TYPE_RESOURCE ||
          !node.inputs[1]) {
        return Status::error("takes a RESOURCE input and a value");
      }
      return Status::ok();
    case RuntimeOp::none: break;
  }
  return Status::error("is not run by the runtime");
}

Status Subgraph::invoke_runtime_node(Node& node) {
  auto fail = [&](const std::string& why) { return Status::error(source() + ": " + node_label(node) + ": " + why); };
  switch (node.runtime) {
    case RuntimeOp::while_loop: {
      Subgraph& cond = callee(node, 0);
      Subgraph& body = callee(node, 1);
      const size_t n = node.inputs.size();
      for (size_t i = 0; i < n; ++i) copy_tensor(body.input(i), *node.inputs[i]);
      for (;;) {
        if (state_.cancel_requested.load(std::memory_order_relaxed)) return Status::error("invoke cancelled");
        for (size_t i = 0; i < n; ++i) copy_tensor(cond.input(i), body.input(i));
        if (Status s = cond.invoke(); !s) return s;
        if (!bytes_of(cond.output(0))[0]) break;
        if (Status s = body.invoke(); !s) return s;
        if (node.scratch.empty()) {
          for (size_t i = 0; i < n; ++i) copy_tensor(body.input(i), body.output(i));
          continue;
        }
        // Some output is an input too (a value passed through, maybe to another place): stage them all.
        uint8_t* at = node.scratch.data();
        for (size_t i = 0; i < n; ++i) {
          if (body.output(i).bytes) std::memcpy(at, bytes_of(body.output(i)), body.output(i).bytes);
          at += body.output(i).bytes;
        }
        at = node.scratch.data();
        for (size_t i = 0; i < n; ++i) {
          if (body.input(i).bytes) std::memcpy(body.input(i).data, at, body.input(i).bytes);
          at += body.input(i).bytes;
        }
      }
      for (size_t i = 0; i < n; ++i) copy_tensor(*node.outputs[i], body.input(i));
      return Status::ok();
    }
    case RuntimeOp::if_else: {
      Subgraph& branch = callee(node, bytes_of(*node.inputs[0])[0] ? 0 : 1);
      for (size_t i = 1; i < node.inputs.size(); ++i) copy_tensor(branch.input(i - 1), *node.inputs[i]);
      if (Status s = branch.invoke(); !s) return s;
      for (size_t i = 0; i < node.outputs.size(); ++i) copy_tensor(*node.outputs[i], branch.output(i));
      return Status::ok();
    }
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
      if (v.type != out.type || v.shape != out.shape) {
        return fail(name + " holds " + type_name(v.type) + " " + shape_text(v.shape) + " but the output is " +
                    type_name(out.type) + " " + shape_text(out.shape) +
                    "; reads whose shape is only known at run time are not supported yet");
      }
      if (out.bytes) std::memcpy(out.data, v.value.data(), out.bytes);
      return Status::ok();
    }
    case RuntimeOp::none: break;
  }
  return fail("is not run by the runtime");
}

}  // namespace baton
