// TFLite 2.9's C API (c_api.h, the functions of c_api_experimental.h its library exports, and the
// signature runners of later versions) over baton's runtime: a TfLiteModel is a loaded baton Model, a
// TfLiteInterpreter a baton Interpreter in an Environment that the same plugin folders, config file,
// delegate chain, limits and crash journal make as for every other door. Nothing here runs an op.
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

#include "environment.h"
#include "interpreter.h"
#include "model.h"
#include "tflite_extras.h"
#include "tflite_type_map.h"

namespace {

using baton::Environment;
using baton::EnvironmentOptions;
using baton::Expected;
using baton::Interpreter;
using baton::Model;

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

// Interpreters with the same settings share one Environment (plugins are loaded once per setting).
std::shared_ptr<Environment> environment(int threads, bool xnnpack_first, std::string* error) {
  static std::mutex mutex;
  static std::map<std::pair<int, bool>, std::shared_ptr<Environment>> made;
  std::lock_guard<std::mutex> guard(mutex);
  // Made once per key, under the lock; the xnnpack-first one reads the plain one's chain.
  auto get = [&](bool xnn_first, auto& self) -> std::shared_ptr<Environment> {
    const auto key = std::make_pair(threads, xnn_first);
    if (auto it = made.find(key); it != made.end()) return it->second;
    EnvironmentOptions o;
    o.threads = threads > 0 ? threads : 0;
    if (xnn_first) {
      std::shared_ptr<Environment> plain = self(false, self);
      if (!plain) return nullptr;
      if (!plain->registry().find("xnnpack")) {
        *error = "TfLiteXNNPackDelegateCreate: baton's xnnpack delegate is not installed (no plugin named xnnpack "
                 "in the plugin folders)";
        return nullptr;
      }
      // baton's xnnpack first, then the rest of the chain this machine would use anyway.
      std::vector<std::string> chain = {"xnnpack"};
      for (const baton::LoadedPlugin* d : plain->delegate_chain()) {
        if (d->name != "xnnpack") chain.push_back(d->name);
      }
      o.delegates = chain;
    }
    auto env = Environment::create(o);
    if (!env) {
      *error = env.error();
      return nullptr;
    }
    made[key] = env.value();
    return env.value();
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

// An environment for one interpreter whose chain starts with the program's TfLiteDelegate objects (in the
// order added, as TFLite applies them), wrapped by the plugin that hosts TFLite delegates, then `base`'s
// chain. Not cached: the objects belong to this interpreter's options. Its warnings (a delegate dropped,
// a partition that fell back) reach the program's error reporter too, as TFLite reports them there.
std::shared_ptr<Environment> with_delegate_objects(const Environment& base, int threads,
                                                   const std::vector<TfLiteDelegate*>& objects,
                                                   const Reporter& reporter, std::string* error) {
  EnvironmentOptions o;
  o.threads = threads > 0 ? threads : 0;
  std::vector<std::string> chain;
  for (const baton::LoadedPlugin* d : base.delegate_chain()) chain.push_back(d->name);
  o.delegates = chain;
  if (reporter.fn) {
    o.log = [sink = base.log(), reporter](baton_log_level level, const std::string& message) {
      if (sink) sink(level, message);
      if (level >= BATON_LOG_WARNING) report(reporter, message);
    };
  }
  std::map<std::string, int> seen;
  for (TfLiteDelegate* object : objects) {
    std::string name = delegate_identity(object);
    if (const int n = ++seen[name]; n > 1) name += "-" + std::to_string(n);  // the same delegate handed over twice
    o.foreign_delegates.push_back({"TfLiteDelegate", object, name});
  }
  auto env = Environment::create(o);
  if (!env) {
    *error = "TfLiteInterpreterOptionsAddDelegate: " + env.error();
    return nullptr;
  }
  return env.value();
}

TfLiteIntArray* int_array(const std::vector<int32_t>& v) {
  TfLiteIntArray* a = TfLiteIntArrayCreate(static_cast<int>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) a->data[i] = v[i];
  return a;
}

}  // namespace

struct TfLiteModel {
  std::shared_ptr<const Model> model;
};

struct TfLiteInterpreterOptions {
  int32_t threads = -1;
  Reporter reporter;
  std::vector<TfLiteDelegate*> delegates;
  int registered_ops = 0;  // AddBuiltinOp / AddCustomOp / SetOpResolver calls
};

struct TfLiteSignatureRunner {
  TfLiteInterpreter* owner = nullptr;
  std::vector<std::pair<std::string, int32_t>> inputs, outputs;  // name -> tensor index, by name
};

struct TfLiteInterpreter {
  std::shared_ptr<Environment> env;
  std::shared_ptr<const Model> model;
  std::unique_ptr<Interpreter> interp;
  Reporter reporter;
  std::vector<TfLiteTensor> tensors;  // by tensor index of subgraph 0, laid out as TFLite's
  std::vector<int32_t> inputs, outputs;
  std::vector<size_t> dynamic;  // tensors whose shape and memory an invoke sets: synced after each
  bool allocated = false;

  ~TfLiteInterpreter() {
    for (size_t i = 0; i < tensors.size(); ++i) {
      TfLiteTensor& t = tensors[i];
      if (!client_owned(i)) {
        t.data.raw = nullptr;  // baton's memory, not ours to free
        t.allocation_type = kTfLiteMemNone;
      }
      TfLiteTensorFree(&t);
    }
  }

  // A string input's TfLiteTensor holds memory of the application's: TFLite's way to give a string
  // tensor its value is TfLiteTensorRealloc on it, then the packed bytes into data.raw (its C API copies
  // only into tensors of a fixed size). invoke hands that value to baton.
  bool client_owned(size_t i) const {
    const baton::Tensor& bt = interp->tensors()[i];
    return bt.type == BATON_TYPE_STRING && bt.is_model_input && !bt.is_constant;
  }

  // Makes every TfLiteTensor say what baton's tensor says now: shape, size, memory; and notes the dynamic
  // ones (their shape and memory are set at invoke, kTfLiteDynamic as in TFLite).
  void sync() {
    const std::vector<baton::Tensor>& bt = interp->tensors();
    dynamic.clear();
    for (size_t i = 0; i < bt.size(); ++i) {
      sync(i);
      if (bt[i].dynamic && !client_owned(i)) dynamic.push_back(i);
      tensors[i].allocation_type = bt[i].is_constant ? kTfLiteMmapRo : bt[i].dynamic ? kTfLiteDynamic : kTfLiteArenaRw;
    }
  }

  void sync(size_t i) {
    const baton::Tensor& bt = interp->tensors()[i];
    TfLiteTensor& t = tensors[i];
    if (client_owned(i)) {  // its value is the application's until invoke (pass_string_inputs)
      if (!t.dims || !TfLiteIntArrayEqualsArray(t.dims, static_cast<int>(bt.shape.size()), bt.shape.data())) {
        TfLiteIntArrayFree(t.dims);
        t.dims = int_array(bt.shape);
      }
      return;
    }
    // A scalar's dims are an array of size 0, as in TFLite (TfLiteIntArrayEqualsArray takes null for one).
    if (!t.dims || !TfLiteIntArrayEqualsArray(t.dims, static_cast<int>(bt.shape.size()), bt.shape.data())) {
      TfLiteIntArrayFree(t.dims);
      t.dims = int_array(bt.shape);
    }
    t.bytes = bt.bytes;
    if (bt.is_constant) {
      t.data.raw = reinterpret_cast<char*>(const_cast<uint8_t*>(bt.constant));
    } else {
      t.data.raw = allocated ? reinterpret_cast<char*>(bt.data) : nullptr;
    }
  }

  void build_tensors() {
    const std::vector<baton::Tensor>& bt = interp->tensors();
    tensors.assign(bt.size(), TfLiteTensor{});
    for (size_t i = 0; i < bt.size(); ++i) {
      TfLiteTensor& t = tensors[i];
      const baton::TensorInfo& info = *bt[i].info;
      t.type = tflite_type(bt[i].type);
      t.name = info.name.c_str();
      t.allocation_type = bt[i].is_constant ? kTfLiteMmapRo : kTfLiteArenaRw;
      t.buffer_handle = kTfLiteNullBufferHandle;
      t.is_variable = info.is_variable;
      t.dims_signature = int_array(info.shape_signature.empty() ? info.shape : info.shape_signature);
      // Blockwise quantization has no TFLite 2.9 type: such a tensor shows as not quantized.
      if (!info.quant.empty()) {
        t.params.scale = info.quant.scales[0];
        t.params.zero_point = info.quant.zero_points.empty() ? 0 : static_cast<int32_t>(info.quant.zero_points[0]);
        auto* q = static_cast<TfLiteAffineQuantization*>(std::calloc(1, sizeof(TfLiteAffineQuantization)));
        q->scale = TfLiteFloatArrayCreate(static_cast<int>(info.quant.scales.size()));
        q->zero_point = TfLiteIntArrayCreate(static_cast<int>(info.quant.scales.size()));
        for (size_t k = 0; k < info.quant.scales.size(); ++k) {
          q->scale->data[k] = info.quant.scales[k];
          q->zero_point->data[k] = k < info.quant.zero_points.size() ? static_cast<int>(info.quant.zero_points[k]) : 0;
        }
        q->quantized_dimension = info.quant.quantized_dimension;
        t.quantization.type = kTfLiteAffineQuantization;
        t.quantization.params = q;
      }
    }
    for (size_t i = 0; i < interp->input_count(); ++i) inputs.push_back(interp->input(i).index);
    for (size_t i = 0; i < interp->output_count(); ++i) outputs.push_back(interp->output(i).index);
    sync();
  }

  int input_position(int32_t tensor_index) const {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] == tensor_index) return static_cast<int>(i);
    }
    return -1;
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
  std::string error;
  std::shared_ptr<Environment> env = environment(threads, xnnpack_first, &error);
  if (env && !foreign.empty()) env = with_delegate_objects(*env, threads, foreign, reporter, &error);
  if (!env) {
    report(reporter, who + ": " + error);
    return nullptr;
  }
  auto interp = Interpreter::create(env, model->model);
  if (!interp) {
    report(reporter, who + ": " + interp.error());
    return nullptr;
  }
  auto out = std::make_unique<TfLiteInterpreter>();
  out->env = env;
  out->model = model->model;
  out->interp = std::move(interp.value());
  out->reporter = reporter;
  out->build_tensors();
  return out.release();
}

}  // namespace

extern "C" {

const char* TfLiteVersion(void) { return kVersion; }

TfLiteModel* TfLiteModelCreate(const void* model_data, size_t model_size) {
  if (!model_data) {
    report({}, "TfLiteModelCreate: no model data");
    return nullptr;
  }
  std::string error;
  std::shared_ptr<Environment> env = environment(-1, false, &error);
  auto model = baton::load_model_buffer(std::span<const uint8_t>(static_cast<const uint8_t*>(model_data), model_size),
                                        "<buffer>", env ? env->limits() : baton::LoadLimits{});
  if (!model) {
    report({}, model.error());
    return nullptr;
  }
  return new TfLiteModel{model.value()};
}

TfLiteModel* TfLiteModelCreateFromFile(const char* model_path) {
  if (!model_path) {
    report({}, "TfLiteModelCreateFromFile: no path");
    return nullptr;
  }
  std::string error;
  std::shared_ptr<Environment> env = environment(-1, false, &error);
  auto model = baton::load_model_file(model_path, env ? env->limits() : baton::LoadLimits{});
  if (!model) {
    report({}, model.error());
    return nullptr;
  }
  return new TfLiteModel{model.value()};
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
  if (baton::Status s = interpreter->interp->resize_input(static_cast<size_t>(input_index), shape); !s) {
    report(interpreter->reporter, s.message());
    return kTfLiteError;
  }
  // As in TFLite: the new shape shows at once; memory only after the next TfLiteInterpreterAllocateTensors.
  interpreter->allocated = false;
  TfLiteTensor& t = interpreter->tensors[static_cast<size_t>(interpreter->inputs[input_index])];
  TfLiteIntArrayFree(t.dims);
  t.dims = int_array(shape);
  return kTfLiteOk;
}

TfLiteStatus TfLiteInterpreterAllocateTensors(TfLiteInterpreter* interpreter) {
  if (baton::Status s = interpreter->interp->ensure_prepared(); !s) {
    report(interpreter->reporter, s.message());
    return kTfLiteError;
  }
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
    if (!interpreter->client_owned(static_cast<size_t>(interpreter->inputs[k])) || !t.data.raw) continue;
    if (baton::Status s = interpreter->interp->set_string_input(k, t.data.raw, t.bytes); !s) {
      report(interpreter->reporter, s.message());
      return kTfLiteError;
    }
  }
  if (baton::Status s = interpreter->interp->invoke(); !s) {
    report(interpreter->reporter, s.message());
    return kTfLiteError;
  }
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
  interpreter->interp->cancel();
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
  return static_cast<int32_t>(interpreter->model->signatures.size());
}

const char* TfLiteInterpreterGetSignatureKey(const TfLiteInterpreter* interpreter, int32_t signature_index) {
  const auto& sigs = interpreter->model->signatures;
  if (signature_index < 0 || static_cast<size_t>(signature_index) >= sigs.size()) return nullptr;
  return sigs[static_cast<size_t>(signature_index)].key.c_str();
}

TfLiteSignatureRunner* TfLiteInterpreterGetSignatureRunner(const TfLiteInterpreter* interpreter,
                                                           const char* signature_key) {
  auto* self = const_cast<TfLiteInterpreter*>(interpreter);
  for (const baton::SignatureInfo& sig : interpreter->model->signatures) {
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

static int32_t signature_tensor(const std::vector<std::pair<std::string, int32_t>>& list, const char* name) {
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
  return index < 0 ? nullptr : &signature_runner->owner->tensors[static_cast<size_t>(index)];
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
  return index < 0 ? nullptr : &signature_runner->owner->tensors[static_cast<size_t>(index)];
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
