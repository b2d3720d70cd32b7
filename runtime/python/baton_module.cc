// The Python module `baton`: tf.lite.Interpreter's methods and return formats over libbaton's own
// Environment and Interpreter, so the plugin folders, the config file, the delegate chain, limits and
// the crash journal behave exactly as in the `baton` tool. Nothing here runs a model: every call goes
// to baton::Interpreter.
//
// Ownership: a Python Interpreter owns one State (environment + interpreter) through a shared_ptr;
// every NumPy view that tensor() hands out holds another reference, so the memory a view points into
// outlives the Python object. Calls that may move tensor memory (allocate_tensors, resize_tensor_input,
// invoke, as in tf.lite) refuse while such views are alive.
//
// Threads: invoke, allocate_tensors and the load release the GIL, so interpreters in several Python
// threads run in parallel. One interpreter serves one call at a time: a second call while another
// thread is inside it raises RuntimeError instead of waiting (waiting for the lock while holding the
// GIL could deadlock with a log callback that needs the GIL).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "environment.h"
#include "interpreter.h"
#include "model.h"
#include "plan_report.h"
#include "string_arrays.h"

namespace py = pybind11;

namespace baton::python {

namespace {

// ---- logging: baton's log sink into logging.getLogger("baton") ----------------------------------

bool python_is_running() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

// Called from whatever thread logs: the caller's, or a plugin's worker while invoke runs without the
// GIL. Takes the GIL for the call into Python; after interpreter shutdown it falls back to stderr.
void log_to_python(baton_log_level level, const std::string& message) {
  if (!python_is_running()) {
    std::fprintf(stderr, "baton: %s\n", message.c_str());
    return;
  }
  py::gil_scoped_acquire gil;
  try {
    const int python_level = level == BATON_LOG_ERROR     ? 40
                             : level == BATON_LOG_WARNING ? 30
                             : level == BATON_LOG_INFO    ? 20
                                                          : 10;
    py::module_::import("logging").attr("getLogger")("baton").attr("log")(python_level, "%s", message);
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("baton log");
  }
}

// ---- types ----------------------------------------------------------------------------------------

// The NumPy dtype of a baton tensor type, as tf.lite maps TfLiteType; none for types NumPy cannot hold.
std::optional<py::dtype> numpy_dtype(baton_tensor_type type) {
  switch (type) {
    case BATON_TYPE_FLOAT32: return py::dtype("float32");
    case BATON_TYPE_FLOAT16: return py::dtype("float16");
    case BATON_TYPE_FLOAT64: return py::dtype("float64");
    case BATON_TYPE_INT8: return py::dtype("int8");
    case BATON_TYPE_INT16: return py::dtype("int16");
    case BATON_TYPE_INT32: return py::dtype("int32");
    case BATON_TYPE_INT64: return py::dtype("int64");
    case BATON_TYPE_UINT8: return py::dtype("uint8");
    case BATON_TYPE_UINT16: return py::dtype("uint16");
    case BATON_TYPE_UINT32: return py::dtype("uint32");
    case BATON_TYPE_UINT64: return py::dtype("uint64");
    case BATON_TYPE_BOOL: return py::dtype("bool");
    case BATON_TYPE_COMPLEX64: return py::dtype("complex64");
    case BATON_TYPE_COMPLEX128: return py::dtype("complex128");
    case BATON_TYPE_STRING: return py::dtype("S");
    default: return std::nullopt;
  }
}

// tf.lite's 'dtype' entry: the NumPy scalar type (numpy.float32), object for resources and variants.
py::object dtype_type(baton_tensor_type type) {
  auto dt = numpy_dtype(type);
  if (!dt) return py::module_::import("numpy").attr("object_");
  return dt->attr("type");
}

template <typename T, typename Container>
py::array_t<T> array_of(const Container& values) {
  py::array_t<T> out(static_cast<py::ssize_t>(values.size()));
  auto m = out.template mutable_unchecked<1>();
  for (size_t i = 0; i < values.size(); ++i) m(static_cast<py::ssize_t>(i)) = static_cast<T>(values[i]);
  return out;
}

std::string shape_text(const std::vector<int32_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// tf.lite's details dict for one tensor.
py::dict tensor_details(const Tensor& t) {
  const TensorInfo& info = *t.info;
  py::dict d;
  d["name"] = info.name;
  d["index"] = t.index;
  d["shape"] = array_of<int32_t>(t.shape);
  // As TFLite: the model's signature where it has one, else the current shape.
  d["shape_signature"] = array_of<int32_t>(info.shape_signature.empty() ? t.shape : info.shape_signature);
  d["dtype"] = dtype_type(t.type);
  const Quantization& q = info.quant;
  // The legacy pair holds only per-tensor quantization; per-channel tensors give (0.0, 0), as in TFLite.
  if (q.scales.size() == 1 && q.zero_points.size() == 1) {
    d["quantization"] = py::make_tuple(static_cast<double>(q.scales[0]), static_cast<int64_t>(q.zero_points[0]));
  } else {
    d["quantization"] = py::make_tuple(0.0, 0);
  }
  py::dict qp;
  qp["scales"] = array_of<float>(q.scales);
  qp["zero_points"] = array_of<int32_t>(q.zero_points);
  qp["quantized_dimension"] = q.quantized_dimension;
  d["quantization_parameters"] = qp;
  py::dict sp;
  if (info.sparsity) {
    const Sparsity& s = *info.sparsity;
    sp["traversal_order"] = array_of<int32_t>(s.traversal_order);
    sp["block_map"] = array_of<int32_t>(s.block_map);
    py::list dims;
    for (const Sparsity::Dimension& dim : s.dims) {
      py::dict m;
      m["format"] = dim.sparse ? 1 : 0;  // TFLite's DimensionType: DENSE 0, SPARSE_CSR 1
      if (dim.sparse) {
        m["array_segments"] = array_of<int32_t>(dim.segments);
        m["array_indices"] = array_of<int32_t>(dim.indices);
      } else {
        m["dense_size"] = dim.dense_size;
      }
      dims.append(m);
    }
    sp["dim_metadata"] = dims;
  }
  d["sparsity_parameters"] = sp;
  return d;
}

// ---- the interpreter ------------------------------------------------------------------------------

struct State {
  std::shared_ptr<Environment> env;
  std::shared_ptr<const Model> model;
  std::unique_ptr<Interpreter> interp;
  // The interpreters of signatures whose subgraph is not subgraph 0, by key, made by their first
  // get_signature_runner (as the C++ API's Interpreter::Signature makes one).
  std::map<std::string, std::unique_ptr<Interpreter>> signature_interps;
  std::mutex busy;  // one call at a time into `interp` or a signature's interpreter
};

class Busy {
 public:
  explicit Busy(State& s) : lock_(s.busy, std::try_to_lock) {
    if (!lock_.owns_lock()) {
      throw std::runtime_error("baton.Interpreter: another thread is using this interpreter; "
                               "use one interpreter per thread");
    }
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

std::vector<std::string> string_list(const py::object& o, const char* what) {
  std::vector<std::string> out;
  if (o.is_none()) return out;
  if (py::isinstance<py::str>(o)) throw py::value_error(std::string(what) + " must be a list of strings, not a string");
  for (py::handle h : o) {
    if (py::isinstance<py::str>(h)) {
      out.push_back(h.cast<std::string>());
    } else {
      out.push_back(py::str(py::module_::import("os").attr("fspath")(h)).cast<std::string>());
    }
  }
  return out;
}

class PyInterpreter {
 public:
  PyInterpreter(py::object model_path, py::object model_content, py::object experimental_delegates,
                py::object num_threads, py::object config, py::object plugin_dirs, py::object delegates,
                bool no_delegates, bool strict, size_t max_model_bytes, size_t max_tensor_bytes,
                size_t max_arena_bytes, py::object isolate) {
    if (!experimental_delegates.is_none() && py::len(experimental_delegates) > 0) {
      throw py::value_error(
          "baton.Interpreter: experimental_delegates: tf.lite delegate objects cannot be hosted by baton; "
          "baton's delegates are plugins: name them in order with delegates=[\"xnnpack\", ...] (or the config "
          "file's `delegates` key)");
    }
    EnvironmentOptions eo;
    if (!num_threads.is_none()) {
      if (!py::isinstance<py::int_>(num_threads) || py::isinstance<py::bool_>(num_threads)) {
        throw py::value_error("type of num_threads should be int");
      }
      const int n = num_threads.cast<int>();
      if (n < 1 && n != -1) throw py::value_error("num_threads should be >= 1 or -1 (the default)");
      eo.threads = n == -1 ? 0 : n;
    }
    if (!config.is_none()) eo.config_path = py::str(py::module_::import("os").attr("fspath")(config));
    if (py::isinstance<py::str>(plugin_dirs)) plugin_dirs = py::make_tuple(plugin_dirs);
    eo.plugin_dirs = string_list(plugin_dirs, "plugin_dirs");
    if (!delegates.is_none()) eo.delegates = string_list(delegates, "delegates");
    eo.no_delegates = no_delegates;
    if (py::isinstance<py::str>(isolate)) isolate = py::make_tuple(isolate);
    for (const std::string& name : string_list(isolate, "isolate")) {
      if (name == "all") {
        eo.isolate_all = true;
      } else {
        eo.isolate.push_back(name);
      }
    }
    eo.max_model_bytes = max_model_bytes;
    eo.max_tensor_bytes = max_tensor_bytes;
    eo.max_arena_bytes = max_arena_bytes;
    eo.log = log_to_python;

    const bool has_path = !model_path.is_none(), has_content = !model_content.is_none();
    if (has_path == has_content) {
      throw py::value_error("baton.Interpreter: give exactly one of model_path and model_content");
    }
    std::string path;
    std::vector<uint8_t> content;
    if (has_path) {
      path = py::str(py::module_::import("os").attr("fspath")(model_path));
    } else {
      py::buffer_info b = py::buffer(model_content).request();
      const auto* p = static_cast<const uint8_t*>(b.ptr);
      content.assign(p, p + b.size * b.itemsize);
    }

    state_ = std::make_shared<State>();
    std::string error;
    bool bad_arguments = false;
    {
      py::gil_scoped_release nogil;  // plugins may log from their threads while they load and prepare
      auto env = Environment::create(eo);
      if (!env) {
        error = env.error();
        bad_arguments = true;
      } else {
        state_->env = env.value();
        auto model = has_path ? load_model_file(path, state_->env->limits())
                              : load_model_buffer(content, "<buffer>", state_->env->limits());
        if (!model) {
          error = model.error();
        } else {
          state_->model = model.value();
          InterpreterOptions o;
          o.strict = strict_ = strict || state_->env->config().strict;
          auto interp = Interpreter::create(state_->env, model.value(), o);
          if (interp) state_->interp = std::move(interp.value()); else error = interp.error();
        }
      }
    }
    (void)bad_arguments;
    if (!state_->interp) throw py::value_error(error);
  }

  void allocate_tensors() {
    ensure_safe("allocate_tensors");
    Busy busy(*state_);
    Status s;
    {
      py::gil_scoped_release nogil;
      s = state_->interp->ensure_prepared();
    }
    if (!s) throw std::runtime_error(s.message());
    resized_ = false;
  }

  void invoke() {
    ensure_safe("invoke");
    Busy busy(*state_);
    Status s;
    {
      py::gil_scoped_release nogil;
      s = state_->interp->invoke();
    }
    if (!s) throw std::runtime_error(s.message());
    resized_ = false;  // invoke prepared what the resize asked for
  }

  py::list get_input_details() {
    Busy busy(*state_);
    py::list out;
    for (size_t i = 0; i < interp().input_count(); ++i) out.append(tensor_details(interp().input(i)));
    return out;
  }

  py::list get_output_details() {
    Busy busy(*state_);
    py::list out;
    for (size_t i = 0; i < interp().output_count(); ++i) out.append(tensor_details(interp().output(i)));
    return out;
  }

  py::list get_tensor_details() {
    Busy busy(*state_);
    py::list out;
    for (const Tensor& t : interp().tensors()) out.append(tensor_details(t));
    return out;
  }

  void set_tensor(int tensor_index, py::object value) {
    Busy busy(*state_);
    const size_t i = input_position(tensor_index, "set_tensor");
    set_input(i, value, "set_tensor");
  }

  py::array get_tensor(int tensor_index, int subgraph_index) {
    Busy busy(*state_);
    if (subgraph_index != 0) {
      throw py::value_error("get_tensor: this interpreter shows tensors of subgraph 0 only (a signature runner "
                            "gives the outputs of another subgraph's signature)");
    }
    return copy_of(tensor_at(tensor_index, "get_tensor"), "get_tensor", true);
  }

  // A copy of a tensor's values; `main`: a tensor of this interpreter (not of a signature's own).
  py::array copy_of(const Tensor& t, const char* what, bool main) {
    if (t.type == BATON_TYPE_STRING) {
      const uint8_t* src = t.is_constant ? t.constant : t.data;
      if (!src) {
        throw py::value_error(std::string(what) + ": string tensor " + std::to_string(t.index) + " \"" +
                              t.info->name + "\" has no value yet");
      }
      return python::strings_to_numpy(src, t.shape);
    }
    const uint8_t* src = readable_memory(t, what, main);
    py::array out(*numpy_dtype(t.type), std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()));
    if (t.bytes) std::memcpy(out.mutable_data(), src, t.bytes);
    return out;
  }

  // A view of the tensor's memory that stays valid (and keeps that memory alive) until the next
  // allocate_tensors or resize, which refuse while it exists.
  py::array view(int tensor_index) {
    Busy busy(*state_);
    const Tensor& t = tensor_at(tensor_index, "tensor");
    const uint8_t* src = readable_memory(t, "tensor");
    auto* keep = new std::shared_ptr<State>(state_);
    py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<State>*>(p); });
    std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
    py::array out(*numpy_dtype(t.type), shape, src, base);
    if (t.is_constant) out.attr("setflags")(py::arg("write") = false);
    return out;
  }

  void resize_tensor_input(int input_index, py::object tensor_size, bool strict) {
    ensure_safe("resize_tensor_input");
    Busy busy(*state_);
    const size_t i = input_position(input_index, "resize_tensor_input");
    py::array_t<int32_t> a = py::module_::import("numpy").attr("asarray")(tensor_size, "int32");
    if (a.ndim() != 1) throw py::value_error("resize_tensor_input: the shape must be a 1-D list of sizes");
    std::vector<int32_t> shape(a.data(), a.data() + a.size());
    const Tensor& t = interp().input(i);
    if (strict) {
      const std::vector<int32_t>& sig = t.info->shape_signature;
      bool ok = sig.size() == shape.size();
      for (size_t k = 0; ok && k < shape.size(); ++k) ok = sig[k] == -1 || sig[k] == shape[k];
      if (!ok) {
        throw py::value_error("resize_tensor_input: input \"" + t.info->name + "\" (tensor " +
                              std::to_string(t.index) + "): strict resizing may only change dimensions that "
                              "are -1 in its shape signature " + shape_text(sig.empty() ? t.shape : sig) +
                              "; asked for " + shape_text(shape));
      }
    }
    if (Status s = interp().resize_input(i, shape); !s) throw py::value_error("resize_tensor_input: " + s.message());
    // Until allocate_tensors the tensors keep their old memory, smaller or larger than the new shapes.
    resized_ = true;
  }

  py::dict get_signature_list() {
    py::dict out;
    for (const SignatureInfo& s : interp().model().signatures) {
      std::vector<std::string> in, outs;
      for (const auto& [name, t] : s.inputs) in.push_back(name);
      for (const auto& [name, t] : s.outputs) outs.push_back(name);
      std::sort(in.begin(), in.end());  // tf.lite lists them in name order
      std::sort(outs.begin(), outs.end());
      py::dict d;
      d["inputs"] = in;
      d["outputs"] = outs;
      out[py::str(s.key)] = d;
    }
    return out;
  }

  // The signature `key`, checked to be one baton can run; a signature of another subgraph than 0 gets its
  // interpreter here, on its first use.
  const SignatureInfo& signature(const py::object& key) {
    const auto& sigs = interp().model().signatures;
    const SignatureInfo* found = nullptr;
    if (key.is_none()) {
      if (sigs.size() != 1) {
        throw py::value_error("get_signature_runner: signature_key is None and the model has " +
                              std::to_string(sigs.size()) +
                              " signatures; None is only allowed when the model has exactly 1");
      }
      found = &sigs[0];
    } else {
      const std::string k = key.cast<std::string>();
      for (const SignatureInfo& s : sigs) {
        if (s.key == k) found = &s;
      }
      if (!found) {
        std::string keys;
        for (const SignatureInfo& s : sigs) keys += (keys.empty() ? "" : ", ") + s.key;
        throw py::value_error("get_signature_runner: the model has no signature \"" + k + "\" (it has: " +
                              (keys.empty() ? "none" : keys) + ")");
      }
    }
    Interpreter& runs = target(*found);
    for (const auto& [name, t] : found->inputs) sig_position(runs, t, true, *found, name);
    for (const auto& [name, t] : found->outputs) sig_position(runs, t, false, *found, name);
    return *found;
  }

  // The interpreter that runs a signature: this one for subgraph 0's, else one of the signature's own
  // (made on first use, with this one's environment and options; its resource variables are its own).
  Interpreter& target(const SignatureInfo& s) {
    if (s.subgraph == interp().entry_subgraph()) return interp();
    if (auto it = state_->signature_interps.find(s.key); it != state_->signature_interps.end()) return *it->second;
    Busy busy(*state_);
    InterpreterOptions o;
    o.signature = s.key;
    o.strict = strict_;
    std::string error;
    std::unique_ptr<Interpreter> made;
    {
      py::gil_scoped_release nogil;  // plugins may log from their threads while they prepare
      auto interp = Interpreter::create(state_->env, state_->model, o);
      if (interp) made = std::move(interp.value()); else error = interp.error();
    }
    if (!made) throw py::value_error("get_signature_runner: signature \"" + s.key + "\": " + error);
    return *(state_->signature_interps[s.key] = std::move(made));
  }

  // Where a signature's tensor is among the inputs (or outputs) of the interpreter that runs the signature.
  size_t sig_position(const Interpreter& runs, int32_t tensor, bool input, const SignatureInfo& s,
                      const std::string& name) {
    const size_t n = input ? runs.input_count() : runs.output_count();
    for (size_t i = 0; i < n; ++i) {
      if ((input ? runs.input(i) : runs.output(i)).index == tensor) return i;
    }
    throw py::value_error("signature \"" + s.key + "\": " + (input ? "input" : "output") + " \"" + name +
                          "\" is tensor " + std::to_string(tensor) + ", which is not an " +
                          (input ? "input" : "output") + " of its subgraph " + std::to_string(s.subgraph));
  }

  void reset_all_variables() {
    Busy busy(*state_);
    // Zero, and an int8 tensor its zero point, as tf.lite resets them.
    auto zero = [](const Interpreter& runs) {
      for (const Tensor& t : runs.tensors()) {
        if (!t.info->is_variable || !t.data) continue;
        int value = 0;
        if (t.info->type == BATON_TYPE_INT8 && !t.info->quant.zero_points.empty()) {
          value = static_cast<int>(t.info->quant.zero_points[0]);
        }
        std::memset(t.data, value, t.bytes);
      }
    };
    zero(interp());
    for (const auto& [key, runs] : state_->signature_interps) zero(*runs);
  }

  py::object plan() {
    Busy busy(*state_);
    return py::module_::import("json").attr("loads")(plan_json(interp()));
  }

  py::dict plugins() {
    const Environment& env = *state_->env;
    const PluginRegistry& reg = env.registry();
    py::dict out;
    out["plugin_dirs"] = reg.dirs();
    py::list plugins;
    for (const auto& p : reg.plugins()) {
      py::dict d;
      d["name"] = p->name;
      d["version"] = p->version;
      d["kind"] = p->kind_name();
      d["abi_version"] = std::to_string(p->abi_major) + "." + std::to_string(p->abi_minor);
      d["path"] = p->path;
      d["description"] = p->description;
      d["threads"] = p->threads;
      py::list ops;
      for (const OpDecl& op : p->ops) {
        py::dict o;
        o["op"] = op.code == BATON_OP_CUSTOM ? op.custom_name : op_name(op.code);
        o["custom"] = op.code == BATON_OP_CUSTOM;
        o["min_version"] = op.min_version;
        o["max_version"] = op.max_version;
        ops.append(o);
      }
      d["ops"] = ops;
      plugins.append(d);
    }
    out["plugins"] = plugins;
    std::vector<std::string> chain;
    for (const LoadedPlugin* d : env.delegate_chain()) chain.push_back(d->name);
    out["delegate_chain"] = chain;
    out["delegate_chain_source"] = env.chain_source();
    py::list skipped;
    for (const SkippedPlugin& s : reg.skipped()) {
      py::dict d;
      d["path"] = s.path;
      d["reason"] = s.reason;
      skipped.append(d);
    }
    out["skipped"] = skipped;
    return out;
  }

  // For the signature runner.
  Interpreter& interp() { return *state_->interp; }
  State& state() { return *state_; }

  void ensure_safe(const char* what) {
    // This object holds one reference; every live view from tensor() holds another.
    const long views = state_.use_count() - 1;
    if (views > 0) {
      throw std::runtime_error(std::string(what) + ": " + std::to_string(views) +
                               " NumPy array(s) from tensor() still point into the interpreter's memory, which "
                               "this call may move; drop them first (keep the function tensor() returns, and "
                               "call it again afterwards)");
    }
  }

  size_t input_position(int tensor_index, const char* what) {
    for (size_t i = 0; i < interp().input_count(); ++i) {
      if (interp().input(i).index == tensor_index) return i;
    }
    throw py::value_error(std::string(what) + ": tensor " + std::to_string(tensor_index) +
                          " is not an input of the model (input tensors: " + input_list() + ")");
  }

  std::string input_list() {
    std::string s;
    for (size_t i = 0; i < interp().input_count(); ++i) {
      s += (i ? ", " : "") + std::to_string(interp().input(i).index) + " \"" + interp().input(i).info->name + "\"";
    }
    return s;
  }

  const Tensor& tensor_at(int tensor_index, const char* what) {
    const auto& tensors = interp().tensors();
    if (tensor_index < 0 || static_cast<size_t>(tensor_index) >= tensors.size()) {
      throw py::value_error(std::string(what) + ": tensor " + std::to_string(tensor_index) +
                            " does not exist (the model has " + std::to_string(tensors.size()) + " tensors)");
    }
    return tensors[tensor_index];
  }

  // Memory to read a tensor from: its constant data or its arena memory (prepared first if a resize
  // asked for it, as tf.lite needs allocate_tensors before).
  const uint8_t* readable_memory(const Tensor& t, const char* what, bool main = true) {
    if (!numpy_dtype(t.type) || element_size(t.type) == 0) {
      throw py::value_error(std::string(what) + ": tensor " + std::to_string(t.index) + " \"" + t.info->name +
                            "\" has type " + type_name(t.type) + ", which baton's Python module cannot show");
    }
    const uint8_t* p = t.is_constant ? t.constant : t.data;
    if ((!p && t.bytes > 0) || (main && resized_ && !t.is_constant)) {
      throw py::value_error(std::string(what) + ": tensor " + std::to_string(t.index) + " \"" + t.info->name +
                            "\" has no memory now (call allocate_tensors() after resize_tensor_input)");
    }
    return p;
  }

  void set_input(size_t i, py::handle value, const char* what) { set_input(interp(), i, value, what); }

  // Input `i` of `runs` (this interpreter, or a signature's own).
  void set_input(Interpreter& runs, size_t i, py::handle value, const char* what) {
    const bool main = &runs == &interp();
    Tensor& t = runs.input(i);
    const std::string label = "input " + std::to_string(i) + " \"" + t.info->name + "\" (tensor " +
                              std::to_string(t.index) + ")";
    if (t.type == BATON_TYPE_STRING) {
      const std::vector<uint8_t> packed = python::numpy_to_strings(value, t.shape, std::string(what) + ": " + label);
      if (Status s = runs.set_string_input(i, packed.data(), packed.size()); !s) {
        throw py::value_error(std::string(what) + ": " + s.message());
      }
      return;
    }
    auto expected = numpy_dtype(t.type);
    if (!expected || element_size(t.type) == 0) {
      throw py::value_error(std::string(what) + ": " + label + " has type " + type_name(t.type) +
                            ", which baton's Python module cannot set");
    }
    py::array a = py::module_::import("numpy").attr("asarray")(value);
    if (!a.dtype().is(*expected)) {
      throw py::value_error(std::string(what) + ": " + label + " expects " +
                            py::str(*expected).cast<std::string>() + " values, got " +
                            py::str(a.dtype()).cast<std::string>());
    }
    std::vector<int32_t> shape(a.shape(), a.shape() + a.ndim());
    if (shape != t.shape) {
      throw py::value_error(std::string(what) + ": " + label + " has shape " + shape_text(t.shape) + ", got " +
                            shape_text(shape) + " (resize_tensor_input changes an input's shape)");
    }
    if ((!t.data && t.bytes > 0) || (main && resized_)) {
      throw py::value_error(std::string(what) + ": " + label +
                            " has no memory now (call allocate_tensors() after resize_tensor_input)");
    }
    py::array c = py::module_::import("numpy").attr("ascontiguousarray")(a);
    std::memcpy(t.data, c.data(), t.bytes);
  }

 private:
  std::shared_ptr<State> state_;
  bool strict_ = false;
  bool resized_ = false;  // resize_tensor_input since the last allocate_tensors or invoke
};

// tf.lite's SignatureRunner: call it with the inputs by name; it returns the outputs by name.
class SignatureRunner {
 public:
  SignatureRunner(py::object owner, const std::string& key) : owner_(std::move(owner)), key_(key) {}

  PyInterpreter& in() { return owner_.cast<PyInterpreter&>(); }
  const SignatureInfo& sig() { return in().signature(py::str(key_)); }

  py::dict call(py::kwargs kwargs) {
    PyInterpreter& in = this->in();
    const SignatureInfo& s = sig();
    Interpreter& runs = in.target(s);
    const bool main = &runs == &in.interp();
    if (kwargs.size() != s.inputs.size()) {
      throw py::value_error("signature \"" + s.key + "\": expected " + std::to_string(s.inputs.size()) +
                            " inputs, got " + std::to_string(kwargs.size()));
    }
    std::vector<std::pair<size_t, py::array>> values;
    for (auto [k, v] : kwargs) {
      const std::string name = k.cast<std::string>();
      size_t pos = SIZE_MAX;
      for (const auto& [n, t] : s.inputs) {
        if (n == name) pos = in.sig_position(runs, t, true, s, n);
      }
      if (pos == SIZE_MAX) throw py::value_error("signature \"" + s.key + "\" has no input \"" + name + "\"");
      values.emplace_back(pos, py::module_::import("numpy").attr("asarray")(v));
    }
    // Resize what changed shape, as tf.lite's runner does, then set, invoke, copy the outputs out.
    for (auto& [pos, a] : values) {
      std::vector<int32_t> shape(a.shape(), a.shape() + a.ndim());
      if (shape == runs.input(pos).shape) continue;
      if (main) {
        in.resize_tensor_input(runs.input(pos).index, py::cast(shape), false);
      } else {
        Busy busy(in.state());
        if (Status st = runs.resize_input(pos, shape); !st) throw py::value_error("signature runner: " + st.message());
      }
    }
    if (main) {
      in.allocate_tensors();
    } else {
      Busy busy(in.state());
      Status st;
      {
        py::gil_scoped_release nogil;
        st = runs.ensure_prepared();
      }
      if (!st) throw std::runtime_error(st.message());
    }
    {
      Busy busy(in.state());
      for (auto& [pos, a] : values) in.set_input(runs, pos, a, "signature runner");
    }
    if (main) {
      in.invoke();
    } else {
      Busy busy(in.state());
      Status st;
      {
        py::gil_scoped_release nogil;
        st = runs.invoke();
      }
      if (!st) throw std::runtime_error(st.message());
    }
    Busy busy(in.state());
    py::dict out;
    for (const auto& [name, t] : s.outputs) {
      out[py::str(name)] = in.copy_of(runs.output(in.sig_position(runs, t, false, s, name)), "signature runner", main);
    }
    return out;
  }

  py::dict details(bool inputs) {
    PyInterpreter& in = this->in();
    const SignatureInfo& s = sig();
    Interpreter& runs = in.target(s);
    Busy busy(in.state());
    py::dict out;
    for (const auto& [name, t] : inputs ? s.inputs : s.outputs) {
      const size_t pos = in.sig_position(runs, t, inputs, s, name);
      out[py::str(name)] = tensor_details(inputs ? runs.input(pos) : runs.output(pos));
    }
    return out;
  }

 private:
  py::object owner_;  // the Python Interpreter: keeps it alive
  std::string key_;
};

}  // namespace

}  // namespace baton::python

using namespace baton;
using namespace baton::python;

PYBIND11_MODULE(baton, m) {
  m.doc() =
      "baton: run TensorFlow Lite models through baton's plugins (op packs and delegates).\n\n"
      "baton.Interpreter has tf.lite.Interpreter's methods and return formats; the plugin folders, the\n"
      "config file, the delegate chain and the limits work exactly as in the `baton` tool. baton's log\n"
      "goes to logging.getLogger('baton').";
  m.attr("__version__") = BATON_VERSION;

  py::class_<SignatureRunner>(m, "SignatureRunner",
                              "Runs one signature: call it with the inputs by name; returns the outputs by name.")
      .def("__call__", &SignatureRunner::call)
      .def("get_input_details", [](SignatureRunner& r) { return r.details(true); },
           "The inputs' details dicts (as Interpreter.get_input_details), by signature name.")
      .def("get_output_details", [](SignatureRunner& r) { return r.details(false); },
           "The outputs' details dicts, by signature name.");

  py::class_<PyInterpreter>(m, "Interpreter",
                            "A model loaded by baton, with tf.lite.Interpreter's methods.\n\n"
                            "Give model_path or model_content (bytes). num_threads: threads for every plugin that\n"
                            "does not set its own (-1 or None: the config's, else all cores). experimental_delegates\n"
                            "must be empty: tf.lite delegate objects cannot be hosted; name baton delegates with\n"
                            "delegates=[...]. baton's own keywords: config (a config file, replacing the search),\n"
                            "plugin_dirs (searched first), delegates (the chain, in order, replacing the\n"
                            "configured one), no_delegates, strict (fail when a node would fall back to op\n"
                            "packs), max_model_bytes / max_tensor_bytes / max_arena_bytes (0: the config's),\n"
                            "isolate (plugin names, or \"all\", to run in a process of their own: a crash or hang\n"
                            "there falls back instead of taking Python down; like isolation = process).\n"
                            "A bad argument, config or model raises ValueError with baton's message.")
      .def(py::init<py::object, py::object, py::object, py::object, py::object, py::object, py::object, bool, bool,
                    size_t, size_t, size_t, py::object>(),
           py::arg("model_path") = py::none(), py::arg("model_content") = py::none(),
           py::arg("experimental_delegates") = py::none(), py::arg("num_threads") = py::none(), py::kw_only(),
           py::arg("config") = py::none(), py::arg("plugin_dirs") = py::none(), py::arg("delegates") = py::none(),
           py::arg("no_delegates") = false, py::arg("strict") = false, py::arg("max_model_bytes") = 0,
           py::arg("max_tensor_bytes") = 0, py::arg("max_arena_bytes") = 0, py::arg("isolate") = py::none())
      .def("allocate_tensors", &PyInterpreter::allocate_tensors,
           "Prepares and plans memory again after resize_tensor_input (baton prepares at load). RuntimeError on failure.")
      .def("invoke", &PyInterpreter::invoke,
           "Runs the model; releases the GIL while it runs. RuntimeError carrying baton's message on failure.")
      .def("get_input_details", &PyInterpreter::get_input_details)
      .def("get_output_details", &PyInterpreter::get_output_details)
      .def("get_tensor_details", &PyInterpreter::get_tensor_details)
      .def("set_tensor", &PyInterpreter::set_tensor, py::arg("tensor_index"), py::arg("value"),
           "Copies value into a model input (by tensor index). ValueError naming the input on a wrong dtype or shape.")
      .def("get_tensor", &PyInterpreter::get_tensor, py::arg("tensor_index"), py::arg("subgraph_index") = 0,
           "A copy of a tensor's values.")
      .def(
          "tensor",
          [](py::object self, int tensor_index) {
            self.cast<PyInterpreter&>().view(tensor_index);  // checks the index now, as tf.lite does
            return py::cpp_function([self, tensor_index]() { return self.cast<PyInterpreter&>().view(tensor_index); });
          },
          py::arg("tensor_index"),
          "A function returning a NumPy view of the tensor's memory (writable for non-constants). Do not keep the\n"
          "array across allocate_tensors, resize_tensor_input or invoke: they raise RuntimeError while one is alive.")
      .def("resize_tensor_input", &PyInterpreter::resize_tensor_input, py::arg("input_index"), py::arg("tensor_size"),
           py::arg("strict") = false,
           "Gives an input (by tensor index) a new shape; allocate_tensors() applies it. strict: only dimensions that\n"
           "are -1 in the shape signature may change.")
      .def("get_signature_list", &PyInterpreter::get_signature_list,
           "{key: {'inputs': [names], 'outputs': [names]}} for every signature of the model.")
      .def(
          "get_signature_runner",
          [](py::object self, py::object signature_key) {
            const SignatureInfo& s = self.cast<PyInterpreter&>().signature(signature_key);
            return SignatureRunner(self, s.key);
          },
          py::arg("signature_key") = py::none(),
          "A SignatureRunner for the signature (None: the only one). A signature of another subgraph than 0 runs in\n"
          "an interpreter of its own, made here (its resource variables are its own); ValueError if it cannot run.")
      .def("reset_all_variables", &PyInterpreter::reset_all_variables,
           "Zeroes the model's variable tensors, as baton initialises them at allocation. baton has no resource "
           "variables yet; on a model without variables this is a no-op that succeeds.")
      .def("plan", &PyInterpreter::plan,
           "Where every node runs and why: the dict of `baton plan --format json`.")
      .def("plugins", &PyInterpreter::plugins,
           "The plugin folders, the loaded plugins with their ops, the delegate chain and the skipped files, with "
           "the fields of `baton plugins --json`.");
}
