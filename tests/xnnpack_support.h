// What the XNNPACK delegate's suites (xnnpack_test.cc, xnnpack_ops_test.cc, xnnpack_quantized_test.cc)
// share: an isolated environment whose plugin folder holds copies of the xnnpack plugin and the builtin
// and mediapipe packs, beside one of the two packs alone; the graph builder of op_graph.h under the names
// these tests use, the TFLite op codes they build with, and the reason xnnpack gives for refusing a node.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "baton/tflite_ops.h"
#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"

namespace baton::test {

struct Envs {
  TempDir plugins, conf;
  std::shared_ptr<Environment> xnnpack;  // delegates = xnnpack, the builtin and mediapipe packs for the rest
  std::shared_ptr<Environment> builtin;  // the builtin and mediapipe op packs alone
};

// xnnpack at `threads` (taking quantized nodes when `quantized`) with the packs for the rest, and the
// packs alone.
inline std::unique_ptr<Envs> make_envs(int threads = 1, bool quantized = false) {
  namespace fs = std::filesystem;
  auto e = std::make_unique<Envs>();
  fs::copy_file(std::string(XNNPACK_PLUGIN_DIR) + "/libbaton_xnnpack.so", e->plugins.file("libbaton_xnnpack.so"));
  fs::copy_file(std::string(BUILTIN_PACK_DIR) + "/libbaton_builtin.so", e->plugins.file("libbaton_builtin.so"));
  fs::copy_file(std::string(MEDIAPIPE_PACK_DIR) + "/libbaton_mediapipe.so", e->plugins.file("libbaton_mediapipe.so"));
  // min-elementwise-group = 1: the one-op cases are lone elementwise nodes, which xnnpack leaves to the op
  // packs by default.
  e->conf.write("baton.conf", "delegates = xnnpack\n[plugin.xnnpack]\nmin-elementwise-group = 1\nthreads = " +
                                 std::to_string(threads) + (quantized ? "\nquantized = true\n" : "\n"));
  auto x = isolated_environment({e->plugins.path()}, e->conf.file("baton.conf"));
  EXPECT_TRUE(x) << x.error();
  auto b = isolated_environment({BUILTIN_PACK_DIR, MEDIAPIPE_PACK_DIR});
  EXPECT_TRUE(b) << b.error();
  if (!x || !b) return nullptr;
  e->xnnpack = x.value();
  e->builtin = b.value();
  return e;
}

// make_envs(threads, quantized), made once per pair and shared by the cases of the process: each case
// gets its own interpreters, not its own copies of the plugins.
inline Envs* shared_envs(int threads = 1, bool quantized = false) {
  static std::map<std::pair<int, bool>, std::unique_ptr<Envs>> made;
  auto& envs = made[{threads, quantized}];
  if (!envs) envs = make_envs(threads, quantized);
  return envs.get();
}

inline std::string fallbacks_text(const Interpreter& in) {
  std::string s;
  for (const Fallback& f : in.fallbacks()) s += f.plugin + " lost " + std::to_string(f.nodes.size()) + " nodes at " + f.stage + ": " + f.reason + "\n";
  return s;
}

// The graph builder of tests/op_graph.h under the names these tests use.
using Graph = OpGraph;
using Op = GraphOp;

// TFLite op codes the suites build with.

// The reason xnnpack gave for node 0 of a one-op model (empty if it took it).
inline std::string xnnpack_refusal(const Graph& g) {
  auto envs = shared_envs();
  if (!envs) return "no environment";
  auto model = load_model_buffer(g.build(), "refusal.tflite");
  if (!model) return model.error();
  auto in = Interpreter::create(envs->xnnpack, model.value());
  if (!in) return in.error();
  for (const Refusal& r : in.value()->refusals(0)) {
    if (r.plugin == "xnnpack") return r.reason();
  }
  return "";
}

}  // namespace baton::test
