// The Python module `baton`: tf.lite.Interpreter's methods and return formats over baton's public API
// (baton/baton.hpp over baton/c_api.h), so the plugin folders, the config file, the delegate chain,
// limits and the crash journal behave exactly as in the `baton` tool. Nothing here runs a model: every
// call goes to a baton_interpreter.
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

#include "baton/baton.hpp"
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
void log_to_python(baton_log_level level, const char* message) {
  if (!python_is_running()) {
    std::fprintf(stderr, "baton: %s\n", message);
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

// A tensor's current shape, and its shape signature as tf.lite reports it: the model's where it gives one,
// else the current shape.
std::vector<int32_t> shape_of(const baton_tensor* t) { return api::shape_of(t); }
std::vector<int32_t> shape_signature_of(const baton_tensor* t) {
  const int32_t rank = baton_tensor_get_signature_rank(t);
  if (rank == 0) return shape_of(t);
  std::vector<int32_t> sig(static_cast<size_t>(rank));
  for (int32_t i = 0; i < rank; ++i) sig[static_cast<size_t>(i)] = baton_tensor_get_signature_dim(t, i);
  return sig;
}

// tf.lite's details dict for one tensor.
py::dict tensor_details(const baton_tensor* t) {
  py::dict d;
  d["name"] = std::string(baton_tensor_get_name(t));
  d["index"] = baton_tensor_get_index(t);
  d["shape"] = array_of<int32_t>(shape_of(t));
  d["shape_signature"] = array_of<int32_t>(shape_signature_of(t));
  d["dtype"] = dtype_type(baton_tensor_get_type(t));
  baton_quantization q{};
  q.struct_size = sizeof q;
  baton_tensor_get_quantization(t, &q);
  std::vector<float> scales(q.scales, q.scales + q.scale_count);
  std::vector<int64_t> zero_points;
  if (q.zero_points) {
    zero_points.assign(q.zero_points, q.zero_points + q.scale_count);
  } else {
    zero_points.assign(static_cast<size_t>(q.scale_count), 0);  // NULL: all zero
  }
  // The legacy pair holds only per-tensor quantization; per-channel tensors give (0.0, 0), as in TFLite.
  if (scales.size() == 1 && zero_points.size() == 1) {
    d["quantization"] = py::make_tuple(static_cast<double>(scales[0]), zero_points[0]);
  } else {
    d["quantization"] = py::make_tuple(0.0, 0);
  }
  py::dict qp;
  qp["scales"] = array_of<float>(scales);
  qp["zero_points"] = array_of<int32_t>(zero_points);
  qp["quantized_dimension"] = q.quantized_dimension;
  d["quantization_parameters"] = qp;
  py::dict sp;
  baton_sparsity s{};
  s.struct_size = sizeof s;
  if (baton_tensor_get_sparsity(t, &s)) {
    sp["traversal_order"] = array_of<int32_t>(std::vector<int32_t>(s.traversal_order, s.traversal_order + s.traversal_order_count));
    sp["block_map"] = array_of<int32_t>(std::vector<int32_t>(s.block_map, s.block_map + s.block_map_count));
    py::list dims;
    for (int32_t k = 0; k < s.dimension_count; ++k) {
      baton_sparsity_dimension dim{};
      dim.struct_size = sizeof dim;
      baton_tensor_get_sparsity_dimension(t, k, &dim);
      py::dict m;
      m["format"] = dim.sparse ? 1 : 0;  // TFLite's DimensionType: DENSE 0, SPARSE_CSR 1
      if (dim.sparse) {
        m["array_segments"] = array_of<int32_t>(std::vector<int32_t>(dim.segments, dim.segments + dim.segment_count));
        m["array_indices"] = array_of<int32_t>(std::vector<int32_t>(dim.indices, dim.indices + dim.index_count));
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
  std::unique_ptr<api::Environment> env;  // declared first: destroyed after every interpreter in it
  std::unique_ptr<api::Model> model;
  std::unique_ptr<api::Interpreter> interp;
  // The interpreters of signatures whose subgraph is not the entry one, by key, made by their first
  // get_signature_runner (as the C++ API's Interpreter::Signature makes one).
  std::map<std::string, std::unique_ptr<api::Interpreter>> signature_interps;
  std::vector<api::Model::Signature> signatures;
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

std::string tensor_name(const baton_tensor* t) { return baton_tensor_get_name(t); }
int tensor_index(const baton_tensor* t) { return baton_tensor_get_index(t); }

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
    api::Environment::Settings eo;
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
    eo.delegates = string_list(delegates, "delegates");
    // delegates=[]: an empty chain, which is what no_delegates asks.
    eo.no_delegates = no_delegates || (!delegates.is_none() && eo.delegates.empty());
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
    {
      py::gil_scoped_release nogil;  // plugins may log from their threads while they load and prepare
      try {
        state_->env = std::make_unique<api::Environment>(eo);
        state_->model = has_path ? std::make_unique<api::Model>(*state_->env, path)
                                 : std::make_unique<api::Model>(*state_->env, content.data(), content.size());
        state_->signatures = state_->model->signatures();
        strict_ = strict;
        state_->interp = std::make_unique<api::Interpreter>(*state_->env, *state_->model, api::Interpreter::Options{"", strict});
      } catch (const api::Error& e) {
        error = e.what();
      }
    }
    if (!state_->interp) throw py::value_error(error);
  }

  void allocate_tensors() {
    ensure_safe("allocate_tensors");
    Busy busy(*state_);
    baton_status st;
    {
      py::gil_scoped_release nogil;
      st = baton_interpreter_allocate_tensors(interp().get());
    }
    if (st != BATON_OK) throw std::runtime_error(baton_interpreter_last_error(interp().get()));
    resized_ = false;
  }

  void invoke() {
    ensure_safe("invoke");
    Busy busy(*state_);
    baton_status st;
    {
      py::gil_scoped_release nogil;
      st = baton_interpreter_invoke(interp().get());
    }
    if (st != BATON_OK) throw std::runtime_error(baton_interpreter_last_error(interp().get()));
    resized_ = false;  // invoke prepared what the resize asked for
  }

  py::list get_input_details() {
    Busy busy(*state_);
    py::list out;
    for (int i = 0; i < interp().inputs(); ++i) out.append(tensor_details(interp().input(i)));
    return out;
  }

  py::list get_output_details() {
    Busy busy(*state_);
    py::list out;
    for (int i = 0; i < interp().outputs(); ++i) out.append(tensor_details(interp().output(i)));
    return out;
  }

  py::list get_tensor_details() {
    Busy busy(*state_);
    py::list out;
    for (int i = 0; i < interp().tensor_count(); ++i) out.append(tensor_details(interp().tensor(i)));
    return out;
  }

  void set_tensor(int tensor_index, py::object value) {
    Busy busy(*state_);
    const int i = input_position(tensor_index, "set_tensor");
    set_input(interp(), i, value, "set_tensor");
  }

  py::array get_tensor(int tensor_index, int subgraph_index) {
    Busy busy(*state_);
    if (subgraph_index != 0) {
      throw py::value_error("get_tensor: this interpreter shows tensors of subgraph 0 only (a signature runner "
                            "gives the outputs of another subgraph's signature)");
    }
    return copy_of(interp(), tensor_at(tensor_index, "get_tensor"), "get_tensor");
  }

  // A copy of the values of tensor `t` of `runs` (this interpreter, or a signature's own).
  py::array copy_of(api::Interpreter& runs, const baton_tensor* t, const char* what) {
    const std::vector<int32_t> shape = shape_of(t);
    if (baton_tensor_get_type(t) == BATON_TYPE_STRING) {
      const auto* src = static_cast<const uint8_t*>(baton_tensor_get_data(t));
      if (!src) {
        throw py::value_error(std::string(what) + ": string tensor " + std::to_string(tensor_index(t)) + " \"" +
                              tensor_name(t) + "\" has no value yet");
      }
      return python::strings_to_numpy(src, shape);
    }
    const uint8_t* src = readable_memory(runs, t, what);
    py::array out(*numpy_dtype(baton_tensor_get_type(t)), std::vector<py::ssize_t>(shape.begin(), shape.end()));
    const size_t bytes = baton_tensor_get_byte_size(t);
    if (bytes) std::memcpy(out.mutable_data(), src, bytes);
    return out;
  }

  // A view of the tensor's memory that stays valid (and keeps that memory alive) until the next
  // allocate_tensors or resize, which refuse while it exists.
  py::array view(int tensor_index) {
    Busy busy(*state_);
    const baton_tensor* t = tensor_at(tensor_index, "tensor");
    const uint8_t* src = readable_memory(interp(), t, "tensor");
    auto* keep = new std::shared_ptr<State>(state_);
    py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<State>*>(p); });
    const std::vector<int32_t> dims = shape_of(t);
    std::vector<py::ssize_t> shape(dims.begin(), dims.end());
    py::array out(*numpy_dtype(baton_tensor_get_type(t)), shape, src, base);
    if (baton_tensor_is_constant(t)) out.attr("setflags")(py::arg("write") = false);
    return out;
  }

  void resize_tensor_input(int input_index, py::object tensor_size, bool strict) {
    ensure_safe("resize_tensor_input");
    Busy busy(*state_);
    const int i = input_position(input_index, "resize_tensor_input");
    py::array_t<int32_t> a = py::module_::import("numpy").attr("asarray")(tensor_size, "int32");
    if (a.ndim() != 1) throw py::value_error("resize_tensor_input: the shape must be a 1-D list of sizes");
    std::vector<int32_t> shape(a.data(), a.data() + a.size());
    const baton_tensor* t = interp().input(i);
    if (strict) {
      const bool has_signature = baton_tensor_get_signature_rank(t) > 0;
      const std::vector<int32_t> sig = has_signature ? shape_signature_of(t) : std::vector<int32_t>{};
      bool ok = sig.size() == shape.size();
      for (size_t k = 0; ok && k < shape.size(); ++k) ok = sig[k] == -1 || sig[k] == shape[k];
      if (!ok) {
        throw py::value_error("resize_tensor_input: input \"" + tensor_name(t) + "\" (tensor " +
                              std::to_string(tensor_index(t)) + "): strict resizing may only change dimensions that "
                              "are -1 in its shape signature " + shape_text(sig.empty() ? shape_of(t) : sig) +
                              "; asked for " + shape_text(shape));
      }
    }
    if (baton_interpreter_resize_input(interp().get(), i, static_cast<int32_t>(shape.size()), shape.data()) != BATON_OK) {
      throw py::value_error(std::string("resize_tensor_input: ") + baton_interpreter_last_error(interp().get()));
    }
    // Until allocate_tensors the tensors keep their old memory, smaller or larger than the new shapes.
    resized_ = true;
  }

  py::dict get_signature_list() {
    py::dict out;
    for (const api::Model::Signature& s : state_->signatures) {
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

  // The signature `key`, checked to be one baton can run; a signature of another subgraph than the entry
  // one gets its interpreter here, on its first use.
  const api::Model::Signature& signature(const py::object& key) {
    const auto& sigs = state_->signatures;
    const api::Model::Signature* found = nullptr;
    if (key.is_none()) {
      if (sigs.size() != 1) {
        throw py::value_error("get_signature_runner: signature_key is None and the model has " +
                              std::to_string(sigs.size()) +
                              " signatures; None is only allowed when the model has exactly 1");
      }
      found = &sigs[0];
    } else {
      const std::string k = key.cast<std::string>();
      for (const api::Model::Signature& s : sigs) {
        if (s.key == k) found = &s;
      }
      if (!found) {
        std::string keys;
        for (const api::Model::Signature& s : sigs) keys += (keys.empty() ? "" : ", ") + s.key;
        throw py::value_error("get_signature_runner: the model has no signature \"" + k + "\" (it has: " +
                              (keys.empty() ? "none" : keys) + ")");
      }
    }
    api::Interpreter& runs = target(*found);
    for (const auto& [name, t] : found->inputs) sig_position(runs, t, true, *found, name);
    for (const auto& [name, t] : found->outputs) sig_position(runs, t, false, *found, name);
    return *found;
  }

  // The interpreter that runs a signature: this one for the entry subgraph's, else one of the signature's
  // own (made on first use, with this one's environment and options; its resource variables are its own).
  api::Interpreter& target(const api::Model::Signature& s) {
    if (s.subgraph == interp().entry_subgraph()) return interp();
    if (auto it = state_->signature_interps.find(s.key); it != state_->signature_interps.end()) return *it->second;
    Busy busy(*state_);
    std::string error;
    std::unique_ptr<api::Interpreter> made;
    {
      py::gil_scoped_release nogil;  // plugins may log from their threads while they prepare
      try {
        made = std::make_unique<api::Interpreter>(*state_->env, *state_->model, api::Interpreter::Options{s.key, strict_});
      } catch (const api::Error& e) {
        error = e.what();
      }
    }
    if (!made) throw py::value_error("get_signature_runner: signature \"" + s.key + "\": " + error);
    return *(state_->signature_interps[s.key] = std::move(made));
  }

  // Where a signature's tensor is among the inputs (or outputs) of the interpreter that runs the signature.
  int sig_position(const api::Interpreter& runs, int32_t tensor, bool input, const api::Model::Signature& s,
                   const std::string& name) {
    const int n = input ? runs.inputs() : runs.outputs();
    for (int i = 0; i < n; ++i) {
      if (tensor_index(input ? runs.input(i) : runs.output(i)) == tensor) return i;
    }
    throw py::value_error("signature \"" + s.key + "\": " + (input ? "input" : "output") + " \"" + name +
                          "\" is tensor " + std::to_string(tensor) + ", which is not an " +
                          (input ? "input" : "output") + " of its subgraph " + std::to_string(s.subgraph));
  }

  void reset_all_variables() {
    Busy busy(*state_);
    // Zero, and an int8 tensor its zero point, as tf.lite resets them.
    auto zero = [](api::Interpreter& runs) {
      for (int i = 0; i < runs.tensor_count(); ++i) {
        const baton_tensor* t = runs.tensor(i);
        void* data = runs.tensor_data(i);
        if (!baton_tensor_is_variable(t) || !data) continue;
        int value = 0;
        baton_quantization q{};
        q.struct_size = sizeof q;
        baton_tensor_get_quantization(t, &q);
        if (baton_tensor_get_type(t) == BATON_TYPE_INT8 && q.scale_count > 0 && q.zero_points) {
          value = static_cast<int>(q.zero_points[0]);
        }
        std::memset(data, value, baton_tensor_get_byte_size(t));
      }
    };
    zero(interp());
    for (const auto& [key, runs] : state_->signature_interps) zero(*runs);
  }

  py::object plan() {
    Busy busy(*state_);
    return py::module_::import("json").attr("loads")(interp().plan(BATON_PLAN_JSON));
  }

  // `baton plugins --json`'s report of the environment.
  py::object plugins() { return py::module_::import("json").attr("loads")(state_->env->report(BATON_PLAN_JSON)); }

  // For the signature runner.
  api::Interpreter& interp() { return *state_->interp; }
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

  int input_position(int tensor_index, const char* what) {
    for (int i = 0; i < interp().inputs(); ++i) {
      if (baton_tensor_get_index(interp().input(i)) == tensor_index) return i;
    }
    throw py::value_error(std::string(what) + ": tensor " + std::to_string(tensor_index) +
                          " is not an input of the model (input tensors: " + input_list() + ")");
  }

  std::string input_list() {
    std::string s;
    for (int i = 0; i < interp().inputs(); ++i) {
      s += (i ? ", " : "") + std::to_string(tensor_index(interp().input(i))) + " \"" + tensor_name(interp().input(i)) + "\"";
    }
    return s;
  }

  const baton_tensor* tensor_at(int index, const char* what) {
    const int count = interp().tensor_count();
    if (index < 0 || index >= count) {
      throw py::value_error(std::string(what) + ": tensor " + std::to_string(index) + " does not exist (the model has " +
                            std::to_string(count) + " tensors)");
    }
    return interp().tensor(index);
  }

  // Memory to read a tensor of `runs` from: its constant data or its memory now (none after a resize of
  // this interpreter until allocate_tensors, as tf.lite needs allocate_tensors before).
  const uint8_t* readable_memory(api::Interpreter& runs, const baton_tensor* t, const char* what) {
    const baton_tensor_type type = baton_tensor_get_type(t);
    if (!numpy_dtype(type) || baton_tensor_type_size(type) == 0) {
      throw py::value_error(std::string(what) + ": tensor " + std::to_string(tensor_index(t)) + " \"" + tensor_name(t) +
                            "\" has type " + baton_tensor_type_name(type) + ", which baton's Python module cannot show");
    }
    const bool constant = baton_tensor_is_constant(t) != 0;
    const auto* p = constant ? static_cast<const uint8_t*>(baton_tensor_get_data(t))
                             : static_cast<const uint8_t*>(runs.tensor_data(tensor_index(t)));
    if ((!p && baton_tensor_get_byte_size(t) > 0) || (&runs == &interp() && resized_ && !constant)) {
      throw py::value_error(std::string(what) + ": tensor " + std::to_string(tensor_index(t)) + " \"" + tensor_name(t) +
                            "\" has no memory now (call allocate_tensors() after resize_tensor_input)");
    }
    return p;
  }

  // Input `i` of `runs` (this interpreter, or a signature's own).
  void set_input(api::Interpreter& runs, int i, py::handle value, const char* what) {
    const baton_tensor* t = runs.input(i);
    const std::vector<int32_t> tshape = shape_of(t);
    const std::string label = "input " + std::to_string(i) + " \"" + tensor_name(t) + "\" (tensor " +
                              std::to_string(tensor_index(t)) + ")";
    const baton_tensor_type type = baton_tensor_get_type(t);
    if (type == BATON_TYPE_STRING) {
      const std::vector<uint8_t> packed = python::numpy_to_strings(value, tshape, std::string(what) + ": " + label);
      if (baton_interpreter_set_input(runs.get(), i, packed.data(), packed.size()) != BATON_OK) {
        throw py::value_error(std::string(what) + ": " + baton_interpreter_last_error(runs.get()));
      }
      return;
    }
    auto expected = numpy_dtype(type);
    if (!expected || baton_tensor_type_size(type) == 0) {
      throw py::value_error(std::string(what) + ": " + label + " has type " + baton_tensor_type_name(type) +
                            ", which baton's Python module cannot set");
    }
    py::array a = py::module_::import("numpy").attr("asarray")(value);
    if (!a.dtype().is(*expected)) {
      throw py::value_error(std::string(what) + ": " + label + " expects " +
                            py::str(*expected).cast<std::string>() + " values, got " +
                            py::str(a.dtype()).cast<std::string>());
    }
    std::vector<int32_t> shape(a.shape(), a.shape() + a.ndim());
    if (shape != tshape) {
      throw py::value_error(std::string(what) + ": " + label + " has shape " + shape_text(tshape) + ", got " +
                            shape_text(shape) + " (resize_tensor_input changes an input's shape)");
    }
    void* data = runs.tensor_data(tensor_index(t));
    const size_t bytes = baton_tensor_get_byte_size(t);
    if ((!data && bytes > 0) || (&runs == &interp() && resized_)) {
      throw py::value_error(std::string(what) + ": " + label +
                            " has no memory now (call allocate_tensors() after resize_tensor_input)");
    }
    py::array c = py::module_::import("numpy").attr("ascontiguousarray")(a);
    if (bytes) std::memcpy(data, c.data(), bytes);
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
  const api::Model::Signature& sig() { return in().signature(py::str(key_)); }

  py::dict call(py::kwargs kwargs) {
    PyInterpreter& in = this->in();
    const api::Model::Signature& s = sig();
    api::Interpreter& runs = in.target(s);
    const bool main = &runs == &in.interp();
    if (kwargs.size() != s.inputs.size()) {
      throw py::value_error("signature \"" + s.key + "\": expected " + std::to_string(s.inputs.size()) +
                            " inputs, got " + std::to_string(kwargs.size()));
    }
    std::vector<std::pair<int, py::array>> values;
    for (auto [k, v] : kwargs) {
      const std::string name = k.cast<std::string>();
      int pos = -1;
      for (const auto& [n, t] : s.inputs) {
        if (n == name) pos = in.sig_position(runs, t, true, s, n);
      }
      if (pos < 0) throw py::value_error("signature \"" + s.key + "\" has no input \"" + name + "\"");
      values.emplace_back(pos, py::module_::import("numpy").attr("asarray")(v));
    }
    // Resize what changed shape, as tf.lite's runner does, then set, invoke, copy the outputs out.
    for (auto& [pos, a] : values) {
      std::vector<int32_t> shape(a.shape(), a.shape() + a.ndim());
      if (shape == shape_of(runs.input(pos))) continue;
      if (main) {
        in.resize_tensor_input(tensor_index(runs.input(pos)), py::cast(shape), false);
      } else {
        Busy busy(in.state());
        if (baton_interpreter_resize_input(runs.get(), pos, static_cast<int32_t>(shape.size()), shape.data()) != BATON_OK) {
          throw py::value_error(std::string("signature runner: ") + baton_interpreter_last_error(runs.get()));
        }
      }
    }
    if (main) {
      in.allocate_tensors();
    } else {
      Busy busy(in.state());
      baton_status st;
      {
        py::gil_scoped_release nogil;
        st = baton_interpreter_allocate_tensors(runs.get());
      }
      if (st != BATON_OK) throw std::runtime_error(baton_interpreter_last_error(runs.get()));
    }
    {
      Busy busy(in.state());
      for (auto& [pos, a] : values) in.set_input(runs, pos, a, "signature runner");
    }
    if (main) {
      in.invoke();
    } else {
      Busy busy(in.state());
      baton_status st;
      {
        py::gil_scoped_release nogil;
        st = baton_interpreter_invoke(runs.get());
      }
      if (st != BATON_OK) throw std::runtime_error(baton_interpreter_last_error(runs.get()));
    }
    Busy busy(in.state());
    py::dict out;
    for (const auto& [name, t] : s.outputs) {
      out[py::str(name)] = in.copy_of(runs, runs.output(in.sig_position(runs, t, false, s, name)), "signature runner");
    }
    return out;
  }

  py::dict details(bool inputs) {
    PyInterpreter& in = this->in();
    const api::Model::Signature& s = sig();
    api::Interpreter& runs = in.target(s);
    Busy busy(in.state());
    py::dict out;
    for (const auto& [name, t] : inputs ? s.inputs : s.outputs) {
      const int pos = in.sig_position(runs, t, inputs, s, name);
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
            const api::Model::Signature& s = self.cast<PyInterpreter&>().signature(signature_key);
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
