#include "interpreter.h"

#include <algorithm>
#include <cstring>

#include "arena_planner.h"
#include "plugin_registry.h"
#include "sparse.h"

namespace baton {

namespace {

const baton_node* handle(const Node& n) { return reinterpret_cast<const baton_node*>(&n); }

std::string shape_text(const std::vector<int32_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

Expected<std::unique_ptr<Interpreter>> Interpreter::create(std::shared_ptr<Environment> env,
                                                           std::shared_ptr<const Model> model,
                                                           const InterpreterOptions& options) {
  if (!env || !model) return Status::error("interpreter: no environment or model");
  if (options.subgraph != 0) return Status::error("interpreter: only subgraph 0 can run");
  std::unique_ptr<Interpreter> interp(new Interpreter());
  interp->env_ = std::move(env);
  interp->model_ = std::move(model);
  interp->graph_ = &interp->model_->main();
  if (Status s = interp->build(); !s) return s;
  if (Status s = interp->resolve(); !s) return s;
  if (Status s = interp->prepare(); !s) return s;
  return interp;
}

Interpreter::~Interpreter() {
  for (Node& node : nodes_) {
    if (node.initialised && node.kernel && node.kernel->free) {
      try {
        node.kernel->free(node.plugin->state, node.state);
      } catch (...) {
      }
    }
  }
}

std::string Interpreter::node_label(const Node& node) const {
  return "node " + std::to_string(node.info->index) + " (" + node_op_name(*node.info) + " v" +
         std::to_string(node.info->version) + ")";
}

Status Interpreter::build() {
  const SubgraphInfo& g = *graph_;
  tensors_.resize(g.tensors.size());
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const TensorInfo& info = g.tensors[i];
    Tensor& t = tensors_[i];
    t.info = &info;
    t.index = static_cast<int32_t>(i);
    t.type = info.type;
    t.shape = info.shape;
    checked_byte_size(t.shape, t.type, &t.bytes);
    t.is_constant = info.is_constant;
    t.constant = info.is_constant ? info.data.data() : nullptr;
  }
  for (int32_t i : g.inputs) {
    tensors_[i].is_model_input = true;
    inputs_.push_back(&tensors_[i]);
  }
  for (int32_t i : g.outputs) {
    tensors_[i].is_model_output = true;
    outputs_.push_back(&tensors_[i]);
  }
  nodes_.resize(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& node = nodes_[n];
    node.info = &g.nodes[n];
    for (int32_t t : node.info->inputs) node.inputs.push_back(t < 0 ? nullptr : &tensors_[t]);
    for (int32_t t : node.info->outputs) node.outputs.push_back(&tensors_[t]);
  }
  return Status::ok();
}

uint8_t* Interpreter::own_constant(size_t bytes) {
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64));
  if (!p) return nullptr;
  owned_constants_.emplace_back(p, &std::free);
  return p;
}

namespace {
constexpr int32_t kDensify = 124;  // TFLite's BuiltinOperator DENSIFY
}  // namespace

Status Interpreter::resolve() {
  const std::vector<LoadedPlugin*> packs = env_->registry().op_packs();
  for (Node& node : nodes_) {
    const NodeInfo& info = *node.info;
    // DENSIFY of a sparse constant is a change of storage format, done here once.
    if (info.op_code == kDensify && node.inputs.size() == 1 && node.outputs.size() == 1 && node.inputs[0] &&
        node.inputs[0]->is_constant && node.inputs[0]->info->sparsity) {
      std::vector<uint8_t> dense;
      if (Status s = densify(*node.inputs[0]->info, dense); !s) {
        return Status::error(model_->source() + ": " + node_label(node) + ": " + s.message());
      }
      Tensor& out = *node.outputs[0];
      if (out.type != node.inputs[0]->type || out.bytes != dense.size()) {
        return Status::error(model_->source() + ": " + node_label(node) + ": output tensor " +
                             std::to_string(out.index) + " does not match the densified input's type and shape");
      }
      uint8_t* buffer = own_constant(dense.size());
      if (!buffer) return Status::error(model_->source() + ": out of memory densifying " + node_label(node));
      std::memcpy(buffer, dense.data(), dense.size());
      out.is_constant = true;
      out.constant = buffer;
      node.folded = true;
      ++folded_nodes_;
      folded_bytes_ += dense.size();
      continue;
    }
    for (LoadedPlugin* pack : packs) {
      if (const OpDecl* op = pack->find_op(info.op_code, info.custom_name, info.version)) {
        node.plugin = pack;
        node.kernel = &op->kernel;
        break;
      }
    }
    if (node.kernel) {
      if (Status s = fold(node); !s) return s;
      continue;
    }
    // Name the op, the version the model needs and every range that is loaded for it.
    std::string loaded;
    for (LoadedPlugin* pack : packs) {
      for (const OpDecl& op : pack->ops) {
        if (op.code == info.op_code && (info.op_code != BATON_OP_CUSTOM || op.custom_name == info.custom_name)) {
          loaded += (loaded.empty() ? "" : ", ") + pack->name + " has " + op.describe();
        }
      }
    }
    const std::string what = info.op_code == BATON_OP_CUSTOM ? "custom op '" + info.custom_name + "'"
                                                            : "op " + op_name(info.op_code);
    return Status::error(model_->source() + ": " + node_label(node) + ": no op pack supports " + what +
                         " version " + std::to_string(info.version) +
                         (loaded.empty() ? " (no loaded op pack declares this op; " + std::to_string(packs.size()) +
                                               " op packs loaded)"
                                         : " (loaded: " + loaded + ")"));
  }
  return Status::ok();
}

// A builtin node whose inputs are all constant runs once now; its outputs become constants. Custom ops
// are left alone: they may keep state or read something other than their inputs.
Status Interpreter::fold(Node& node) {
  if (node.info->op_code == BATON_OP_CUSTOM || node.inputs.empty()) return Status::ok();
  bool any_input = false;
  for (const Tensor* t : node.inputs) {
    if (t && !t->is_constant) return Status::ok();
    any_input |= t != nullptr;
  }
  for (const Tensor* t : node.outputs) {
    if (t->is_model_output || t->info->is_variable) return Status::ok();
  }
  if (!any_input) return Status::ok();
  baton_error error;
  baton_status st = BATON_OK;
  for (Tensor* out : node.outputs) out->shape_writable = true;
  try {
    node.initialised = true;
    if (node.kernel->init) st = node.kernel->init(node.plugin->state, handle(node), &node.state, &error);
    if (st == BATON_OK) st = node.kernel->prepare(node.plugin->state, node.state, handle(node), &error);
  } catch (...) {
    st = BATON_ERROR;
    error.message = "the kernel threw an exception across the C boundary";
  }
  for (Tensor* out : node.outputs) out->shape_writable = false;
  if (st == BATON_OK) {
    for (Tensor* out : node.outputs) {
      out->data = own_constant(out->bytes);
      if (!out->data) return Status::error(model_->source() + ": out of memory folding " + node_label(node));
    }
    try {
      st = node.kernel->invoke(node.plugin->state, node.state, handle(node), &error);
    } catch (...) {
      st = BATON_ERROR;
      error.message = "the kernel threw an exception across the C boundary";
    }
  }
  if (st != BATON_OK) {
    return Status::error(model_->source() + ": " + node_label(node) + " in " + node.plugin->name +
                         ": failed while folding constants: " +
                         (error.message.empty() ? "no reason given" : error.message));
  }
  for (Tensor* out : node.outputs) {
    out->is_constant = true;
    out->constant = out->data;
    out->data = nullptr;
    folded_bytes_ += out->bytes;
  }
  if (node.kernel->free) {
    try {
      node.kernel->free(node.plugin->state, node.state);
    } catch (...) {
    }
  }
  node.initialised = false;
  node.state = nullptr;
  node.folded = true;
  ++folded_nodes_;
  return Status::ok();
}

Status Interpreter::prepare() {
  for (Tensor& t : tensors_) {
    if (!t.is_constant) t.data = nullptr;  // memory is planned after every node is prepared
  }
  for (Node& node : nodes_) {
    if (node.folded) continue;
    baton_error error;
    baton_status st = BATON_OK;
    for (Tensor* out : node.outputs) out->shape_writable = true;
    try {
      if (!node.initialised) {
        node.initialised = true;
        if (node.kernel->init) st = node.kernel->init(node.plugin->state, handle(node), &node.state, &error);
      }
      if (st == BATON_OK) st = node.kernel->prepare(node.plugin->state, node.state, handle(node), &error);
    } catch (...) {
      st = BATON_ERROR;
      error.message = "the kernel threw an exception across the C boundary";
    }
    for (Tensor* out : node.outputs) out->shape_writable = false;
    if (st != BATON_OK) {
      return Status::error(model_->source() + ": " + node_label(node) + " in " + node.plugin->name +
                           ": prepare failed: " + (error.message.empty() ? "no reason given" : error.message));
    }
  }
  if (Status s = plan_memory(); !s) return s;
  needs_prepare_ = false;
  return Status::ok();
}

Status Interpreter::plan_memory() {
  // Lifetimes in steps: step s is node s; model inputs are alive from the start, outputs to the end.
  const int last_step = std::max<int>(0, static_cast<int>(nodes_.size()) - 1);
  std::vector<int> first(tensors_.size(), -1), last(tensors_.size(), -1);
  auto touch = [&](const Tensor* t, int step) {
    if (!t || t->is_constant) return;
    int i = t->index;
    if (first[i] < 0 || step < first[i]) first[i] = step;
    last[i] = std::max(last[i], step);
  };
  for (const Tensor* t : inputs_) touch(t, 0);
  for (size_t s = 0; s < nodes_.size(); ++s) {
    if (nodes_[s].folded) continue;
    for (const Tensor* t : nodes_[s].inputs) touch(t, static_cast<int>(s));
    for (const Tensor* t : nodes_[s].outputs) touch(t, static_cast<int>(s));
  }
  for (const Tensor* t : outputs_) touch(t, last_step);
  for (const Tensor& t : tensors_) {
    if (t.info->is_variable && !t.is_constant) {
      first[t.index] = 0;
      last[t.index] = last_step;
    }
  }
  std::vector<ArenaRequest> requests;
  std::vector<Tensor*> owners;
  naive_bytes_ = 0;
  for (Tensor& t : tensors_) {
    if (first[t.index] < 0) continue;
    requests.push_back({t.bytes, first[t.index], last[t.index]});
    owners.push_back(&t);
    naive_bytes_ += (t.bytes + 63) / 64 * 64;
  }
  ArenaPlan plan = plan_arena(requests, 64);
  arena_.reset();
  arena_bytes_ = plan.total;
  if (plan.total > 0) {
    arena_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (plan.total + 63) / 64 * 64)));
    if (!arena_) {
      return Status::error(model_->source() + ": cannot allocate the " + std::to_string(plan.total) + "-byte arena");
    }
    std::memset(arena_.get(), 0, plan.total);
  }
  for (size_t i = 0; i < owners.size(); ++i) owners[i]->data = arena_.get() + plan.offsets[i];
  return Status::ok();
}

Status Interpreter::resize_input(size_t i, const std::vector<int32_t>& shape) {
  if (i >= inputs_.size()) {
    return Status::error("input " + std::to_string(i) + " does not exist (the model has " +
                         std::to_string(inputs_.size()) + " inputs)");
  }
  Tensor& t = *inputs_[i];
  size_t bytes = 0;
  if (!checked_byte_size(shape, t.type, &bytes)) {
    return Status::error("input " + std::to_string(i) + " \"" + t.info->name + "\": shape " + shape_text(shape) +
                         " has a negative dimension or overflows");
  }
  if (shape == t.shape) return Status::ok();
  t.shape = shape;
  t.bytes = bytes;
  needs_prepare_ = true;
  return Status::ok();
}

Status Interpreter::invoke() {
  if (needs_prepare_) {
    if (Status s = prepare(); !s) return s;
  }
  for (Node& node : nodes_) {
    if (node.folded) continue;
    baton_error error;
    baton_status st;
    try {
      st = node.kernel->invoke(node.plugin->state, node.state, handle(node), &error);
    } catch (...) {
      st = BATON_ERROR;
      error.message = "the kernel threw an exception across the C boundary";
    }
    if (st != BATON_OK) {
      return Status::error(model_->source() + ": " + node_label(node) + " in " + node.plugin->name +
                           ": invoke failed: " + (error.message.empty() ? "no reason given" : error.message));
    }
  }
  return Status::ok();
}

int Interpreter::input_index(const std::string& name) const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i]->info->name == name) return static_cast<int>(i);
  }
  for (const SignatureInfo& sig : model_->signatures) {
    if (sig.subgraph != 0) continue;
    for (const auto& [n, t] : sig.inputs) {
      if (n != name) continue;
      for (size_t i = 0; i < inputs_.size(); ++i) {
        if (inputs_[i]->index == t) return static_cast<int>(i);
      }
    }
  }
  return -1;
}

int Interpreter::output_index(const std::string& name) const {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i]->info->name == name) return static_cast<int>(i);
  }
  for (const SignatureInfo& sig : model_->signatures) {
    if (sig.subgraph != 0) continue;
    for (const auto& [n, t] : sig.outputs) {
      if (n != name) continue;
      for (size_t i = 0; i < outputs_.size(); ++i) {
        if (outputs_[i]->index == t) return static_cast<int>(i);
      }
    }
  }
  return -1;
}

Placement Interpreter::placement(size_t node) const {
  const Node& n = nodes_.at(node);
  if (n.folded) return {n.plugin ? n.plugin->name : "", "folded", -1};
  return {n.plugin ? n.plugin->name : "", "op-pack", -1};
}

}  // namespace baton
