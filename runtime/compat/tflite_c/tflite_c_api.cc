// TFLite 2.9's C API (c_api.h, the functions of c_api_experimental.h its library exports, and the
// signature runners of later versions) over baton's public C API (baton/c_api.h): a TfLiteModel is a
// baton_model, a TfLiteInterpreter a baton_interpreter in an environment that the same plugin folders,
// config file, delegate chain, limits and crash journal make as for every other door. Nothing here runs
// an op.
//
// What TFLite's callers rely on and this keeps: TfLiteTensor structs laid out as common.h says (type,
// data, dims, params, bytes, name, quantization, dims_signature), kept in step with baton's tensors;
// data pointers valid after TfLiteInterpreterAllocateTensors; invoke before allocate (or after a resize
// without a new allocate) fails through the error reporter; options and model may be deleted as soon
// as the interpreter exists. Errors reach the error reporter with baton's message.
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "baton/baton.hpp"
#include "tflite_extras.h"
#include "tflite_type_map.h"

namespace {

namespace api = baton::api;

struct DestroyEnvironment {
  void operator()(baton_environment* env) const { baton_environment_destroy(env); }
};
struct DestroyInterpreter {
  void operator()(baton_interpreter* interp) const { baton_interpreter_destroy(interp); }
};
using EnvironmentPtr = std::unique_ptr<baton_environment, DestroyEnvironment>;
using InterpreterPtr = std::unique_ptr<baton_interpreter, DestroyInterpreter>;

// The version this library answers to: the C API it implements, and what runs it.
constexpr const char* kVersion = "2.9.0 (baton)";

struct Reporter {
  void (*fn)(void* user_data, const char* format, va_list args) = nullptr;
  void* user = nullptr;
};

void call_reporter(const Reporter& r, const char* format, ...) {
  va_list args;
  va_start(args, format);
  r.fn(r.user, format, args);
  va_end(args);
}

// TFLite's clients copy a reported message into a buffer of their own (Google's Node addon keeps 1,000
// bytes): a first line longer than 200 characters becomes a summary, the leading parts of baton's
// "where: what: why" chain that fit, and the whole message follows on the next line.
std::string with_short_first_line(const std::string& message) {
  constexpr size_t kMaxFirstLine = 199;
  const size_t first_line = std::min(message.find('\n'), message.size());
  if (first_line <= kMaxFirstLine) return message;
  constexpr const char* kMore = " (the whole message follows)";
  const size_t budget = kMaxFirstLine - std::strlen(kMore);
  size_t cut = 0;
  for (size_t next = message.find(": "); next != std::string::npos && next <= budget && next < first_line;
       next = message.find(": ", next + 2)) {
    cut = next;
  }
  if (cut == 0) cut = message.rfind(' ', budget);  // no chain: whole words
  if (cut == std::string::npos || cut == 0) cut = budget;
  return message.substr(0, cut) + kMore + "\n" + message;
}

// TFLite's default reporter writes to stderr; so does this one.
void report(const Reporter& r, const std::string& message) {
  if (r.fn) {
    call_reporter(r, "%s", with_short_first_line(message).c_str());
  } else {
    std::fprintf(stderr, "%s\n", message.c_str());
  }
}

// The delegate TfLiteXNNPackDelegateCreate returns: a mark that puts baton's xnnpack first in the chain.
// It is never called as a TFLite delegate; a TFLite runtime that got it would find Prepare failing.
struct XnnpackMark {
  static constexpr uint64_t kMagic = 0x62746e786e6e7061ull;
  uint64_t magic = kMagic;
  TfLiteXNNPackDelegateOptions options{};
  TfLiteDelegate delegate{};
};

XnnpackMark* xnnpack_mark(TfLiteDelegate* d) {
  if (!d || !d->data_) return nullptr;
  auto* m = static_cast<XnnpackMark*>(d->data_);
  return m->magic == XnnpackMark::kMagic && &m->delegate == d ? m : nullptr;
}

TfLiteStatus xnnpack_mark_prepare(TfLiteContext*, TfLiteDelegate*) { return kTfLiteError; }

// Interpreters with the same settings share one environment (plugins are loaded once per setting); they
// live until the process ends.
baton_environment* environment(int threads, bool xnnpack_first, std::string* error) {
  static std::mutex mutex;
  static std::map<std::pair<int, bool>, EnvironmentPtr> made;
  std::lock_guard<std::mutex> guard(mutex);
  // Made once per key, under the lock; the xnnpack-first one reads the plain one's chain.
  auto get = [&](bool xnn_first, auto& self) -> baton_environment* {
    const auto key = std::make_pair(threads, xnn_first);
    if (auto it = made.find(key); it != made.end()) return it->second.get();
    baton_environment_options o{};
    o.struct_size = sizeof o;
    o.threads = threads > 0 ? threads : 0;
    std::vector<const char*> chain;
    if (xnn_first) {
      baton_environment* plain = self(false, self);
      if (!plain) return nullptr;
      bool installed = false;
      for (int32_t i = 0; i < baton_environment_plugin_count(plain); ++i) {
        installed = installed || std::strcmp(baton_environment_plugin_name(plain, i), "xnnpack") == 0;
      }
      if (!installed) {
        *error = "TfLiteXNNPackDelegateCreate: baton's xnnpack delegate is not installed (no plugin named xnnpack "
                 "in the plugin folders)";
        return nullptr;
      }
      // baton's xnnpack first, then the rest of the chain this machine would use anyway.
      chain.push_back("xnnpack");
      for (int32_t i = 0; i < baton_environment_delegate_count(plain); ++i) {
        const char* name = baton_environment_delegate_name(plain, i);
        if (std::strcmp(name, "xnnpack") != 0) chain.push_back(name);
      }
      o.delegates = chain.data();
      o.delegate_count = chain.size();
    }
    EnvironmentPtr env(baton_environment_create(&o));
    if (!env) {
      *error = baton_last_error();
      return nullptr;
    }
    return (made[key] = std::move(env)).get();
  };
  return get(xnnpack_first, get);
}

// What a handed-over delegate is: the library its Prepare lives in and that function (its symbol, or its
// offset in the library), as a plugin name: "tflite-libfoo-fooprepare", "tflite-libfoo-0x1a40". It names
// the delegate in the chain, the plan and the log, and keys it in the crash journal, so a delegate that
// took the process down is kept away from that model wherever it is handed over again, and another
// delegate is not.
std::string delegate_identity(const TfLiteDelegate* d) {
  auto plugin_name = [](std::string text) {  // a-z, 0-9, '_' and '-'
    for (char& c : text) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '-';
    }
    return text;
  };
  if (!d->Prepare) return "tflite-delegate-without-prepare";
  const void* prepare = reinterpret_cast<const void*>(d->Prepare);
  Dl_info info{};
  if (!dladdr(prepare, &info) || !info.dli_fname) return "tflite-delegate-of-unknown-library";
  std::string library = info.dli_fname;
  library = library.substr(library.find_last_of('/') + 1);
  library = library.substr(0, library.find(".so"));
  if (info.dli_sname && info.dli_saddr == prepare) return "tflite-" + plugin_name(library + "-" + info.dli_sname);
  char offset[32];
  std::snprintf(offset, sizeof offset, "-0x%zx",
                static_cast<size_t>(static_cast<const char*>(prepare) - static_cast<const char*>(info.dli_fbase)));
  return "tflite-" + plugin_name(library) + offset;
}

// baton's messages in an environment with delegate objects: warnings and errors to stderr as baton's
// default log writes them, and to the program's error reporter too, as TFLite reports them there (a
// delegate dropped, a partition that fell back).
void log_to_reporter(void* user, baton_log_level level, const char* message) {
  if (level < BATON_LOG_WARNING) return;
  std::fprintf(stderr, "baton: %s%s\n", level == BATON_LOG_ERROR ? "error: " : "warning: ", message);
  report(*static_cast<const Reporter*>(user), message);
}

// An environment for one interpreter whose chain starts with the program's TfLiteDelegate objects (in the
// order added, as TFLite applies them), wrapped by the plugin that hosts TFLite delegates, then `base`'s
// chain. Not cached: the objects belong to this interpreter's options. `reporter` must outlive it.
EnvironmentPtr with_delegate_objects(const baton_environment* base, int threads,
                                     const std::vector<TfLiteDelegate*>& objects, const Reporter* reporter,
                                     std::string* error) {
  baton_environment_options o{};
  o.struct_size = sizeof o;
  o.threads = threads > 0 ? threads : 0;
  std::vector<const char*> chain;
  for (int32_t i = 0; i < baton_environment_delegate_count(base); ++i) chain.push_back(baton_environment_delegate_name(base, i));
  o.delegates = chain.data();
  o.delegate_count = chain.size();
  if (reporter->fn) {
    o.log = log_to_reporter;
    o.log_user_data = const_cast<Reporter*>(reporter);
  }
  std::map<std::string, int> seen;
  std::vector<std::string> names;
  names.reserve(objects.size());
  for (TfLiteDelegate* object : objects) {
    std::string name = delegate_identity(object);
    if (const int n = ++seen[name]; n > 1) {  // the same delegate handed over twice
      name += '-';
      name += std::to_string(n);  // appended apart: "-" + to_string() trips a false -Wrestrict in GCC 12
    }
    names.push_back(std::move(name));
  }
  std::vector<baton_foreign_delegate> foreign;
  for (size_t i = 0; i < objects.size(); ++i) foreign.push_back({"TfLiteDelegate", objects[i], names[i].c_str()});
  o.foreign_delegates = foreign.data();
  o.foreign_delegate_count = foreign.size();
  EnvironmentPtr env(baton_environment_create(&o));
  if (!env) *error = std::string("TfLiteInterpreterOptionsAddDelegate: ") + baton_last_error();
  return env;
}

TfLiteIntArray* int_array(const std::vector<int32_t>& v) {
  TfLiteIntArray* a = TfLiteIntArrayCreate(static_cast<int>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) a->data[i] = v[i];
  return a;
}

}  // namespace

struct TfLiteModel {
  baton_model* model = nullptr;
  ~TfLiteModel() { baton_model_destroy(model); }
};

struct TfLiteInterpreterOptions {
  int32_t threads = -1;
  Reporter reporter;
  std::vector<TfLiteDelegate*> delegates;
  int registered_ops = 0;  // AddBuiltinOp / AddCustomOp / SetOpResolver calls
};

struct TfLiteSignatureRunner {
  TfLiteInterpreter* owner = nullptr;
  std::vector<std::pair<std::string, int>> inputs, outputs;  // name -> tensor index, by name
};

struct TfLiteInterpreter {
  Reporter reporter;  // first: the log of `own_env` reads it until the end
  EnvironmentPtr own_env;            // one with delegate objects, else null
  baton_environment* env = nullptr;  // the one it runs in
  InterpreterPtr interp;             // destroyed before its environment
  std::vector<api::Model::Signature> signatures;
  std::vector<TfLiteTensor> tensors;  // by tensor index of subgraph 0, laid out as TFLite's
  std::vector<int32_t> inputs, outputs;
  // The tensors a client can reach (inputs, outputs, signature tensors), ascending: only they are filled
  // and kept in step. The others stay zero: no shapes or quantization copied for a graph's inner tensors.
  std::vector<size_t> exposed;
  // A string input's TfLiteTensor holds memory of the application's: TFLite's way to give a string
  // tensor its value is TfLiteTensorRealloc on it, then the packed bytes into data.raw (its C API copies
  // only into tensors of a fixed size). invoke hands that value to baton.
  std::vector<bool> client_owned;
  std::vector<size_t> dynamic;  // tensors whose shape and memory an invoke sets: synced after each
  bool allocated = false;

  ~TfLiteInterpreter() {
    for (size_t i = 0; i < tensors.size(); ++i) {
      TfLiteTensor& t = tensors[i];
      if (!client_owned[i]) {
        t.data.raw = nullptr;  // baton's memory, not ours to free
        t.allocation_type = kTfLiteMemNone;
      }
      TfLiteTensorFree(&t);
    }
  }

  const baton_tensor* tensor(size_t i) const { return baton_interpreter_tensor(interp.get(), static_cast<int32_t>(i)); }

  // Makes every TfLiteTensor say what baton's tensor says now: shape, size, memory; and notes the dynamic
  // ones (their shape and memory are set at invoke, kTfLiteDynamic as in TFLite).
  void sync() {
    dynamic.clear();
    for (size_t i : exposed) {
      sync(i);
      const bool constant = baton_tensor_is_constant(tensor(i)) != 0, dyn = baton_tensor_is_dynamic(tensor(i)) != 0;
      if (dyn && !client_owned[i]) dynamic.push_back(i);
      tensors[i].allocation_type = constant ? kTfLiteMmapRo : dyn ? kTfLiteDynamic : kTfLiteArenaRw;
    }
  }

  void sync(size_t i) {
    const baton_tensor* bt = tensor(i);
    TfLiteTensor& t = tensors[i];
    const std::vector<int32_t> shape = api::shape_of(bt);
    // A scalar's dims are an array of size 0, as in TFLite (TfLiteIntArrayEqualsArray takes null for one).
    if (!t.dims || !TfLiteIntArrayEqualsArray(t.dims, static_cast<int>(shape.size()), shape.data())) {
      TfLiteIntArrayFree(t.dims);
      t.dims = int_array(shape);
    }
    if (client_owned[i]) return;  // its value is the application's until invoke
    t.bytes = baton_tensor_get_byte_size(bt);
    if (baton_tensor_is_constant(bt)) {
      t.data.raw = static_cast<char*>(const_cast<void*>(baton_tensor_get_data(bt)));
    } else {
      t.data.raw = allocated ? static_cast<char*>(baton_interpreter_tensor_data(interp.get(), static_cast<int32_t>(i))) : nullptr;
    }
  }

  void build_tensors() {
    for (int32_t i = 0; i < baton_interpreter_input_count(interp.get()); ++i) {
      inputs.push_back(baton_tensor_get_index(baton_interpreter_input(interp.get(), i)));
    }
    for (int32_t i = 0; i < baton_interpreter_output_count(interp.get()); ++i) {
      outputs.push_back(baton_tensor_get_index(baton_interpreter_output(interp.get(), i)));
    }
    const size_t count = static_cast<size_t>(baton_interpreter_tensor_count(interp.get()));
    tensors.assign(count, TfLiteTensor{});
    client_owned.assign(count, false);
    exposed.clear();
    for (int32_t i : inputs) exposed.push_back(static_cast<size_t>(i));
    for (int32_t i : outputs) exposed.push_back(static_cast<size_t>(i));
    for (const api::Model::Signature& sig : signatures) {
      if (sig.subgraph != 0) continue;
      for (const auto& [name, i] : sig.inputs) exposed.push_back(static_cast<size_t>(i));
      for (const auto& [name, i] : sig.outputs) exposed.push_back(static_cast<size_t>(i));
    }
    std::erase_if(exposed, [&](size_t i) { return i >= count; });
    std::sort(exposed.begin(), exposed.end());
    exposed.erase(std::unique(exposed.begin(), exposed.end()), exposed.end());
    for (size_t i : exposed) {
      const baton_tensor* bt = tensor(i);
      TfLiteTensor& t = tensors[i];
      const bool constant = baton_tensor_is_constant(bt) != 0;
      client_owned[i] = baton_tensor_get_type(bt) == BATON_TYPE_STRING && !constant &&
                        std::find(inputs.begin(), inputs.end(), static_cast<int32_t>(i)) != inputs.end();
      t.type = tflite_type(baton_tensor_get_type(bt));
      t.name = baton_tensor_get_name(bt);
      t.allocation_type = constant ? kTfLiteMmapRo : kTfLiteArenaRw;
      t.buffer_handle = kTfLiteNullBufferHandle;
      t.is_variable = baton_tensor_is_variable(bt) != 0;
      // The model's shape signature, else (none given) its shape.
      const int32_t sig_rank = baton_tensor_get_signature_rank(bt);
      std::vector<int32_t> sig(static_cast<size_t>(sig_rank > 0 ? sig_rank : baton_tensor_get_rank(bt)));
      for (size_t d = 0; d < sig.size(); ++d) sig[d] = baton_tensor_get_signature_dim(bt, static_cast<int32_t>(d));
      t.dims_signature = int_array(sig);
      // Blockwise quantization has no TFLite 2.9 type: such a tensor shows as not quantized.
      baton_quantization bq{};
      bq.struct_size = sizeof bq;
      baton_tensor_get_quantization(bt, &bq);
      if (bq.scale_count > 0) {
        t.params.scale = bq.scales[0];
        t.params.zero_point = bq.zero_points ? static_cast<int32_t>(bq.zero_points[0]) : 0;
        auto* q = static_cast<TfLiteAffineQuantization*>(std::calloc(1, sizeof(TfLiteAffineQuantization)));
        q->scale = TfLiteFloatArrayCreate(bq.scale_count);
        q->zero_point = TfLiteIntArrayCreate(bq.scale_count);
        for (int32_t k = 0; k < bq.scale_count; ++k) {
          q->scale->data[k] = bq.scales[k];
          q->zero_point->data[k] = bq.zero_points ? static_cast<int>(bq.zero_points[k]) : 0;
        }
        q->quantized_dimension = bq.quantized_dimension;
        t.quantization.type = kTfLiteAffineQuantization;
        t.quantization.params = q;
      }
    }
    sync();
  }

  int input_position(int32_t tensor_index) const {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] == tensor_index) return static_cast<int>(i);
    }
    return -1;
  }

  TfLiteStatus fail() const {
    report(reporter, baton_interpreter_last_error(interp.get()));
    return kTfLiteError;
  }
};

namespace {

TfLiteInterpreter* create_interpreter(const TfLiteModel* model, const TfLiteInterpreterOptions* options,
                                      const char* caller) {
  const Reporter reporter = options ? options->reporter : Reporter{};
  const std::string who = caller;
  if (!model || !model->model) {
    report(reporter, who + ": no model");
    return nullptr;
  }
  bool xnnpack_first = false;
  std::vector<TfLiteDelegate*> foreign;  // TfLiteDelegate objects hosted through the tflite-delegates loader
  int32_t threads = options ? options->threads : -1;
  if (options) {
    if (options->registered_ops > 0) {
      report(reporter, who + ": op kernels registered as TfLiteRegistration (TfLiteInterpreterOptionsAddBuiltinOp, "
                             "AddCustomOp, SetOpResolver) cannot run in baton yet; baton's op packs provide the kernels");
      return nullptr;
    }
    for (TfLiteDelegate* d : options->delegates) {
      if (const XnnpackMark* m = xnnpack_mark(d)) {
        xnnpack_first = true;
        if (threads <= 0 && m->options.num_threads > 0) threads = m->options.num_threads;
      } else if (d) {
        foreign.push_back(d);
      }
    }
  }
  auto out = std::make_unique<TfLiteInterpreter>();
  out->reporter = reporter;
  std::string error;
  out->env = environment(threads, xnnpack_first, &error);
  if (out->env && !foreign.empty()) {
    out->own_env = with_delegate_objects(out->env, threads, foreign, &out->reporter, &error);
    out->env = out->own_env.get();
  }
  if (!out->env) {
    report(reporter, who + ": " + error);
    return nullptr;
  }
  out->interp.reset(baton_interpreter_create_from_model(out->env, model->model, nullptr));
  if (!out->interp) {
    report(reporter, who + ": " + baton_last_error());
    return nullptr;
  }
  out->signatures = api::Model::signatures_of(model->model);
  out->build_tensors();
  return out.release();
}

// A TfLiteModel of what `load` makes in the shared plain environment, whose limits hold the model; null
// with the reason reported.
template <typename Load>
TfLiteModel* new_model(const char* caller, Load load) {
  std::string error;
  baton_environment* env = environment(-1, false, &error);
  if (!env) {
    report({}, std::string(caller) + ": " + error);
    return nullptr;
  }
  baton_model* model = load(env);
  if (!model) {
    report({}, baton_last_error());
    return nullptr;
  }
  return new TfLiteModel{model};
}

}  // namespace

extern "C" {

const char* TfLiteVersion(void) { return kVersion; }

TfLiteModel* TfLiteModelCreate(const void* model_data, size_t model_size) {
  if (!model_data) {
    report({}, "TfLiteModelCreate: no model data");
    return nullptr;
  }
  return new_model("TfLiteModelCreate",
                   [&](baton_environment* env) { return baton_model_create_from_buffer(env, model_data, model_size); });
}

TfLiteModel* TfLiteModelCreateFromFile(const char* model_path) {
  if (!model_path) {
    report({}, "TfLiteModelCreateFromFile: no path");
    return nullptr;
  }
  return new_model("TfLiteModelCreateFromFile",
                   [&](baton_environment* env) { return baton_model_create_from_file(env, model_path); });
}

void TfLiteModelDelete(TfLiteModel* model) { delete model; }

TfLiteInterpreterOptions* TfLiteInterpreterOptionsCreate() { return new TfLiteInterpreterOptions(); }

void TfLiteInterpreterOptionsDelete(TfLiteInterpreterOptions* options) { delete options; }

void TfLiteInterpreterOptionsSetNumThreads(TfLiteInterpreterOptions* options, int32_t num_threads) {
  if (options) options->threads = num_threads;
}

void TfLiteInterpreterOptionsAddDelegate(TfLiteInterpreterOptions* options, TfLiteDelegate* delegate) {
  if (options && delegate) options->delegates.push_back(delegate);
}

void TfLiteInterpreterOptionsSetErrorReporter(TfLiteInterpreterOptions* options,
                                              void (*reporter)(void* user_data, const char* format, va_list args),
                                              void* user_data) {
  if (!options) return;
  options->reporter.fn = reporter;
  options->reporter.user = user_data;
}

TfLiteInterpreter* TfLiteInterpreterCreate(const TfLiteModel* model, const TfLiteInterpreterOptions* optional_options) {
  return create_interpreter(model, optional_options, "TfLiteInterpreterCreate");
}

void TfLiteInterpreterDelete(TfLiteInterpreter* interpreter) { delete interpreter; }

int32_t TfLiteInterpreterGetInputTensorCount(const TfLiteInterpreter* interpreter) {
  return static_cast<int32_t>(interpreter->inputs.size());
}

TfLiteTensor* TfLiteInterpreterGetInputTensor(const TfLiteInterpreter* interpreter, int32_t input_index) {
  if (input_index < 0 || static_cast<size_t>(input_index) >= interpreter->inputs.size()) return nullptr;
  return const_cast<TfLiteTensor*>(&interpreter->tensors[static_cast<size_t>(interpreter->inputs[input_index])]);
}

TfLiteStatus TfLiteInterpreterResizeInputTensor(TfLiteInterpreter* interpreter, int32_t input_index,
                                                const int* input_dims, int32_t input_dims_size) {
  if (input_index < 0 || static_cast<size_t>(input_index) >= interpreter->inputs.size() || input_dims_size < 0 ||
      (input_dims_size > 0 && !input_dims)) {
    report(interpreter->reporter, "TfLiteInterpreterResizeInputTensor: no input " + std::to_string(input_index) +
                                      " or no dimensions (the model has " +
                                      std::to_string(interpreter->inputs.size()) + " inputs)");
    return kTfLiteError;
  }
  std::vector<int32_t> shape(input_dims, input_dims + input_dims_size);
  if (baton_interpreter_resize_input(interpreter->interp.get(), input_index, input_dims_size, shape.data()) != BATON_OK) {
    return interpreter->fail();
  }
  // As in TFLite: the new shape shows at once; memory only after the next TfLiteInterpreterAllocateTensors.
  interpreter->allocated = false;
  TfLiteTensor& t = interpreter->tensors[static_cast<size_t>(interpreter->inputs[input_index])];
  TfLiteIntArrayFree(t.dims);
  t.dims = int_array(shape);
  return kTfLiteOk;
}

TfLiteStatus TfLiteInterpreterAllocateTensors(TfLiteInterpreter* interpreter) {
  if (baton_interpreter_allocate_tensors(interpreter->interp.get()) != BATON_OK) return interpreter->fail();
  interpreter->allocated = true;
  interpreter->sync();
  return kTfLiteOk;
}

TfLiteStatus TfLiteInterpreterInvoke(TfLiteInterpreter* interpreter) {
  if (!interpreter->allocated) {
    report(interpreter->reporter, "Invoke called on model that is not ready: call TfLiteInterpreterAllocateTensors "
                                  "after creating the interpreter and after resizing an input");
    return kTfLiteError;
  }
  for (size_t k = 0; k < interpreter->inputs.size(); ++k) {
    const TfLiteTensor& t = interpreter->tensors[static_cast<size_t>(interpreter->inputs[k])];
    if (!interpreter->client_owned[static_cast<size_t>(interpreter->inputs[k])] || !t.data.raw) continue;
    if (baton_interpreter_set_input(interpreter->interp.get(), static_cast<int32_t>(k), t.data.raw, t.bytes) != BATON_OK) {
      return interpreter->fail();
    }
  }
  if (baton_interpreter_invoke(interpreter->interp.get()) != BATON_OK) return interpreter->fail();
  for (size_t i : interpreter->dynamic) interpreter->sync(i);  // none in a model whose shapes are fixed
  return kTfLiteOk;
}

int32_t TfLiteInterpreterGetOutputTensorCount(const TfLiteInterpreter* interpreter) {
  return static_cast<int32_t>(interpreter->outputs.size());
}

const TfLiteTensor* TfLiteInterpreterGetOutputTensor(const TfLiteInterpreter* interpreter, int32_t output_index) {
  if (output_index < 0 || static_cast<size_t>(output_index) >= interpreter->outputs.size()) return nullptr;
  return &interpreter->tensors[static_cast<size_t>(interpreter->outputs[output_index])];
}

TfLiteType TfLiteTensorType(const TfLiteTensor* tensor) { return tensor->type; }

int32_t TfLiteTensorNumDims(const TfLiteTensor* tensor) { return tensor->dims ? tensor->dims->size : -1; }

int32_t TfLiteTensorDim(const TfLiteTensor* tensor, int32_t dim_index) { return tensor->dims->data[dim_index]; }

size_t TfLiteTensorByteSize(const TfLiteTensor* tensor) { return tensor->bytes; }

void* TfLiteTensorData(const TfLiteTensor* tensor) { return tensor->data.raw; }

const char* TfLiteTensorName(const TfLiteTensor* tensor) { return tensor->name; }

TfLiteQuantizationParams TfLiteTensorQuantizationParams(const TfLiteTensor* tensor) { return tensor->params; }

TfLiteStatus TfLiteTensorCopyFromBuffer(TfLiteTensor* tensor, const void* input_data, size_t input_data_size) {
  if (tensor->bytes != input_data_size || !tensor->data.raw) return kTfLiteError;
  std::memcpy(tensor->data.raw, input_data, input_data_size);
  return kTfLiteOk;
}

TfLiteStatus TfLiteTensorCopyToBuffer(const TfLiteTensor* output_tensor, void* output_data, size_t output_data_size) {
  if (output_tensor->bytes != output_data_size || !output_tensor->data.raw) return kTfLiteError;
  std::memcpy(output_data, output_tensor->data.raw, output_data_size);
  return kTfLiteOk;
}

// ---- c_api_experimental.h ------------------------------------------------------------------------------

TfLiteStatus TfLiteInterpreterResetVariableTensors(TfLiteInterpreter* interpreter) {
  for (const TfLiteTensor& t : interpreter->tensors) {
    if (t.is_variable) {
      report(interpreter->reporter, "TfLiteInterpreterResetVariableTensors: variable tensors ('" +
                                        std::string(t.name ? t.name : "") + "') are not supported by baton yet");
      return kTfLiteError;
    }
  }
  return kTfLiteOk;  // no variable tensor: nothing to reset
}

void TfLiteInterpreterOptionsAddBuiltinOp(TfLiteInterpreterOptions* options, TfLiteBuiltinOperatorValue,
                                          const TfLiteRegistration*, int32_t, int32_t) {
  if (options) options->registered_ops++;
}

void TfLiteInterpreterOptionsAddCustomOp(TfLiteInterpreterOptions* options, const char*, const TfLiteRegistration*,
                                         int32_t, int32_t) {
  if (options) options->registered_ops++;
}

void TfLiteInterpreterOptionsSetOpResolver(TfLiteInterpreterOptions* options,
                                           const TfLiteRegistration* (*)(void*, TfLiteBuiltinOperatorValue, int),
                                           const TfLiteRegistration* (*)(void*, const char*, int), void*) {
  if (options) options->registered_ops++;
}

TfLiteInterpreter* TfLiteInterpreterCreateWithSelectedOps(const TfLiteModel* model,
                                                          const TfLiteInterpreterOptions* options) {
  // TFLite runs only the ops registered through the options here; those are TfLiteRegistration kernels,
  // which baton cannot run yet, and without any the model has nothing to run on.
  report(options ? options->reporter : Reporter{},
         "TfLiteInterpreterCreateWithSelectedOps: runs only TfLiteRegistration kernels registered in the options, "
         "which baton cannot run yet; use TfLiteInterpreterCreate (baton's op packs provide every kernel)");
  (void)model;
  return nullptr;
}

void TfLiteInterpreterOptionsSetUseNNAPI(TfLiteInterpreterOptions* options, bool enable) {
  // NNAPI is Android's; TFLite elsewhere goes on without it, and so does baton (its delegates are
  // chosen by its config).
  (void)options;
  (void)enable;
}

void TfLiteInterpreterOptionsSetEnableDelegateFallback(TfLiteInterpreterOptions* options, bool enable) {
  // baton always falls back: a partition a delegate fails goes to the next delegate or the op packs.
  (void)options;
  (void)enable;
}

void TfLiteSetAllowBufferHandleOutput(const TfLiteInterpreter* interpreter, bool allow_buffer_handle_output) {
  // baton's outputs are always in host memory: there are no buffer handles to allow.
  (void)interpreter;
  (void)allow_buffer_handle_output;
}

TfLiteStatus TfLiteInterpreterModifyGraphWithDelegate(const TfLiteInterpreter* interpreter, TfLiteDelegate* delegate) {
  report(interpreter->reporter,
         xnnpack_mark(delegate)
             ? "TfLiteInterpreterModifyGraphWithDelegate: baton decides its delegate chain when the interpreter is "
               "created: add the XNNPACK delegate with TfLiteInterpreterOptionsAddDelegate"
             : "TfLiteInterpreterModifyGraphWithDelegate: baton cannot add a delegate to an interpreter that exists; "
               "give TfLiteDelegate objects to TfLiteInterpreterOptionsAddDelegate before TfLiteInterpreterCreate");
  return kTfLiteError;
}

// c_api_experimental.h of later TFLite versions: stops a running TfLiteInterpreterInvoke, which then
// fails with "invoke cancelled"; may be called from another thread.
TfLiteStatus TfLiteInterpreterCancel(const TfLiteInterpreter* interpreter) {
  if (!interpreter) return kTfLiteError;
  baton_interpreter_cancel(interpreter->interp.get());
  return kTfLiteOk;
}

int32_t TfLiteInterpreterGetInputTensorIndex(const TfLiteInterpreter* interpreter, int32_t input_index) {
  if (input_index < 0 || static_cast<size_t>(input_index) >= interpreter->inputs.size()) return -1;
  return interpreter->inputs[static_cast<size_t>(input_index)];
}

int32_t TfLiteInterpreterGetOutputTensorIndex(const TfLiteInterpreter* interpreter, int32_t output_index) {
  if (output_index < 0 || static_cast<size_t>(output_index) >= interpreter->outputs.size()) return -1;
  return interpreter->outputs[static_cast<size_t>(output_index)];
}

// ---- signature runners ---------------------------------------------------------------------------------

int32_t TfLiteInterpreterGetSignatureCount(const TfLiteInterpreter* interpreter) {
  return static_cast<int32_t>(interpreter->signatures.size());
}

const char* TfLiteInterpreterGetSignatureKey(const TfLiteInterpreter* interpreter, int32_t signature_index) {
  const auto& sigs = interpreter->signatures;
  if (signature_index < 0 || static_cast<size_t>(signature_index) >= sigs.size()) return nullptr;
  return sigs[static_cast<size_t>(signature_index)].key.c_str();
}

TfLiteSignatureRunner* TfLiteInterpreterGetSignatureRunner(const TfLiteInterpreter* interpreter,
                                                           const char* signature_key) {
  auto* self = const_cast<TfLiteInterpreter*>(interpreter);
  for (const api::Model::Signature& sig : interpreter->signatures) {
    if (!signature_key || sig.key != signature_key) continue;
    if (sig.subgraph != 0) {
      report(self->reporter, "TfLiteInterpreterGetSignatureRunner: signature '" + sig.key + "' runs subgraph " +
                                 std::to_string(sig.subgraph) + "; baton runs subgraph 0 only so far");
      return nullptr;
    }
    auto runner = std::make_unique<TfLiteSignatureRunner>();
    runner->owner = self;
    runner->inputs = sig.inputs;
    runner->outputs = sig.outputs;
    // TFLite lists a signature's inputs and outputs in the order of their names.
    std::sort(runner->inputs.begin(), runner->inputs.end());
    std::sort(runner->outputs.begin(), runner->outputs.end());
    return runner.release();
  }
  return nullptr;
}

size_t TfLiteSignatureRunnerGetInputCount(const TfLiteSignatureRunner* signature_runner) {
  return signature_runner->inputs.size();
}

const char* TfLiteSignatureRunnerGetInputName(const TfLiteSignatureRunner* signature_runner, int32_t input_index) {
  if (input_index < 0 || static_cast<size_t>(input_index) >= signature_runner->inputs.size()) return nullptr;
  return signature_runner->inputs[static_cast<size_t>(input_index)].first.c_str();
}

// The TfLiteTensor of a signature's tensor index; null for an index outside subgraph 0's tensors.
static TfLiteTensor* exposed_tensor(TfLiteInterpreter* owner, int32_t index) {
  if (index < 0 || static_cast<size_t>(index) >= owner->tensors.size()) return nullptr;
  return &owner->tensors[static_cast<size_t>(index)];
}

static int32_t signature_tensor(const std::vector<std::pair<std::string, int>>& list, const char* name) {
  for (const auto& [n, index] : list) {
    if (name && n == name) return index;
  }
  return -1;
}

TfLiteStatus TfLiteSignatureRunnerResizeInputTensor(TfLiteSignatureRunner* signature_runner, const char* input_name,
                                                    const int* input_dims, int32_t input_dims_size) {
  TfLiteInterpreter* in = signature_runner->owner;
  const int position = in->input_position(signature_tensor(signature_runner->inputs, input_name));
  if (position < 0) {
    report(in->reporter, std::string("TfLiteSignatureRunnerResizeInputTensor: no input named '") +
                             (input_name ? input_name : "") + "' in this signature");
    return kTfLiteError;
  }
  return TfLiteInterpreterResizeInputTensor(in, position, input_dims, input_dims_size);
}

TfLiteStatus TfLiteSignatureRunnerAllocateTensors(TfLiteSignatureRunner* signature_runner) {
  return TfLiteInterpreterAllocateTensors(signature_runner->owner);
}

TfLiteTensor* TfLiteSignatureRunnerGetInputTensor(TfLiteSignatureRunner* signature_runner, const char* input_name) {
  const int32_t index = signature_tensor(signature_runner->inputs, input_name);
  return exposed_tensor(signature_runner->owner, index);
}

TfLiteStatus TfLiteSignatureRunnerInvoke(TfLiteSignatureRunner* signature_runner) {
  return TfLiteInterpreterInvoke(signature_runner->owner);
}

size_t TfLiteSignatureRunnerGetOutputCount(const TfLiteSignatureRunner* signature_runner) {
  return signature_runner->outputs.size();
}

const char* TfLiteSignatureRunnerGetOutputName(const TfLiteSignatureRunner* signature_runner, int32_t output_index) {
  if (output_index < 0 || static_cast<size_t>(output_index) >= signature_runner->outputs.size()) return nullptr;
  return signature_runner->outputs[static_cast<size_t>(output_index)].first.c_str();
}

const TfLiteTensor* TfLiteSignatureRunnerGetOutputTensor(const TfLiteSignatureRunner* signature_runner,
                                                         const char* output_name) {
  const int32_t index = signature_tensor(signature_runner->outputs, output_name);
  return exposed_tensor(signature_runner->owner, index);
}

void TfLiteSignatureRunnerDelete(TfLiteSignatureRunner* signature_runner) { delete signature_runner; }

// ---- the XNNPACK delegate ------------------------------------------------------------------------------

TfLiteXNNPackDelegateOptions TfLiteXNNPackDelegateOptionsDefault(void) { return TfLiteXNNPackDelegateOptions{0, 0}; }

TfLiteDelegate* TfLiteXNNPackDelegateCreate(const TfLiteXNNPackDelegateOptions* options) {
  auto* mark = new XnnpackMark();
  if (options) mark->options = *options;
  mark->delegate = TfLiteDelegateCreate();
  mark->delegate.data_ = mark;
  mark->delegate.Prepare = xnnpack_mark_prepare;
  return &mark->delegate;
}

void TfLiteXNNPackDelegateDelete(TfLiteDelegate* delegate) { delete xnnpack_mark(delegate); }

// TFLite hands out the delegate's pthreadpool; baton's xnnpack keeps its pool inside the plugin, so there
// is none to share (NULL is what TFLite answers for a delegate without a pool).
void* TfLiteXNNPackDelegateGetThreadPool(TfLiteDelegate* delegate) {
  (void)delegate;
  return nullptr;
}

}  // extern "C"
