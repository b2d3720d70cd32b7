// baton's C++ API for applications: RAII owners over the C API in c_api.h, with errors as exceptions
// (baton::Error) on this side of the boundary only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "baton/c_api.h"
#include "baton/string_tensor.hpp"

namespace baton::api {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Environment {
 public:
  explicit Environment(const baton_environment_options* options = nullptr)
      : env_(baton_environment_create(options)) {
    if (!env_) throw Error(baton_last_error());
  }
  // baton_environment_options as C++ values (each field as documented there).
  struct Settings {
    std::string config_path;  // empty: $BATON_CONFIG, then the usual places
    std::vector<std::string> plugin_dirs;
    std::vector<std::string> delegates;  // non-empty: replaces the configured delegate order
    bool no_delegates = false;
    int threads = 0;
    bool verbose = false;
    bool no_default_dirs = false;
    size_t max_model_bytes = 0, max_tensor_bytes = 0, max_arena_bytes = 0;
    std::vector<std::string> isolate;
    bool isolate_all = false;
    // Every message, from any thread, possibly from several at once (empty: stderr).
    std::function<void(baton_log_level, const char*)> log;
  };
  explicit Environment(const Settings& s) : log_(s.log ? std::make_unique<Log>(s.log) : nullptr) {
    std::vector<const char*> dirs, delegates, isolate;
    for (const std::string& d : s.plugin_dirs) dirs.push_back(d.c_str());
    for (const std::string& d : s.delegates) delegates.push_back(d.c_str());
    for (const std::string& i : s.isolate) isolate.push_back(i.c_str());
    baton_environment_options o{};
    o.struct_size = sizeof o;
    o.config_path = s.config_path.empty() ? nullptr : s.config_path.c_str();
    o.plugin_dirs = dirs.data();
    o.plugin_dir_count = dirs.size();
    o.delegates = delegates.data();
    o.delegate_count = delegates.size();
    o.no_delegates = s.no_delegates ? 1 : 0;
    o.threads = s.threads;
    o.verbose = s.verbose ? 1 : 0;
    o.no_default_dirs = s.no_default_dirs ? 1 : 0;
    o.max_model_bytes = s.max_model_bytes;
    o.max_tensor_bytes = s.max_tensor_bytes;
    o.max_arena_bytes = s.max_arena_bytes;
    o.isolate = isolate.data();
    o.isolate_count = isolate.size();
    o.isolate_all = s.isolate_all ? 1 : 0;
    if (log_) {
      o.log = [](void* user, baton_log_level level, const char* message) { (*static_cast<Log*>(user))(level, message); };
      o.log_user_data = log_.get();
    }
    env_ = baton_environment_create(&o);
    if (!env_) throw Error(baton_last_error());
  }
  ~Environment() { baton_environment_destroy(env_); }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  baton_environment* get() const { return env_; }
  // The thread count plugins run with unless their own section sets one.
  int threads() const { return baton_environment_threads(env_); }
  // What it loaded (see baton_environment_report): BATON_PLAN_TEXT or BATON_PLAN_JSON.
  std::string report(baton_plan_format format = BATON_PLAN_TEXT) const {
    const char* text = baton_environment_report(env_, format);
    if (!text) throw Error(baton_last_error());
    return text;
  }

 private:
  using Log = std::function<void(baton_log_level, const char*)>;
  std::unique_ptr<Log> log_;  // what the environment's log callback calls; outlives it
  baton_environment* env_ = nullptr;
};

// A model loaded once and shared by interpreters (see baton_model_create_from_file).
class Model {
 public:
  Model(const Environment& env, const std::string& path) : model_(baton_model_create_from_file(env.get(), path.c_str())) {
    if (!model_) throw Error(baton_last_error());
  }
  Model(const Environment& env, const void* data, size_t size)
      : model_(baton_model_create_from_buffer(env.get(), data, size)) {
    if (!model_) throw Error(baton_last_error());
  }
  ~Model() { baton_model_destroy(model_); }
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  const baton_model* get() const { return model_; }

  struct Signature {
    std::string key;
    int subgraph = 0;
    std::vector<std::pair<std::string, int>> inputs, outputs;  // name, tensor index in the subgraph
  };
  std::vector<Signature> signatures() const { return signatures_of(model_); }
  // Every subgraph's nodes, as the file gives them (see baton_model_get_node).
  struct Node {
    int subgraph = 0;
    std::string op;
    int32_t op_code = 0;
    int32_t version = 1;
    int32_t type = -1;  // a baton_tensor_type, -1: the node has no tensor
    bool runtime = false, stateful = false;
  };
  std::vector<Node> nodes() const {
    std::vector<Node> out;
    for (int32_t g = 0; g < baton_model_subgraph_count(model_); ++g) {
      for (int32_t i = 0; i < baton_model_node_count(model_, g); ++i) {
        baton_model_node n{};
        n.struct_size = sizeof n;
        if (baton_model_get_node(model_, g, i, &n) != BATON_OK) throw Error("node " + std::to_string(i) + " of subgraph " + std::to_string(g));
        out.push_back({g, n.op, n.op_code, n.version, n.type, n.runtime != 0, n.stateful != 0});
      }
    }
    return out;
  }
  // The same of a model handle of the C API.
  static std::vector<Signature> signatures_of(const baton_model* model) {
    std::vector<Signature> out;
    for (int32_t i = 0; i < baton_model_signature_count(model); ++i) {
      Signature s{baton_model_signature_key(model, i), baton_model_signature_subgraph(model, i), {}, {}};
      for (int32_t side = 0; side < 2; ++side) {
        for (int32_t k = 0; k < baton_model_signature_tensor_count(model, i, side); ++k) {
          (side ? s.outputs : s.inputs)
              .emplace_back(baton_model_signature_tensor_name(model, i, side, k), baton_model_signature_tensor_index(model, i, side, k));
        }
      }
      out.push_back(std::move(s));
    }
    return out;
  }

 private:
  baton_model* model_;
};

class Interpreter {
 public:
  Interpreter(Environment& env, const std::string& path)
      : interp_(baton_interpreter_create_from_file(env.get(), path.c_str())) {
    if (!interp_) throw Error(baton_last_error());
  }
  // Runs the subgraph of the model's signature `key` (see baton_interpreter_create_for_signature).
  struct Signature {
    std::string key;
  };
  Interpreter(Environment& env, const std::string& path, const Signature& signature)
      : interp_(baton_interpreter_create_for_signature(env.get(), path.c_str(), signature.key.c_str())) {
    if (!interp_) throw Error(baton_last_error());
  }
  // A signature (empty: subgraph 0) and strictness (see baton_interpreter_options).
  struct Options {
    std::string signature;
    bool strict = false;
  };
  Interpreter(Environment& env, const std::string& path, const Options& options) {
    const baton_interpreter_options o = c_options(options);
    interp_ = baton_interpreter_create_with_options(env.get(), path.c_str(), &o);
    if (!interp_) throw Error(baton_last_error());
  }
  // An interpreter of a shared model.
  Interpreter(Environment& env, const Model& model) : Interpreter(env, model, Options{}) {}
  Interpreter(Environment& env, const Model& model, const Options& options) {
    const baton_interpreter_options o = c_options(options);
    interp_ = baton_interpreter_create_from_model(env.get(), model.get(), &o);
    if (!interp_) throw Error(baton_last_error());
  }
  Interpreter(Environment& env, const void* data, size_t size)
      : interp_(baton_interpreter_create_from_buffer(env.get(), data, size)) {
    if (!interp_) throw Error(baton_last_error());
  }
  ~Interpreter() { baton_interpreter_destroy(interp_); }
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  int inputs() const { return baton_interpreter_input_count(interp_); }
  int outputs() const { return baton_interpreter_output_count(interp_); }
  const baton_tensor* input(int i) const { return baton_interpreter_input(interp_, i); }
  const baton_tensor* output(int i) const { return baton_interpreter_output(interp_, i); }

  template <typename T>
  void set_input(int i, const std::vector<T>& values) {
    check(baton_interpreter_set_input(interp_, i, values.data(), values.size() * sizeof(T)));
  }
  // A string input (BATON_TYPE_STRING): as many strings as its shape has elements.
  void set_input_strings(int i, const std::vector<std::string>& values) {
    strings::PackedWriter packed;
    for (const std::string& v : values) packed.add(v);
    const std::vector<uint8_t> bytes = packed.packed();
    check(baton_interpreter_set_input(interp_, i, bytes.data(), bytes.size()));
  }
  void resize_input(int i, const std::vector<int32_t>& dims) {
    check(baton_interpreter_resize_input(interp_, i, static_cast<int32_t>(dims.size()), dims.data()));
  }
  void invoke() { check(baton_interpreter_invoke(interp_)); }
  // Prepares now what resizes asked for (see baton_interpreter_allocate_tensors).
  void allocate_tensors() { check(baton_interpreter_allocate_tensors(interp_)); }
  int entry_subgraph() const { return baton_interpreter_entry_subgraph(interp_); }
  // Every tensor of the entry subgraph, by index (see baton_interpreter_tensor).
  int tensor_count() const { return baton_interpreter_tensor_count(interp_); }
  const baton_tensor* tensor(int index) const { return baton_interpreter_tensor(interp_, index); }
  void* tensor_data(int index) { return baton_interpreter_tensor_data(interp_, index); }
  baton_interpreter* get() const { return interp_; }
  // From another thread: the running invoke() throws Error("invoke cancelled").
  void cancel() { baton_interpreter_cancel(interp_); }
  // Variables back to their initial values (see baton_interpreter_reset_variables).
  void reset_variables() { baton_interpreter_reset_variables(interp_); }
  template <typename T>
  std::vector<T> output_values(int i) const {
    std::vector<T> out(baton_tensor_get_byte_size(output(i)) / sizeof(T));
    check(baton_interpreter_get_output(interp_, i, out.data(), out.size() * sizeof(T)));
    return out;
  }
  // A string output's strings, after invoke.
  std::vector<std::string> output_strings(int i) const {
    const std::vector<uint8_t> bytes = output_values<uint8_t>(i);
    const strings::PackedStrings packed(bytes.data());
    std::vector<std::string> out;
    for (int32_t k = 0; k < packed.count(); ++k) out.emplace_back(packed.at(k));
    return out;
  }

  // What the interpreter decided (see baton_interpreter_plan): text, a one-line summary, JSON or DOT.
  std::string plan(baton_plan_format format = BATON_PLAN_TEXT) {
    const char* text = baton_interpreter_plan(interp_, format);
    if (!text) throw Error("unknown plan format " + std::to_string(static_cast<int>(format)));
    return text;
  }
  int node_count() const { return baton_interpreter_node_count(interp_); }
  // Input i's bytes, copied in (its byte size exactly; a string input: TFLite's packed buffer).
  void set_input_bytes(int i, const void* data, size_t size) { check(baton_interpreter_set_input(interp_, i, data, size)); }
  // Invoke's failure as a value: the reason, or "" when it ran.
  std::string try_invoke() {
    return baton_interpreter_invoke(interp_) == BATON_OK ? std::string() : std::string(baton_interpreter_last_error(interp_));
  }

  // Each step's wall time over the invokes since profiling was turned on (see baton_interpreter_set_profiling).
  void set_profiling(bool on) { baton_interpreter_set_profiling(interp_, on ? 1 : 0); }
  struct Step {
    std::string op, plugin;
    int node = -1;
    double seconds = 0.0;
  };
  std::vector<Step> profile() const {
    std::vector<Step> out;
    for (int32_t i = 0; i < baton_interpreter_step_count(interp_); ++i) {
      baton_step_profile p{};
      p.struct_size = sizeof p;
      check(baton_interpreter_step_profile(interp_, i, &p));
      out.push_back({p.op, p.plugin, p.node, p.seconds});
    }
    return out;
  }
  baton_interpreter_memory memory() const {
    baton_interpreter_memory m{};
    m.struct_size = sizeof m;
    check(baton_interpreter_memory_info(interp_, &m));
    return m;
  }

  // Where each node of the entry subgraph runs.
  struct Placement {
    std::string op, kind, plugin;
    int partition = -1;
  };
  std::vector<Placement> placements() const {
    std::vector<Placement> out;
    for (int32_t i = 0; i < baton_interpreter_node_count(interp_); ++i) {
      baton_node_placement p{};
      p.struct_size = sizeof p;
      check(baton_interpreter_node_placement(interp_, i, &p));
      out.push_back({p.op, p.kind, p.plugin, p.partition});
    }
    return out;
  }

 private:
  // Borrows options.signature: used before `options` goes.
  static baton_interpreter_options c_options(const Options& options) {
    baton_interpreter_options o{};
    o.struct_size = sizeof o;
    o.signature_key = options.signature.empty() ? nullptr : options.signature.c_str();
    o.strict = options.strict ? 1 : 0;
    return o;
  }
  void check(baton_status st) const {
    if (st != BATON_OK) throw Error(baton_interpreter_last_error(interp_));
  }
  baton_interpreter* interp_;
};

// What the model at `path` contains, read without plugins (see baton_model_report).
inline std::string model_report(const std::string& path, baton_plan_format format = BATON_PLAN_TEXT) {
  const char* text = baton_model_report(path.c_str(), format);
  if (!text) throw Error(baton_last_error());
  return text;
}

// A shape as baton's messages write it: [1,224,224,3].
inline std::string shape_text(const std::vector<int32_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);  // appended apart: "," + to_string() trips a false -Wrestrict in GCC 12
  }
  return s + "]";
}

// A tensor's current shape.
inline std::vector<int32_t> shape_of(const baton_tensor* t) {
  std::vector<int32_t> dims(static_cast<size_t>(baton_tensor_get_rank(t)));
  for (size_t d = 0; d < dims.size(); ++d) dims[d] = baton_tensor_get_dim(t, static_cast<int32_t>(d));
  return dims;
}

}  // namespace baton::api
