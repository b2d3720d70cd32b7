// The C API over Environment and Interpreter. Nothing throws out of these functions.
#include "baton/c_api.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "environment.h"
#include "interpreter.h"
#include "model.h"
#include "model_report.h"
#include "plan_report.h"
#include "plugins_report.h"

struct baton_environment {
  std::shared_ptr<baton::Environment> env;
};

struct baton_model {
  std::shared_ptr<const baton::Model> model;
};

struct baton_interpreter {
  std::unique_ptr<baton::Interpreter> interp;
  mutable std::string last_error;
  std::string plan;  // the last baton_interpreter_plan's
  // What baton_interpreter_node_placement's strings point into: the nodes' op labels, made on first use,
  // and every kind and plugin name it has given (a fallback can move a node; the strings stay).
  mutable std::vector<std::string> ops;
  mutable std::set<std::string> names;
};

namespace {

thread_local std::string g_last_error;

template <typename T>
T* fail(const std::string& message) {
  g_last_error = message;
  return nullptr;
}

baton_status fail_on(const baton_interpreter* interp, const std::string& message) {
  interp->last_error = message;
  return BATON_ERROR;
}

const baton::Tensor* T(const baton_tensor* t) { return reinterpret_cast<const baton::Tensor*>(t); }

baton_interpreter* make_interpreter(baton_environment* env, baton::Expected<std::shared_ptr<const baton::Model>> model,
                                    baton::InterpreterOptions options = {}) {
  if (!model) return fail<baton_interpreter>(model.error());
  options.strict = options.strict || env->env->config().strict;
  auto interp = baton::Interpreter::create(env->env, std::move(model.value()), options);
  if (!interp) return fail<baton_interpreter>(interp.error());
  auto* out = new baton_interpreter;
  out->interp = std::move(interp.value());
  return out;
}

// The runtime's options from the caller's struct (NULL: none); fields past its struct_size read as zero.
baton::InterpreterOptions interpreter_options(const baton_interpreter_options* options) {
  baton_interpreter_options o{};
  if (options) std::memcpy(&o, options, std::min(options->struct_size, sizeof(o)));
  baton::InterpreterOptions io;
  if (o.signature_key) io.signature = o.signature_key;
  io.strict = o.strict != 0;
  return io;
}

}  // namespace

extern "C" {

const char* baton_last_error(void) { return g_last_error.c_str(); }

baton_environment* baton_environment_create(const baton_environment_options* options) {
  try {
    baton::EnvironmentOptions eo;
    if (options) {
      baton_environment_options o{};
      std::memcpy(&o, options, std::min(options->struct_size, sizeof(o)));
      if (o.config_path) eo.config_path = o.config_path;
      for (size_t i = 0; i < o.plugin_dir_count; ++i) eo.plugin_dirs.push_back(o.plugin_dirs[i]);
      if (o.delegate_count > 0) {
        eo.delegates.emplace();
        for (size_t i = 0; i < o.delegate_count; ++i) eo.delegates->push_back(o.delegates[i]);
      }
      eo.no_delegates = o.no_delegates != 0;
      eo.threads = o.threads;
      eo.verbose = o.verbose != 0;
      eo.use_default_dirs = o.no_default_dirs == 0;
      eo.max_model_bytes = o.max_model_bytes;
      eo.max_tensor_bytes = o.max_tensor_bytes;
      eo.max_arena_bytes = o.max_arena_bytes;
      for (size_t i = 0; i < o.isolate_count && o.isolate; ++i) {
        if (o.isolate[i]) eo.isolate.push_back(o.isolate[i]);
      }
      eo.isolate_all = o.isolate_all != 0;
      for (size_t i = 0; i < o.foreign_delegate_count && o.foreign_delegates; ++i) {
        const baton_foreign_delegate& f = o.foreign_delegates[i];
        eo.foreign_delegates.push_back({f.kind ? f.kind : "", f.object, f.name ? f.name : ""});
      }
      if (o.log) {
        eo.log = [fn = o.log, user = o.log_user_data](baton_log_level level, const std::string& message) {
          fn(user, level, message.c_str());
        };
      }
    }
    auto env = baton::Environment::create(eo);
    if (!env) return fail<baton_environment>(env.error());
    auto* out = new baton_environment;
    out->env = std::move(env.value());
    return out;
  } catch (const std::exception& e) {
    return fail<baton_environment>(std::string("environment: ") + e.what());
  }
}

void baton_environment_destroy(baton_environment* env) { delete env; }

const char* baton_config_file(const char* config_path) {
  thread_local std::string found;
  auto path = baton::find_config_file(config_path ? config_path : "");
  if (!path) return fail<const char>(path.status().message());
  found = path.value().value_or("");
  return found.c_str();
}

int32_t baton_environment_plugin_count(const baton_environment* env) {
  return env ? static_cast<int32_t>(env->env->registry().plugins().size()) : 0;
}

const char* baton_environment_plugin_name(const baton_environment* env, int32_t i) {
  if (!env || i < 0 || i >= baton_environment_plugin_count(env)) return nullptr;
  return env->env->registry().plugins()[static_cast<size_t>(i)]->name.c_str();
}

uint64_t baton_environment_plugin_deaths(const baton_environment* env, int32_t i) {
  const char* name = baton_environment_plugin_name(env, i);
  return name ? env->env->plugin_deaths(name) : 0;
}

int32_t baton_parse_byte_limit(const char* text, size_t* bytes) {
  size_t parsed = 0;
  if (!text || !bytes || !baton::parse_byte_limit(text, &parsed)) return 0;
  *bytes = parsed;
  return 1;
}

const char* baton_environment_report(const baton_environment* env, baton_plan_format format) {
  thread_local std::string report;
  if (!env) return fail<const char>("baton_environment_report: null environment");
  switch (format) {
    case BATON_PLAN_TEXT: report = baton::plugins_text(*env->env); break;
    case BATON_PLAN_JSON: report = baton::plugins_json(*env->env); break;
    default: return fail<const char>("baton_environment_report: format " + std::to_string(static_cast<int>(format)) +
                                     " is not BATON_PLAN_TEXT or BATON_PLAN_JSON");
  }
  return report.c_str();
}

const char* baton_model_report(const char* path, baton_plan_format format) {
  thread_local std::string report;
  if (!path) return fail<const char>("baton_model_report: null path");
  if (format != BATON_PLAN_TEXT && format != BATON_PLAN_JSON) {
    return fail<const char>("baton_model_report: format " + std::to_string(static_cast<int>(format)) +
                            " is not BATON_PLAN_TEXT or BATON_PLAN_JSON");
  }
  try {
    auto model = baton::load_model_file(path);
    if (!model) return fail<const char>(model.error());
    report = format == BATON_PLAN_TEXT ? baton::model_text(*model.value()) : baton::model_json(*model.value());
    return report.c_str();
  } catch (const std::exception& e) {
    return fail<const char>(std::string(path) + ": " + e.what());
  }
}

baton_interpreter* baton_interpreter_create_from_file(baton_environment* env, const char* path) {
  if (!env || !path) return fail<baton_interpreter>("baton_interpreter_create_from_file: null argument");
  try {
    return make_interpreter(env, baton::load_model_file(path, env->env->limits()));
  } catch (const std::exception& e) {
    return fail<baton_interpreter>(std::string(path) + ": " + e.what());
  }
}

baton_interpreter* baton_interpreter_create_for_signature(baton_environment* env, const char* path,
                                                          const char* signature_key) {
  if (!env || !path || !signature_key) {
    return fail<baton_interpreter>("baton_interpreter_create_for_signature: null argument");
  }
  try {
    baton::InterpreterOptions o;
    o.signature = signature_key;
    return make_interpreter(env, baton::load_model_file(path, env->env->limits()), o);
  } catch (const std::exception& e) {
    return fail<baton_interpreter>(std::string(path) + ": " + e.what());
  }
}

baton_interpreter* baton_interpreter_create_from_buffer(baton_environment* env, const void* data, size_t size) {
  if (!env || (!data && size)) return fail<baton_interpreter>("baton_interpreter_create_from_buffer: null argument");
  try {
    return make_interpreter(env, baton::load_model_buffer({static_cast<const uint8_t*>(data), size}, "<buffer>", env->env->limits()));
  } catch (const std::exception& e) {
    return fail<baton_interpreter>(std::string("<buffer>: ") + e.what());
  }
}

baton_interpreter* baton_interpreter_create_with_options(baton_environment* env, const char* path,
                                                         const baton_interpreter_options* options) {
  if (!env || !path) return fail<baton_interpreter>("baton_interpreter_create_with_options: null argument");
  try {
    return make_interpreter(env, baton::load_model_file(path, env->env->limits()), interpreter_options(options));
  } catch (const std::exception& e) {
    return fail<baton_interpreter>(std::string(path) + ": " + e.what());
  }
}

namespace {

baton_model* make_model(baton::Expected<std::shared_ptr<const baton::Model>> loaded) {
  if (!loaded) return fail<baton_model>(loaded.error());
  return new baton_model{std::move(loaded.value())};
}

const baton::SignatureInfo* signature_at(const baton_model* model, int32_t i) {
  if (!model || i < 0 || static_cast<size_t>(i) >= model->model->signatures.size()) return nullptr;
  return &model->model->signatures[static_cast<size_t>(i)];
}

const std::pair<std::string, int32_t>* signature_tensor(const baton_model* model, int32_t i, int32_t outputs, int32_t k) {
  const baton::SignatureInfo* s = signature_at(model, i);
  if (!s) return nullptr;
  const auto& list = outputs ? s->outputs : s->inputs;
  if (k < 0 || static_cast<size_t>(k) >= list.size()) return nullptr;
  return &list[static_cast<size_t>(k)];
}

}  // namespace

baton_model* baton_model_create_from_file(const baton_environment* env, const char* path) {
  if (!env || !path) return fail<baton_model>("baton_model_create_from_file: null argument");
  try {
    return make_model(baton::load_model_file(path, env->env->limits()));
  } catch (const std::exception& e) {
    return fail<baton_model>(std::string(path) + ": " + e.what());
  }
}

baton_model* baton_model_create_from_buffer(const baton_environment* env, const void* data, size_t size) {
  if (!env || (!data && size)) return fail<baton_model>("baton_model_create_from_buffer: null argument");
  try {
    return make_model(baton::load_model_buffer({static_cast<const uint8_t*>(data), size}, "<buffer>", env->env->limits()));
  } catch (const std::exception& e) {
    return fail<baton_model>(std::string("<buffer>: ") + e.what());
  }
}

void baton_model_destroy(baton_model* model) { delete model; }

int32_t baton_model_subgraph_count(const baton_model* model) {
  return model ? static_cast<int32_t>(model->model->subgraphs.size()) : 0;
}

int32_t baton_model_node_count(const baton_model* model, int32_t subgraph) {
  if (!model || subgraph < 0 || subgraph >= baton_model_subgraph_count(model)) return -1;
  return static_cast<int32_t>(model->model->subgraphs[static_cast<size_t>(subgraph)].nodes.size());
}

baton_status baton_model_get_node(const baton_model* model, int32_t subgraph, int32_t node, baton_model_node* out) {
  const int32_t count = baton_model_node_count(model, subgraph);
  if (!out || count < 0 || node < 0 || node >= count) return BATON_INVALID_ARGUMENT;
  const baton::SubgraphInfo& g = model->model->subgraphs[static_cast<size_t>(subgraph)];
  const baton::NodeInfo& n = g.nodes[static_cast<size_t>(node)];
  baton_model_node v{};
  v.struct_size = std::min(out->struct_size, sizeof v);
  const bool named = n.op_code == BATON_OP_CUSTOM || n.op_code == BATON_OP_STABLEHLO_COMPOSITE;
  const char* builtin = baton::builtin_op_name(n.op_code);
  v.op = named ? baton::claim_name(n).c_str() : builtin ? builtin : "";
  v.op_code = n.op_code;
  v.version = n.version;
  v.type = -1;
  auto tensor = [&](int32_t t) { return t >= 0 && static_cast<size_t>(t) < g.tensors.size() ? &g.tensors[static_cast<size_t>(t)] : nullptr; };
  for (int32_t t : n.inputs) {
    if (tensor(t)) {
      v.type = tensor(t)->type;
      break;
    }
  }
  if (v.type < 0 && !n.outputs.empty() && tensor(n.outputs[0])) v.type = tensor(n.outputs[0])->type;
  v.runtime = baton::is_runtime_op(n.op_code) ? 1 : 0;
  bool stateful = baton::is_random_op(n.op_code) || n.op_code == BATON_OP_VAR_HANDLE ||
                  n.op_code == BATON_OP_READ_VARIABLE || n.op_code == BATON_OP_ASSIGN_VARIABLE;
  for (int32_t t : n.inputs) stateful = stateful || (tensor(t) && tensor(t)->is_variable);
  v.stateful = stateful ? 1 : 0;
  std::memcpy(out, &v, v.struct_size);
  return BATON_OK;
}

int32_t baton_model_signature_count(const baton_model* model) {
  return model ? static_cast<int32_t>(model->model->signatures.size()) : 0;
}
const char* baton_model_signature_key(const baton_model* model, int32_t i) {
  const baton::SignatureInfo* s = signature_at(model, i);
  return s ? s->key.c_str() : nullptr;
}
int32_t baton_model_signature_subgraph(const baton_model* model, int32_t i) {
  const baton::SignatureInfo* s = signature_at(model, i);
  return s ? s->subgraph : -1;
}
int32_t baton_model_signature_tensor_count(const baton_model* model, int32_t i, int32_t outputs) {
  const baton::SignatureInfo* s = signature_at(model, i);
  return s ? static_cast<int32_t>((outputs ? s->outputs : s->inputs).size()) : -1;
}
const char* baton_model_signature_tensor_name(const baton_model* model, int32_t i, int32_t outputs, int32_t k) {
  const auto* t = signature_tensor(model, i, outputs, k);
  return t ? t->first.c_str() : nullptr;
}
int32_t baton_model_signature_tensor_index(const baton_model* model, int32_t i, int32_t outputs, int32_t k) {
  const auto* t = signature_tensor(model, i, outputs, k);
  return t ? t->second : -1;
}

baton_interpreter* baton_interpreter_create_from_model(baton_environment* env, const baton_model* model,
                                                       const baton_interpreter_options* options) {
  if (!env || !model) return fail<baton_interpreter>("baton_interpreter_create_from_model: null argument");
  try {
    return make_interpreter(env, model->model, interpreter_options(options));
  } catch (const std::exception& e) {
    return fail<baton_interpreter>(model->model->source() + ": " + e.what());
  }
}

int32_t baton_environment_threads(const baton_environment* env) { return env ? env->env->threads() : 0; }

int32_t baton_environment_delegate_count(const baton_environment* env) {
  return env ? static_cast<int32_t>(env->env->delegate_chain().size()) : 0;
}

const char* baton_environment_delegate_name(const baton_environment* env, int32_t i) {
  if (!env || i < 0 || i >= baton_environment_delegate_count(env)) return nullptr;
  return env->env->delegate_chain()[static_cast<size_t>(i)]->name.c_str();
}

void baton_interpreter_destroy(baton_interpreter* interp) { delete interp; }

int32_t baton_interpreter_input_count(const baton_interpreter* interp) {
  return interp ? static_cast<int32_t>(interp->interp->input_count()) : 0;
}
int32_t baton_interpreter_output_count(const baton_interpreter* interp) {
  return interp ? static_cast<int32_t>(interp->interp->output_count()) : 0;
}
int32_t baton_interpreter_input_index(const baton_interpreter* interp, const char* name) {
  return interp && name ? interp->interp->input_index(name) : -1;
}
int32_t baton_interpreter_output_index(const baton_interpreter* interp, const char* name) {
  return interp && name ? interp->interp->output_index(name) : -1;
}
const baton_tensor* baton_interpreter_input(const baton_interpreter* interp, int32_t i) {
  if (!interp || i < 0 || static_cast<size_t>(i) >= interp->interp->input_count()) return nullptr;
  return reinterpret_cast<const baton_tensor*>(&interp->interp->input(i));
}
const baton_tensor* baton_interpreter_output(const baton_interpreter* interp, int32_t i) {
  if (!interp || i < 0 || static_cast<size_t>(i) >= interp->interp->output_count()) return nullptr;
  return reinterpret_cast<const baton_tensor*>(&interp->interp->output(i));
}

baton_status baton_interpreter_allocate_tensors(baton_interpreter* interp) {
  if (!interp) return BATON_INVALID_ARGUMENT;
  if (baton::Status s = interp->interp->ensure_prepared(); !s) return fail_on(interp, s.message());
  return BATON_OK;
}

int32_t baton_interpreter_entry_subgraph(const baton_interpreter* interp) {
  return interp ? interp->interp->entry_subgraph() : -1;
}

int32_t baton_interpreter_tensor_count(const baton_interpreter* interp) {
  return interp ? static_cast<int32_t>(interp->interp->tensors().size()) : 0;
}

const baton_tensor* baton_interpreter_tensor(const baton_interpreter* interp, int32_t index) {
  if (!interp || index < 0 || index >= baton_interpreter_tensor_count(interp)) return nullptr;
  return reinterpret_cast<const baton_tensor*>(&interp->interp->tensors()[static_cast<size_t>(index)]);
}

void* baton_interpreter_tensor_data(baton_interpreter* interp, int32_t index) {
  if (!interp || index < 0 || index >= baton_interpreter_tensor_count(interp)) return nullptr;
  const baton::Tensor& t = interp->interp->tensors()[static_cast<size_t>(index)];
  if (t.is_constant || interp->interp->needs_prepare()) return nullptr;
  return t.data;
}

baton_status baton_interpreter_resize_input(baton_interpreter* interp, int32_t i, int32_t rank, const int32_t* dims) {
  if (!interp) return BATON_INVALID_ARGUMENT;
  if (rank < 0 || rank > 16 || (rank > 0 && !dims)) return fail_on(interp, "resize_input: bad rank");
  try {
    baton::Status s = interp->interp->resize_input(static_cast<size_t>(i < 0 ? SIZE_MAX : i),
                                                   std::vector<int32_t>(dims, dims + rank));
    return s ? BATON_OK : fail_on(interp, s.message());
  } catch (const std::exception& e) {
    return fail_on(interp, e.what());
  }
}

baton_status baton_interpreter_set_input(baton_interpreter* interp, int32_t i, const void* data, size_t size) {
  if (!interp) return BATON_INVALID_ARGUMENT;
  if (i < 0 || static_cast<size_t>(i) >= interp->interp->input_count()) {
    return fail_on(interp, "set_input: input " + std::to_string(i) + " does not exist");
  }
  baton::Tensor& t = interp->interp->input(i);
  if (t.type == BATON_TYPE_STRING) {
    if (!data && size) return fail_on(interp, "set_input: no data");
    baton::Status s = interp->interp->set_string_input(static_cast<size_t>(i), data, size);
    return s ? BATON_OK : fail_on(interp, "set_input: " + s.message());
  }
  if (size != t.bytes) {
    return fail_on(interp, "set_input: input " + std::to_string(i) + " \"" + t.info->name + "\" needs " +
                               std::to_string(t.bytes) + " bytes, got " + std::to_string(size));
  }
  if (baton::Status s = interp->interp->ensure_prepared(); !s) return fail_on(interp, s.message());
  std::memcpy(t.data, data, size);
  return BATON_OK;
}

void baton_interpreter_cancel(baton_interpreter* interp) {
  if (interp) interp->interp->cancel();
}

void baton_interpreter_reset_variables(baton_interpreter* interp) {
  if (interp) interp->interp->reset_variables();
}

baton_status baton_interpreter_invoke(baton_interpreter* interp) {
  if (!interp) return BATON_INVALID_ARGUMENT;
  try {
    baton::Status s = interp->interp->invoke();
    return s ? BATON_OK : fail_on(interp, s.message());
  } catch (const std::exception& e) {
    return fail_on(interp, e.what());
  }
}

baton_status baton_interpreter_get_output(const baton_interpreter* interp, int32_t i, void* data, size_t size) {
  if (!interp) return BATON_INVALID_ARGUMENT;
  if (i < 0 || static_cast<size_t>(i) >= interp->interp->output_count()) {
    return fail_on(interp, "get_output: output " + std::to_string(i) + " does not exist");
  }
  const baton::Tensor& t = interp->interp->output(i);
  if (size != t.bytes) {
    return fail_on(interp, "get_output: output " + std::to_string(i) + " has " + std::to_string(t.bytes) +
                               " bytes, buffer has " + std::to_string(size));
  }
  const void* src = t.is_constant ? static_cast<const void*>(t.constant) : static_cast<const void*>(t.data);
  if (size && src) std::memcpy(data, src, size);
  return BATON_OK;
}

const char* baton_interpreter_last_error(const baton_interpreter* interp) {
  return interp ? interp->last_error.c_str() : "";
}

const char* baton_interpreter_plan(baton_interpreter* interp, baton_plan_format format) {
  if (!interp) return nullptr;
  switch (format) {
    case BATON_PLAN_SUMMARY: interp->plan = baton::plan_summary(*interp->interp); break;
    case BATON_PLAN_TEXT: interp->plan = baton::plan_text(*interp->interp); break;
    case BATON_PLAN_JSON: interp->plan = baton::plan_json(*interp->interp); break;
    case BATON_PLAN_DOT: interp->plan = baton::plan_dot(*interp->interp); break;
    default: return nullptr;
  }
  return interp->plan.c_str();
}

int32_t baton_interpreter_node_count(const baton_interpreter* interp) {
  return interp ? static_cast<int32_t>(interp->interp->nodes().size()) : 0;
}

baton_status baton_interpreter_node_placement(const baton_interpreter* interp, int32_t node,
                                              baton_node_placement* out) {
  if (!interp) return BATON_INVALID_ARGUMENT;
  if (!out || node < 0 || node >= baton_interpreter_node_count(interp)) {
    interp->last_error = out ? "node " + std::to_string(node) + " does not exist (the entry subgraph has " +
                                   std::to_string(baton_interpreter_node_count(interp)) + " nodes)"
                             : "no baton_node_placement to fill";
    return BATON_INVALID_ARGUMENT;
  }
  if (interp->ops.empty()) {
    for (const baton::Node& n : interp->interp->nodes()) {
      const baton::NodeInfo& info = *n.info;
      interp->ops.push_back((info.op_code == BATON_OP_CUSTOM ? "custom " + info.custom_name : baton::op_name(info.op_code)) +
                            " v" + std::to_string(info.version));
    }
  }
  const baton::Placement where = interp->interp->placement(static_cast<size_t>(node));
  baton_node_placement p{};
  p.struct_size = std::min(out->struct_size, sizeof p);
  p.op = interp->ops[static_cast<size_t>(node)].c_str();
  p.kind = interp->names.insert(where.kind).first->c_str();
  p.plugin = interp->names.insert(where.plugin).first->c_str();
  p.partition = where.partition;
  std::memcpy(out, &p, p.struct_size);
  return BATON_OK;
}

void baton_interpreter_set_profiling(baton_interpreter* interp, int32_t on) {
  if (!interp) return;
  interp->interp->set_profiling(on != 0);
  interp->interp->reset_profile();
}

int32_t baton_interpreter_step_count(const baton_interpreter* interp) {
  return interp ? static_cast<int32_t>(interp->interp->step_count()) : 0;
}

baton_status baton_interpreter_step_profile(const baton_interpreter* interp, int32_t step, baton_step_profile* out) {
  if (!interp) return BATON_INVALID_ARGUMENT;
  if (!out || step < 0 || step >= baton_interpreter_step_count(interp)) {
    interp->last_error = out ? "step " + std::to_string(step) + " does not exist (the entry subgraph has " +
                                   std::to_string(baton_interpreter_step_count(interp)) + " steps)"
                             : "no baton_step_profile to fill";
    return BATON_INVALID_ARGUMENT;
  }
  const auto i = static_cast<size_t>(step);
  const std::vector<double>& seconds = interp->interp->step_seconds();
  baton_step_profile p{};
  p.struct_size = std::min(out->struct_size, sizeof p);
  p.op = interp->names.insert(interp->interp->step_op(i)).first->c_str();
  p.plugin = interp->names.insert(interp->interp->step_plugin(i)).first->c_str();
  p.node = interp->interp->step_node(i);
  p.seconds = i < seconds.size() ? seconds[i] : 0.0;
  std::memcpy(out, &p, p.struct_size);
  return BATON_OK;
}

baton_status baton_interpreter_memory_info(const baton_interpreter* interp, baton_interpreter_memory* out) {
  if (!interp) return BATON_INVALID_ARGUMENT;
  if (!out) {
    interp->last_error = "no baton_interpreter_memory to fill";
    return BATON_INVALID_ARGUMENT;
  }
  const baton::Interpreter& in = *interp->interp;
  baton_interpreter_memory m{};
  m.struct_size = std::min(out->struct_size, sizeof m);
  m.arena_bytes = in.arena_bytes();
  m.naive_bytes = in.naive_bytes();
  m.folded_nodes = in.folded_nodes();
  m.folded_bytes = in.folded_bytes();
  m.dropped_nodes = in.dropped_nodes();
  std::memcpy(out, &m, m.struct_size);
  return BATON_OK;
}

const char* baton_tensor_get_name(const baton_tensor* t) { return t ? T(t)->info->name.c_str() : ""; }
baton_tensor_type baton_tensor_get_type(const baton_tensor* t) { return t ? T(t)->type : BATON_TYPE_FLOAT32; }
int32_t baton_tensor_get_rank(const baton_tensor* t) { return t ? static_cast<int32_t>(T(t)->shape.size()) : 0; }
int32_t baton_tensor_get_dim(const baton_tensor* t, int32_t i) {
  if (!t || i < 0 || static_cast<size_t>(i) >= T(t)->shape.size()) return -1;
  return T(t)->shape[i];
}
size_t baton_tensor_get_byte_size(const baton_tensor* t) { return t ? T(t)->bytes : 0; }
int32_t baton_tensor_get_signature_dim(const baton_tensor* t, int32_t i) {
  if (!t || i < 0) return -1;
  const baton::TensorInfo* info = T(t)->info;
  if (!info) return baton_tensor_get_dim(t, i);
  // A model without a signature declares every dimension fixed, at its shape.
  const std::vector<int32_t>& dims = info->shape_signature.empty() ? info->shape : info->shape_signature;
  if (static_cast<size_t>(i) >= dims.size()) return -1;
  return dims[i] < 0 ? -1 : dims[i];
}

int32_t baton_tensor_get_signature_rank(const baton_tensor* t) {
  return t && T(t)->info ? static_cast<int32_t>(T(t)->info->shape_signature.size()) : 0;
}

int32_t baton_tensor_get_index(const baton_tensor* t) { return t ? T(t)->index : -1; }
const void* baton_tensor_get_data(const baton_tensor* t) {
  if (!t) return nullptr;
  return T(t)->is_constant ? static_cast<const void*>(T(t)->constant) : static_cast<const void*>(T(t)->data);
}
int32_t baton_tensor_is_constant(const baton_tensor* t) { return t && T(t)->is_constant ? 1 : 0; }
int32_t baton_tensor_is_dynamic(const baton_tensor* t) { return t && T(t)->dynamic ? 1 : 0; }
int32_t baton_tensor_is_variable(const baton_tensor* t) { return t && T(t)->info && T(t)->info->is_variable ? 1 : 0; }
void baton_tensor_get_quantization(const baton_tensor* t, baton_quantization* out) {
  if (out) baton::quantization_of(t ? T(t) : nullptr, out);
}

int32_t baton_tensor_get_sparsity(const baton_tensor* t, baton_sparsity* out) {
  if (!t || !out || !T(t)->info || !T(t)->info->sparsity) return 0;
  const baton::Sparsity& sp = *T(t)->info->sparsity;
  baton_sparsity s{};
  s.struct_size = std::min(out->struct_size ? out->struct_size : sizeof s, sizeof s);
  s.traversal_order_count = static_cast<int32_t>(sp.traversal_order.size());
  s.traversal_order = sp.traversal_order.data();
  s.block_map_count = static_cast<int32_t>(sp.block_map.size());
  s.block_map = sp.block_map.data();
  s.dimension_count = static_cast<int32_t>(sp.dims.size());
  std::memcpy(out, &s, s.struct_size);
  return 1;
}

int32_t baton_tensor_get_sparsity_dimension(const baton_tensor* t, int32_t d, baton_sparsity_dimension* out) {
  if (!t || !out || !T(t)->info || !T(t)->info->sparsity) return 0;
  const baton::Sparsity& sp = *T(t)->info->sparsity;
  if (d < 0 || static_cast<size_t>(d) >= sp.dims.size()) return 0;
  const baton::Sparsity::Dimension& dim = sp.dims[static_cast<size_t>(d)];
  baton_sparsity_dimension s{};
  s.struct_size = std::min(out->struct_size ? out->struct_size : sizeof s, sizeof s);
  s.sparse = dim.sparse ? 1 : 0;
  s.dense_size = dim.dense_size;
  s.segment_count = static_cast<int32_t>(dim.segments.size());
  s.segments = dim.segments.data();
  s.index_count = static_cast<int32_t>(dim.indices.size());
  s.indices = dim.indices.data();
  std::memcpy(out, &s, s.struct_size);
  return 1;
}

}  // extern "C"
