// `baton run`: feed .npy inputs (or generated ones), invoke, write outputs as .npy.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "baton/plugin_kit.hpp"
#include "baton/string_tensor.hpp"
#include "commands.h"
#include "interrupt.h"
#include "input_gen.h"
#include "image_input.h"
#include "npy.h"

namespace baton::tool {

namespace fs = std::filesystem;

namespace {

// One line per output: name, type, shape, and the values' range (floats) or first strings. `bytes` are the
// output's, copied out.
void print_summary(const char* label, size_t i, const baton_tensor* t, const std::vector<uint8_t>& bytes) {
  const baton_tensor_type type = baton_tensor_get_type(t);
  std::printf("%s %zu: %s %s %s", label, i, baton_tensor_get_name(t), baton_tensor_type_name(type),
              kit::dims_text(api::shape_of(t)).c_str());
  if (type == BATON_TYPE_FLOAT32 && !bytes.empty()) {
    const size_t n = bytes.size() / 4;
    std::vector<float> v(n);
    std::memcpy(v.data(), bytes.data(), n * 4);
    double lo = v[0], hi = v[0], sum = 0;
    for (size_t k = 0; k < n; ++k) {
      lo = std::min<double>(lo, v[k]);
      hi = std::max<double>(hi, v[k]);
      sum += v[k];
    }
    std::printf("  min %.6g max %.6g mean %.6g", lo, hi, sum / n);
  } else if (type == BATON_TYPE_STRING && !bytes.empty()) {
    // The first few strings, quoted, with bytes that are not printable ASCII as \xNN.
    const strings::PackedStrings texts(bytes.data());
    const int shown = std::min(texts.count(), 4);
    std::string line;
    for (int k = 0; k < shown; ++k) {
      const std::string_view s = texts.at(k);
      line += k ? ", \"" : "  \"";
      for (size_t c = 0; c < std::min<size_t>(s.size(), 40); ++c) {
        const auto b = static_cast<unsigned char>(s[c]);
        char hex[5];
        std::snprintf(hex, sizeof hex, "\\x%02x", b);
        line += b >= 0x20 && b < 0x7f && b != '"' && b != '\\' ? std::string(1, static_cast<char>(b)) : std::string(hex);
      }
      line += s.size() > 40 ? "...\"" : "\"";
    }
    std::printf("%s%s", line.c_str(), texts.count() > shown ? ", ..." : "");
  }
  std::printf("\n");
}

}  // namespace

int cmd_run(const GlobalOptions& g, const boost::program_options::variables_map& vm) {
  if (!vm.count("model")) {
    std::fprintf(stderr, "baton run: no model given\nusage: baton run MODEL [--input FILE.npy ...] [--output-dir DIR]\n");
    return kExitUsage;
  }
  const std::string path = vm["model"].as<std::string>();
  const std::vector<std::string> inputs =
      vm.count("input") ? vm["input"].as<std::vector<std::string>>() : std::vector<std::string>();
  const std::string out_dir = vm.count("output-dir") ? vm["output-dir"].as<std::string>() : std::string();
  const uint32_t seed = vm["seed"].as<uint32_t>();
  std::optional<IntRange> int_range;
  if (!int_range_option(vm, "baton run", &int_range)) return kExitUsage;
  const int runs = vm["runs"].as<int>();
  if (runs < 1) {
    std::fprintf(stderr, "baton run: --runs must be at least 1\n");
    return kExitUsage;
  }

  int code = kExitOk;
  auto env = open_environment(g, &code);
  if (!env) return code;
  const auto t0 = std::chrono::steady_clock::now();
  auto created = open_interpreter(g, *env, path, &code);
  if (!created) return code;
  api::Interpreter& interp = *created;
  const auto t1 = std::chrono::steady_clock::now();
  const size_t input_count = static_cast<size_t>(interp.inputs());

  const std::string image = vm.count("image") ? vm["image"].as<std::string>() : std::string();
  if (!image.empty() && !inputs.empty()) {
    std::fprintf(stderr, "baton run: give --image or --input, not both\n");
    return kExitUsage;
  }
  auto range = parse_image_range(vm["image-range"].as<std::string>());
  if (!range) {
    std::fprintf(stderr, "baton run: %s\n", range.error().c_str());
    return kExitUsage;
  }
  if (!image.empty() && input_count != 1) {
    std::fprintf(stderr, "baton run: --image needs a model with one input; this one has %zu\n", input_count);
    return kExitUsage;
  }
  if (!inputs.empty() && inputs.size() != input_count) {
    std::fprintf(stderr, "baton run: the model has %zu input(s) but %zu --input file(s) were given\n",
                 input_count, inputs.size());
    return kExitUsage;
  }
  // Read every input first: a shape that differs from the model's resizes that input, with a notice,
  // unless --strict-shapes makes it an error.
  const bool strict_shapes = vm.count("strict-shapes") > 0;
  std::vector<NpyArray> arrays(input_count);
  for (size_t i = 0; i < input_count; ++i) {
    const baton_tensor* t = interp.input(static_cast<int>(i));
    const char* name = baton_tensor_get_name(t);
    const baton_tensor_type type = baton_tensor_get_type(t);
    const std::vector<int32_t> shape = api::shape_of(t);
    if (!image.empty()) {
      auto arr = image_to_input(image, shape, type, range.value());
      if (!arr) {
        std::fprintf(stderr, "baton: error: input 0 (%s): %s\n", name, arr.error().c_str());
        return kExitError;
      }
      arrays[i] = std::move(arr.value());
    } else if (!inputs.empty()) {
      auto arr = read_npy(inputs[i]);
      if (!arr) {
        std::fprintf(stderr, "baton: error: input %zu (%s): %s\n", i, name, arr.error().c_str());
        return kExitError;
      }
      if (arr->type != type) {
        std::fprintf(stderr, "baton: error: input %zu (%s) is %s but %s holds %s\n", i, name,
                     baton_tensor_type_name(type), inputs[i].c_str(), baton_tensor_type_name(arr->type));
        return kExitError;
      }
      if (arr->shape != shape) {
        if (arr->shape.size() != shape.size() || strict_shapes) {
          std::fprintf(stderr, "baton: error: input %zu (%s) has shape %s but %s holds %s%s\n", i, name,
                       kit::dims_text(shape).c_str(), inputs[i].c_str(), kit::dims_text(arr->shape).c_str(),
                       arr->shape.size() == shape.size() ? " (--strict-shapes: an input is not resized)" : "");
          return kExitError;
        }
        try {
          interp.resize_input(static_cast<int>(i), arr->shape);
        } catch (const api::Error& e) {
          std::fprintf(stderr, "baton: error: %s\n", e.what());
          return kExitError;
        }
        // Said once per input: a resize changes what the model computes on, and a wrong file would
        // otherwise run without a word.
        std::fprintf(stderr, "baton: input %zu (%s): resized from %s (the model's) to %s (the shape of %s); "
                     "--strict-shapes refuses this\n", i, name, kit::dims_text(shape).c_str(),
                     kit::dims_text(arr->shape).c_str(), inputs[i].c_str());
      }
      arrays[i] = std::move(arr.value());
    } else {
      NpyArray arr;
      arr.type = type;
      arr.shape = shape;
      size_t count = 1;
      for (int32_t d : shape) count *= static_cast<size_t>(d);
      if (!generate_input(type, count, seed, static_cast<uint32_t>(i), arr.data, int_range)) {
        std::fprintf(stderr, "baton: error: input %zu (%s): cannot generate %s values; give --input%s\n", i,
                     name, baton_tensor_type_name(type),
                     type == BATON_TYPE_STRING ? " (a .npy of bytes, '|S', or of text, '<U')" : "");
        return kExitError;
      }
      arrays[i] = std::move(arr);
    }
  }
  if (!out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (ec) {
      std::fprintf(stderr, "baton: error: cannot create %s: %s\n", out_dir.c_str(), ec.message().c_str());
      return kExitError;
    }
  }
  double total_ms = 0;
  for (int r = 0; r < runs; ++r) {
    // Inputs are copied before every invoke: the arena may reuse an input's bytes once it is consumed.
    for (size_t i = 0; i < input_count; ++i) {
      try {
        interp.set_input_bytes(static_cast<int>(i), arrays[i].data.data(), arrays[i].data.size());
      } catch (const api::Error& e) {
        std::fprintf(stderr, "baton: error: %s\n", e.what());
        return kExitError;
      }
    }
    const auto a = std::chrono::steady_clock::now();
    CancelOnInterrupt on_interrupt(interp);  // Ctrl-C cancels the invoke: exit 130, no outputs written
    const std::string error = interp.try_invoke();
    if (CancelOnInterrupt::interrupted()) {
      std::fprintf(stderr, "baton run: interrupted; no outputs written\n");
      return kExitInterrupted;
    }
    if (!error.empty()) {
      std::fprintf(stderr, "baton: error: %s\n", error.c_str());
      return kExitError;
    }
    total_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
  }
  for (size_t i = 0; i < input_count; ++i) {
    if (!out_dir.empty() && inputs.empty()) {  // generated or from --image: keep what was fed
      if (Status s = write_npy(out_dir + "/in_" + std::to_string(i) + ".npy", arrays[i]); !s) {
        std::fprintf(stderr, "baton: error: %s\n", s.message().c_str());
        return kExitError;
      }
    }
  }
  std::printf("model: %s (%d nodes)\n", path.c_str(), interp.node_count());
  std::printf("plan: %s\n", interp.plan(BATON_PLAN_SUMMARY).c_str());
  std::printf("load+prepare %.2f ms, invoke %.2f ms (mean of %d)\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(), total_ms / runs, runs);
  for (int i = 0; i < interp.outputs(); ++i) {
    const baton_tensor* t = interp.output(i);
    const std::vector<uint8_t> bytes = interp.output_values<uint8_t>(i);
    print_summary("output", static_cast<size_t>(i), t, bytes);
    if (out_dir.empty()) continue;
    NpyArray arr;
    arr.type = baton_tensor_get_type(t);
    arr.shape = api::shape_of(t);
    arr.data = bytes;
    if (Status s = write_npy(out_dir + "/out_" + std::to_string(i) + ".npy", arr); !s) {
      std::fprintf(stderr, "baton: error: %s\n", s.message().c_str());
      return kExitError;
    }
  }
  if (!out_dir.empty()) std::printf("wrote %s/out_*.npy\n", out_dir.c_str());
  return kExitOk;
}

}  // namespace baton::tool
