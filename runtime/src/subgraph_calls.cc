// WHILE, IF, STABLEHLO_CASE and STABLEHLO_COMPOSITE run other subgraphs of the model, each prepared with
// the shapes its caller gives it (a composite runs its decomposition, as LiteRT does).
//
// Where those shapes hold still (a body that gives every loop variable back in the shape it took, branches
// that give the same shapes), the node's outputs are planned like any tensor and values cross by copy.
// Where they do not (a body that grows a variable, branches of different shapes, an input whose shape is
// known only at invoke), the node is deferred, as TFLite 2.9 does it: its outputs are dynamic (memory
// outside the arena, see executor.cc), the called subgraphs are prepared again at invoke for the shapes
// in hand (for a loop, each iteration whose shapes differ from the last), and the nodes after it are
// prepared at invoke as for any dynamic tensor. A loop's values wait between iterations in the node's
// `held` buffers, since preparing the body again moves its arena.
#include <span>

#include "subgraph_values.h"
#include "subgraph.h"

namespace baton {

using subgraph_values::bytes_of;
using subgraph_values::copy_tensor;
using subgraph_values::set_shape;

namespace {

const Tensor* dynamic_input(const std::vector<Tensor*>& inputs) {
  for (const Tensor* t : inputs) {
    if (t && t->dynamic) return t;
  }
  return nullptr;
}

std::string subgraph_text(const std::string& role, const Subgraph& g) {
  return role + " subgraph " + std::to_string(g.index());
}

// Checks that a called subgraph takes the values from `first` on: their count and types.
Status check_inputs(const Subgraph& callee, const std::vector<Tensor*>& values, size_t first, const std::string& role) {
  const size_t count = values.size() - first;
  if (callee.input_count() != count) {
    return Status::error(subgraph_text(role, callee) + " takes " + std::to_string(callee.input_count()) +
                         " inputs but is given " + std::to_string(count));
  }
  for (size_t i = 0; i < count; ++i) {
    const Tensor* v = values[first + i];
    if (!v) return Status::error("input " + std::to_string(first + i) + " is omitted");
    if (callee.input(i).type != v->type) {
      return Status::error(subgraph_text(role, callee) + " input " + std::to_string(i) + " is " +
                           type_name(callee.input(i).type) + " but is given " + type_name(v->type));
    }
  }
  return Status::ok();
}

// Gives a called subgraph's inputs the shapes of the values from `first` on and prepares it for them: again
// only where another node that runs it (or the last iteration of a loop) left it other shapes.
Status fit(Subgraph& callee, const std::vector<Tensor*>& values, size_t first) {
  for (size_t i = 0; i < callee.input_count(); ++i) {
    if (callee.input(i).shape != values[first + i]->shape) {
      if (Status s = callee.resize_input(i, values[first + i]->shape); !s) return s;
    }
  }
  return callee.ensure_prepared();
}

// A loop value kept between iterations; its buffer grows only when a larger value needs it.
void hold(Node::HeldValue& v, const Tensor& t) {
  if (v.shape != t.shape) v.shape = t.shape;
  v.bytes = t.bytes;
  if (v.data.size() < t.bytes) v.data.resize(t.bytes);
  if (t.bytes) std::memcpy(v.data.data(), bytes_of(t), t.bytes);
}

// As fit, for held loop values, which are then copied in.
Status load(Subgraph& callee, const std::vector<Node::HeldValue>& held) {
  for (size_t i = 0; i < held.size(); ++i) {
    if (callee.input(i).shape != held[i].shape) {
      if (Status s = callee.resize_input(i, held[i].shape); !s) return s;
    }
  }
  if (Status s = callee.ensure_prepared(); !s) return s;
  for (size_t i = 0; i < held.size(); ++i) {
    if (held[i].bytes) std::memcpy(callee.input(i).data, held[i].data.data(), held[i].bytes);
  }
  return Status::ok();
}

}  // namespace

Status Subgraph::prepare_while(Node& node) {
  Subgraph& cond = callee(node, 0);
  Subgraph& body = callee(node, 1);
  const size_t n = node.inputs.size();
  if (node.outputs.size() != n) {
    return Status::error("has " + std::to_string(n) + " inputs but " + std::to_string(node.outputs.size()) +
                         " outputs; a loop's outputs are its loop variables");
  }
  if (Status s = check_inputs(body, node.inputs, 0, "body"); !s) return s;
  if (Status s = check_inputs(cond, node.inputs, 0, "condition"); !s) return s;
  if (body.output_count() != n) {
    return Status::error(subgraph_text("body", body) + " gives " + std::to_string(body.output_count()) +
                         " outputs for " + std::to_string(n) + " loop variables");
  }
  if (cond.output_count() != 1 || cond.output(0).type != BATON_TYPE_BOOL) {
    return Status::error(subgraph_text("condition", cond) + " must give one BOOL value");
  }
  for (size_t i = 0; i < n; ++i) {
    if (body.output(i).type != body.input(i).type) {
      return Status::error(subgraph_text("body", body) + " turns loop variable " + std::to_string(i) + " from " +
                           type_name(body.input(i).type) + " into " + type_name(body.output(i).type));
    }
    if (node.outputs[i]->type != node.inputs[i]->type) {
      return Status::error("output " + std::to_string(i) + " is " + type_name(node.outputs[i]->type) +
                           " but loop variable " + std::to_string(i) + " is " + type_name(node.inputs[i]->type));
    }
  }
  // Shapes known only at invoke, or a body that changes them: every iteration is prepared for its shapes.
  bool dynamic = dynamic_input(node.inputs) != nullptr;
  if (!dynamic) {
    if (Status s = fit(body, node.inputs, 0); !s) return s;
    if (Status s = fit(cond, node.inputs, 0); !s) return s;
    if (!cond.output(0).dynamic && cond.output(0).bytes < 1) {
      return Status::error(subgraph_text("condition", cond) + " must give one BOOL value, not an empty one");
    }
    dynamic = cond.output(0).dynamic;
    for (size_t i = 0; i < n; ++i) {
      dynamic = dynamic || body.output(i).dynamic || body.output(i).shape != body.input(i).shape;
    }
  }
  if (dynamic) {
    node.deferred = true;
    node.scratch.clear();
    node.held.resize(n);
    for (Tensor* out : node.outputs) out->dynamic = true;
    return Status::ok();
  }
  bool passes_through = false;  // a body output that is one of its inputs: copy through scratch
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    passes_through = passes_through || body.output(i).is_model_input;
    total += body.input(i).bytes;
    set_shape(*node.outputs[i], body.input(i).shape);
  }
  node.scratch.assign(passes_through ? total : 0, 0);
  node.held.clear();
  return Status::ok();
}

Status Subgraph::invoke_while(Node& node) {
  Subgraph& cond = callee(node, 0);
  Subgraph& body = callee(node, 1);
  const size_t n = node.inputs.size();
  if (Status s = fit(body, node.inputs, 0); !s) return s;
  if (Status s = fit(cond, node.inputs, 0); !s) return s;
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

Status Subgraph::invoke_dynamic_while(Node& node) {
  Subgraph& cond = callee(node, 0);
  Subgraph& body = callee(node, 1);
  std::vector<Node::HeldValue>& held = node.held;
  for (size_t i = 0; i < held.size(); ++i) hold(held[i], *node.inputs[i]);
  for (;;) {
    if (state_.cancel_requested.load(std::memory_order_relaxed)) return Status::error("invoke cancelled");
    if (Status s = load(cond, held); !s) return s;
    if (Status s = cond.invoke(); !s) return s;
    if (cond.output(0).bytes < 1) {
      return Status::error(source() + ": " + node_label(node) + ": " + subgraph_text("condition", cond) +
                           " gave an empty value, not one BOOL");
    }
    if (!bytes_of(cond.output(0))[0]) break;
    if (Status s = load(body, held); !s) return s;
    if (Status s = body.invoke(); !s) return s;
    for (size_t i = 0; i < held.size(); ++i) hold(held[i], body.output(i));
  }
  for (size_t i = 0; i < held.size(); ++i) {
    Tensor& out = *node.outputs[i];
    set_shape(out, held[i].shape);
    if (Status s = give_dynamic_memory(node, out); !s) return s;
    if (out.bytes) std::memcpy(out.data, held[i].data.data(), out.bytes);
  }
  return Status::ok();
}

Status Subgraph::prepare_if(Node& node) {
  if (node.inputs.empty() || !node.inputs[0] || node.inputs[0]->type != BATON_TYPE_BOOL) {
    return Status::error("input 0, the condition, must be one BOOL value");
  }
  const Branch branches[] = {{&callee(node, 0), "then"}, {&callee(node, 1), "else"}};
  if (Status s = prepare_branches(node, branches, 1); !s) return s;
  if (!node.deferred && node.inputs[0]->bytes < 1) {
    return Status::error("input 0, the condition, must be one BOOL value, not an empty one");
  }
  return Status::ok();
}

// STABLEHLO_CASE: input 0, one INT32 value, picks the branch that runs on the other inputs.
Status Subgraph::prepare_case(Node& node) {
  if (node.inputs.empty() || !node.inputs[0] || node.inputs[0]->type != BATON_TYPE_INT32) {
    return Status::error("input 0, the branch index, must be one INT32 value");
  }
  std::vector<std::string> roles;
  for (size_t k = 0; k < node.info->callees.size(); ++k) roles.push_back("branch " + std::to_string(k));
  std::vector<Branch> branches;
  for (size_t k = 0; k < roles.size(); ++k) branches.push_back({&callee(node, static_cast<int>(k)), roles[k].c_str()});
  if (Status s = prepare_branches(node, branches, 1); !s) return s;
  if (!node.inputs[0]->dynamic && node.inputs[0]->bytes != sizeof(int32_t)) {
    return Status::error("input 0, the branch index, must be one INT32 value, not " +
                         std::to_string(node.inputs[0]->bytes / sizeof(int32_t)));
  }
  return Status::ok();
}

Status Subgraph::prepare_composite(Node& node) {
  const Branch decomposition[] = {{&callee(node, 0), "decomposition"}};
  return prepare_branches(node, decomposition, 0);
}

// The outputs' count and types against every branch's; the outputs' shapes when every branch gives the
// same fixed ones for the inputs' shapes, else the node is deferred: the branch taken is prepared at invoke
// and gives the outputs their shapes.
Status Subgraph::prepare_branches(Node& node, std::span<const Branch> branches, size_t first) {
  for (const Branch& b : branches) {
    if (Status s = check_inputs(*b.graph, node.inputs, first, b.role); !s) return s;
    if (b.graph->output_count() != node.outputs.size()) {
      return Status::error(subgraph_text(b.role, *b.graph) + " gives " + std::to_string(b.graph->output_count()) +
                           " outputs for " + std::to_string(node.outputs.size()));
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (b.graph->output(i).type != node.outputs[i]->type) {
        return Status::error("output " + std::to_string(i) + " is " + type_name(node.outputs[i]->type) + " but " +
                             subgraph_text(b.role, *b.graph) + " gives " + type_name(b.graph->output(i).type));
      }
    }
  }
  // An input known only at invoke (the condition too: its size), or branches that give different shapes.
  bool dynamic = dynamic_input(node.inputs) != nullptr;
  if (!dynamic) {
    for (const Branch& b : branches) {
      if (Status s = fit(*b.graph, node.inputs, first); !s) return s;
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      for (const Branch& b : branches) {
        const Tensor& out = b.graph->output(i);
        dynamic = dynamic || out.dynamic || out.shape != branches[0].graph->output(i).shape;
      }
    }
  }
  if (dynamic) {
    node.deferred = true;
    for (Tensor* out : node.outputs) out->dynamic = true;
    return Status::ok();
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) set_shape(*node.outputs[i], branches[0].graph->output(i).shape);
  return Status::ok();
}

Status Subgraph::invoke_if(Node& node) {
  if (node.deferred && node.inputs[0]->bytes < 1) {
    return Status::error(source() + ": " + node_label(node) + ": input 0, the condition, is empty, not one BOOL");
  }
  return run_branch(node, callee(node, bytes_of(*node.inputs[0])[0] ? 0 : 1), 1);
}

// An index out of range runs the last branch, as the StableHLO spec and LiteRT say.
Status Subgraph::invoke_case(Node& node) {
  const Tensor& index = *node.inputs[0];
  if (node.deferred && index.bytes != sizeof(int32_t)) {
    return Status::error(source() + ": " + node_label(node) + ": input 0, the branch index, has " +
                         std::to_string(index.bytes / sizeof(int32_t)) + " values, not one");
  }
  int32_t k = 0;
  std::memcpy(&k, bytes_of(index), sizeof k);
  const int32_t count = static_cast<int32_t>(node.info->callees.size());
  return run_branch(node, callee(node, k < 0 || k >= count ? count - 1 : k), 1);
}

Status Subgraph::invoke_composite(Node& node) { return run_branch(node, callee(node, 0), 0); }

// Runs `branch` on the node's inputs from `first` on and gives its outputs as the node's; a deferred
// node's outputs take the shapes the branch gave.
Status Subgraph::run_branch(Node& node, Subgraph& branch, size_t first) {
  if (Status s = fit(branch, node.inputs, first); !s) return s;
  for (size_t i = first; i < node.inputs.size(); ++i) copy_tensor(branch.input(i - first), *node.inputs[i]);
  if (Status s = branch.invoke(); !s) return s;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    Tensor& out = *node.outputs[i];
    if (node.deferred) {
      set_shape(out, branch.output(i).shape);
      if (Status s = give_dynamic_memory(node, out); !s) return s;
    }
    copy_tensor(out, branch.output(i));
  }
  return Status::ok();
}

}  // namespace baton
