// What the cpu delegate's suites through the runtime (cpu_delegate_test.cc,
// cpu_delegate_convolutions_test.cc, cpu_delegate_residuals_test.cc) share: the graphs they build (a
// depthwise + 1x1 pair, a convolution, an activation node after the last op, one graph appended to
// another), the environments (delegates = cpu, xnnpack where built, the builtin and mediapipe packs for
// the rest; and the packs alone), and a run of one graph through both, compared.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "baton/tflite_ops.h"
#include "interpreter.h"
#include "op_graph.h"
#include "reference_run.h"
#include "test_support.h"
#include "tflite_generated.h"

namespace baton::test {


struct PairCase {
  std::vector<int32_t> in;  // NHWC
  int kernel, stride;
  fb::Padding padding;
  int dw_act, conv_act, out_channels;
  bool bias;
  int32_t between = -1;  // the builtin code of an activation node between the two (RELU 19, RELU6 21, ...)
};

// in -> DEPTHWISE_CONV_2D -> CONV_2D 1x1 -> out; `second` appends another pair (and reads the first
// pair's output only through it, so the two share one partition and a buffer).
inline OpGraph pair_graph(const PairCase& p, bool second = false) {
  OpGraph g;
  const int32_t in = g.input(p.in);
  int32_t x = in;
  std::vector<int32_t> shape = p.in;
  for (int round = 0; round < (second ? 2 : 1); ++round) {
    const int c = shape[3];
    const uint32_t seed = 10 * static_cast<uint32_t>(round);
    const int32_t dw_f = random_weights(g, {1, p.kernel, p.kernel, c}, seed + 1);
    const int32_t dw_b = p.bias ? random_weights(g, {c}, seed + 2) : -1;
    auto out = [&](int n) {
      return p.padding == fb::Padding_SAME ? (n + p.stride - 1) / p.stride : (n - p.kernel) / p.stride + 1;
    };
    const std::vector<int32_t> mid_shape = {shape[0], out(shape[1]), out(shape[2]), c};
    const int32_t dw_out = g.add(mid_shape);
    const int32_t mid = p.between >= 0 ? g.add(mid_shape) : dw_out;
    const int32_t cf = random_weights(g, {p.out_channels, 1, 1, c}, seed + 3);
    const int32_t cb = p.bias ? random_weights(g, {p.out_channels}, seed + 4) : -1;
    shape = {mid_shape[0], mid_shape[1], mid_shape[2], p.out_channels};
    const bool last = round == (second ? 1 : 0);
    const int32_t y = last ? g.output(shape) : g.add(shape);
    const int stride = p.stride, dw_act = p.dw_act, conv_act = p.conv_act;
    const fb::Padding padding = p.padding;
    g.ops.push_back({BATON_OP_DEPTHWISE_CONV_2D, {x, dw_f, dw_b}, {dw_out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                                             fb::CreateDepthwiseConv2DOptions(fbb, padding, stride, stride, 1, act(dw_act)).Union());
                     }});
    if (p.between >= 0) g.ops.push_back({p.between, {dw_out}, {mid}, nullptr});
    g.ops.push_back({BATON_OP_CONV_2D, {mid, cf, cb}, {y}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                             fb::CreateConv2DOptions(fbb, fb::Padding_SAME, 1, 1, act(conv_act)).Union());
                     }});
    x = y;
  }
  return g;
}

// Appends the nodes of `part` to `g`, part's input 0 read from g's tensor `from`; returns the index in g of
// part's output 0.
inline int32_t append_graph(OpGraph& g, const OpGraph& part, int32_t from) {
  const int32_t offset = static_cast<int32_t>(g.tensors.size());
  for (const TinyTensor& t : part.tensors) g.tensors.push_back(t);
  for (GraphOp op : part.ops) {
    for (int32_t& i : op.inputs) i = i == part.inputs[0] ? from : i < 0 ? i : i + offset;
    for (int32_t& o : op.outputs) o += offset;
    g.ops.push_back(op);
  }
  return part.outputs[0] + offset;
}

struct Envs {
  TempDir plugins, conf;
  std::shared_ptr<Environment> cpu, builtin;
};

// delegates = cpu, xnnpack (where built) at `threads`, the builtin and mediapipe packs for the rest; and
// the builtin and mediapipe packs alone.
inline std::unique_ptr<Envs> make_envs(int threads, bool with_xnnpack) {
  namespace fs = std::filesystem;
  auto e = std::make_unique<Envs>();
  fs::copy_file(std::string(CPU_PLUGIN_DIR) + "/libbaton_cpu.so", e->plugins.file("libbaton_cpu.so"));
  fs::copy_file(std::string(BUILTIN_PACK_DIR) + "/libbaton_builtin.so", e->plugins.file("libbaton_builtin.so"));
  fs::copy_file(std::string(MEDIAPIPE_PACK_DIR) + "/libbaton_mediapipe.so", e->plugins.file("libbaton_mediapipe.so"));
#ifdef XNNPACK_PLUGIN_DIR
  if (with_xnnpack) {
    fs::copy_file(std::string(XNNPACK_PLUGIN_DIR) + "/libbaton_xnnpack.so", e->plugins.file("libbaton_xnnpack.so"));
  }
#else
  with_xnnpack = false;
#endif
  const std::string t = "threads = " + std::to_string(threads) + "\n";
  e->conf.write("baton.conf", std::string("delegates = cpu") + (with_xnnpack ? ", xnnpack" : "") + "\n[plugin.cpu]\n" + t +
                                  (with_xnnpack ? "[plugin.xnnpack]\n" + t : ""));
  auto c = isolated_environment({e->plugins.path()}, e->conf.file("baton.conf"));
  EXPECT_TRUE(c) << c.error();
  auto b = isolated_environment({BUILTIN_PACK_DIR, MEDIAPIPE_PACK_DIR});
  EXPECT_TRUE(b) << b.error();
  if (!c || !b) return nullptr;
  e->cpu = c.value();
  e->builtin = b.value();
  return e;
}

// make_envs(threads, false), made once per thread count and shared by every case of the process: the
// hundreds of graphs below each get their own interpreters, not their own copies of the plugins.
inline Envs* shared_envs(int threads) {
  static std::map<int, std::unique_ptr<Envs>> made;
  auto& envs = made[threads];
  if (!envs) envs = make_envs(threads, false);
  return envs.get();
}

// Runs `g` with [cpu] at `threads` and with the builtin pack alone; returns how many nodes cpu took.
inline size_t run_against_builtin(const OpGraph& g, const std::string& what, int threads,
                                  const std::vector<int32_t>& resize = {}, size_t* cpu_arena_bytes = nullptr) {
  SCOPED_TRACE(what);
  Envs* envs = shared_envs(threads);
  if (!envs) return 0;
  auto model = load_model_buffer(g.build(), what + ".tflite");
  EXPECT_TRUE(model) << model.error();
  auto ci = Interpreter::create(envs->cpu, model.value());
  auto bi = Interpreter::create(envs->builtin, model.value());
  EXPECT_TRUE(ci && bi);
  if (!ci || !bi) return 0;
  Interpreter& c = *ci.value();
  Interpreter& b = *bi.value();
  if (!resize.empty()) {
    EXPECT_TRUE(c.resize_input(0, resize));
    EXPECT_TRUE(b.resize_input(0, resize));
  }
  EXPECT_TRUE(c.ensure_prepared());
  EXPECT_TRUE(b.ensure_prepared());
  for (size_t i = 0; i < c.input_count(); ++i) {  // every input (a residual may be a second one)
    const auto data = random_floats(c.input(i).bytes / 4, 7 + static_cast<uint32_t>(i));
    std::memcpy(c.input(i).data, data.data(), data.size());
    std::memcpy(b.input(i).data, data.data(), data.size());
  }
  for (int run = 0; run < 2; ++run) {  // twice: buffers are reused, results must not change
    Status sc = c.invoke();
    EXPECT_TRUE(sc) << sc.message();
  }
  Status sb = b.invoke();
  EXPECT_TRUE(sb) << sb.message();
  EXPECT_TRUE(c.fallbacks().empty());
  for (size_t n = 0; n < g.ops.size(); ++n) {
    for (const auto& r : c.refusals(n)) {
      if (r.reason().find("init failed") != std::string::npos) ADD_FAILURE() << "node " << n << ": " << r.reason();
    }
  }
  EXPECT_EQ(c.output_count(), b.output_count());
  for (size_t i = 0; i < std::min(c.output_count(), b.output_count()); ++i) {
    EXPECT_EQ(c.output(i).shape, b.output(i).shape) << "output " << i;
    EXPECT_LE(relative_error(reinterpret_cast<const float*>(c.output(i).data),
                             reinterpret_cast<const float*>(b.output(i).data), b.output(i).bytes / 4),
              1e-5)
        << "output " << i;
  }
  if (cpu_arena_bytes) *cpu_arena_bytes = c.arena_bytes();
  return delegated_nodes(c, "cpu");
}

struct ConvCase {
  std::vector<int32_t> in;  // NHWC
  int kernel_h, kernel_w, stride;
  fb::Padding padding;
  int act, out_channels;
  bool bias;
};

// in -> CONV_2D -> out.
inline OpGraph conv_graph(const ConvCase& p) {
  OpGraph g;
  const int32_t in = g.input(p.in);
  const int32_t f = random_weights(g, {p.out_channels, p.kernel_h, p.kernel_w, p.in[3]}, 21);
  const int32_t b = p.bias ? random_weights(g, {p.out_channels}, 22) : -1;
  auto out = [&](int n, int k) {
    return p.padding == fb::Padding_SAME ? (n + p.stride - 1) / p.stride : (n - k) / p.stride + 1;
  };
  const int32_t y = g.output({p.in[0], out(p.in[1], p.kernel_h), out(p.in[2], p.kernel_w), p.out_channels});
  const int stride = p.stride, a = p.act;
  const fb::Padding padding = p.padding;
  g.ops.push_back({BATON_OP_CONV_2D, {in, f, b}, {y}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                           fb::CreateConv2DOptions(fbb, padding, stride, stride, act(a)).Union());
                   }});
  return g;
}

// `g` (whose only output is its last op's, of `shape`) with an activation node `code` after that op:
// the op's output becomes an inner tensor, the node's the model's output.
inline OpGraph with_activation_node(OpGraph g, int32_t code, const std::vector<int32_t>& shape) {
  const int32_t mid = g.outputs.back();
  g.outputs.pop_back();
  const int32_t y = g.output(shape);
  g.ops.push_back({code, {mid}, {y}, nullptr});
  return g;
}

}  // namespace baton::test
