// The cpu delegate (plugins/cpu) through the runtime: chained pairs in one partition, a new input shape,
// its refusals, the thread pool it shares with xnnpack; and the real float models through the chain
// [cpu, xnnpack] at one and two threads against the committed reference outputs. Its kernels alone are
// tested in cpu_delegate_kernels_test.cc, its convolutions in cpu_delegate_convolutions_test.cc, its
// fused blocks in cpu_delegate_residuals_test.cc (shared set-up: cpu_delegate_support.h).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "cpu_delegate_support.h"
#include "interpreter.h"
#include "op_graph.h"
#include "reference_run.h"
#include "test_support.h"
#include "tflite_generated.h"

// Counts the C++ exceptions thrown in this process (the plugins' too: their references to __cxa_throw
// bind to this executable's, which passes each on to the C++ runtime's). Not under the sanitizers, which
// intercept __cxa_throw themselves.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define BATON_COUNTS_THROWS 1
namespace {
std::atomic<int> thrown{0};
}  // namespace
// (The type is a std::type_info*; g++ declares the function itself with void*, and so must this.)
extern "C" [[noreturn]] void __cxa_throw(void* object, void* type, void (*destroy)(void*)) {
  ++thrown;
  using Throw = void (*)(void*, void*, void (*)(void*));
  static const Throw next = reinterpret_cast<Throw>(dlsym(RTLD_NEXT, "__cxa_throw"));
  next(object, type, destroy);
  __builtin_unreachable();
}
#endif

namespace baton::test {
namespace {

namespace fs = std::filesystem;
namespace fb = baton::tflite;

TEST(CpuDelegate, ChainedPairsShareAPartition) {
  const PairCase p = {{1, 14, 13, 12}, 3, 2, fb::Padding_SAME, 3, 0, 20, true};
  EXPECT_EQ(run_against_builtin(pair_graph(p, true), "two pairs", 1), 4u);
  EXPECT_EQ(run_against_builtin(pair_graph(p, true), "two pairs, two threads", 2), 4u);
}

TEST(CpuDelegate, ANewInputShapeIsPrepared) {
  const PairCase p = {{1, 9, 9, 10}, 5, 2, fb::Padding_SAME, 1, 0, 6, true};
  EXPECT_EQ(run_against_builtin(pair_graph(p), "resized", 1, {1, 21, 6, 10}), 2u);
  EXPECT_EQ(run_against_builtin(pair_graph(p), "resized, two threads", 2, {1, 21, 6, 10}), 2u);
}

TEST(CpuDelegate, RefusesWithReasons) {
  auto envs = make_envs(1, false);
  ASSERT_TRUE(envs);
  // The depthwise output read twice (by the 1x1 convolution and by an ADD): no pair.
  PairCase p = {{1, 6, 6, 4}, 3, 1, fb::Padding_SAME, 0, 0, 4, true};
  OpGraph g = pair_graph(p);
  const int32_t extra = g.output({1, 6, 6, 4});
  g.ops.push_back({BATON_OP_ADD, {g.ops[0].outputs[0], g.ops[1].outputs[0]}, {extra}, [](flatbuffers::FlatBufferBuilder& fbb) { return std::make_pair(fb::BuiltinOptions_AddOptions, add_options(fbb, act(0)).Union()); }});
  auto model = load_model_buffer(g.build(), "shared.tflite");
  ASSERT_TRUE(model) << model.error();
  auto in = Interpreter::create(envs->cpu, model.value());
  ASSERT_TRUE(in) << in.error();
  EXPECT_EQ(delegated_nodes(*in.value(), "cpu"), 0u);
  ASSERT_FALSE(in.value()->refusals(0).empty());
  EXPECT_NE(in.value()->refusals(0).back().reason().find("1x1 CONV_2D that alone reads it"), std::string::npos);

  // A 7x7 window: the last pair refused is named.
  p.kernel = 7;
  p.in = {1, 9, 9, 4};
  auto model7 = load_model_buffer(pair_graph(p).build(), "seven.tflite");
  ASSERT_TRUE(model7);
  auto in7 = Interpreter::create(envs->cpu, model7.value());
  ASSERT_TRUE(in7) << in7.error();
  EXPECT_EQ(delegated_nodes(*in7.value(), "cpu"), 0u);
  EXPECT_NE(in7.value()->refusals(0).back().reason().find("3x3 or 5x5"), std::string::npos);
}

// An int8 depthwise + 1x1 convolution pair (the float pattern the cpu delegate fuses) and an int8 ADD:
// cpu and xnnpack (without its `quantized` option) refuse every node with its type as the reason, and
// without a C++ exception: an 8-bit model's every node is refused, and a throw for each cost the load
// its time and the process the unwinder's pages (MoveNet int8: 137 throws in xnnpack alone, and about
// 150 KB of peak RSS in libstdc++'s and libgcc's unwinding tables and code).
TEST(CpuDelegate, EightBitNodesAreRefusedWithoutAThrow) {
#ifndef BATON_COUNTS_THROWS
  GTEST_SKIP() << "the sanitizers intercept __cxa_throw";
#else
  auto envs = make_envs(1, true);
  ASSERT_TRUE(envs);
  OpGraph g;
  const Quantization codes{{0.05f}, {-3}, 0};
  const int32_t in = g.quantized({1, 6, 7, 8}, 9, codes);
  g.inputs.push_back(in);
  std::vector<uint8_t> dw_w(72), pw_w(40), dw_b(32, 0), pw_b(20, 0);
  for (size_t k = 0; k < dw_w.size(); ++k) dw_w[k] = static_cast<uint8_t>(k * 7 % 19);
  for (size_t k = 0; k < pw_w.size(); ++k) pw_w[k] = static_cast<uint8_t>(k * 5 % 23);
  const int32_t dw_f = g.quantized({1, 3, 3, 8}, 9, {{0.02f}, {0}, 3}, dw_w);
  const int32_t dw_bias = g.quantized({8}, 2, {{0.001f}, {0}, 0}, dw_b);
  const int32_t mid = g.quantized({1, 6, 7, 8}, 9, codes);
  g.op(BATON_OP_DEPTHWISE_CONV_2D, {in, dw_f, dw_bias}, {mid}, [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                          fb::CreateDepthwiseConv2DOptions(b, fb::Padding_SAME, 1, 1, 1).Union());
  }, 3);
  const int32_t pw_f = g.quantized({5, 1, 1, 8}, 9, {{0.02f}, {0}, 0}, pw_w);
  const int32_t pw_bias = g.quantized({5}, 2, {{0.001f}, {0}, 0}, pw_b);
  const int32_t conv = g.quantized({1, 6, 7, 5}, 9, codes);
  g.op(BATON_OP_CONV_2D, {mid, pw_f, pw_bias}, {conv}, [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::BuiltinOptions_Conv2DOptions, fb::CreateConv2DOptions(b, fb::Padding_VALID, 1, 1).Union());
  }, 3);
  const int32_t sum = g.quantized({1, 6, 7, 5}, 9, codes);
  g.outputs.push_back(sum);
  g.op(BATON_OP_ADD, {conv, conv}, {sum}, [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::BuiltinOptions_AddOptions, add_options(b, act(0)).Union());
  }, 2);
  auto model = load_model_buffer(g.build(), "int8-pair.tflite");
  ASSERT_TRUE(model) << model.error();
  const int before = thrown.load();
  auto interp = Interpreter::create(envs->cpu, model.value());
  ASSERT_TRUE(interp) << interp.error();
  ASSERT_TRUE(interp.value()->ensure_prepared());
  EXPECT_EQ(thrown.load() - before, 0) << "exceptions thrown while the delegates chose their nodes";
  EXPECT_EQ(delegated_nodes(*interp.value(), "cpu"), 0u);
  EXPECT_EQ(delegated_nodes(*interp.value(), "xnnpack"), 0u);
  std::string reasons;
  for (const Refusal& r : interp.value()->refusals(0)) reasons += r.reason() + "\n";
  EXPECT_NE(reasons.find("convolution input of type INT8 (FLOAT32 only)"), std::string::npos) << reasons;
#ifdef XNNPACK_PLUGIN_DIR
  EXPECT_NE(reasons.find("INT8 input 0 (quantized nodes are taken only with the option quantized = true)"),
            std::string::npos) << reasons;
#endif
  // The counter sees the plugins' throws: a float pair with a 7x7 window is refused by one.
  PairCase p = {{1, 9, 9, 4}, 7, 1, fb::Padding_SAME, 0, 0, 4, true};
  auto seven = load_model_buffer(pair_graph(p).build(), "seven.tflite");
  ASSERT_TRUE(seven);
  const int before7 = thrown.load();
  ASSERT_TRUE(Interpreter::create(envs->cpu, seven.value()));
  EXPECT_GT(thrown.load() - before7, 0);
#endif
}

size_t threads_of_this_process() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// cpu and xnnpack in one chain at 3 threads run on one pthreadpool the host keeps for them (shared_object,
// "pthreadpool/3"): two workers beside the caller's thread, not two pools of two workers each.
TEST(CpuDelegate, SharesOneThreadPoolWithXnnpack) {
#ifndef XNNPACK_PLUGIN_DIR
  GTEST_SKIP() << "the xnnpack delegate is not built";
#else
  TempDir plugins, conf;
  fs::copy_file(std::string(CPU_PLUGIN_DIR) + "/libbaton_cpu.so", plugins.file("libbaton_cpu.so"));
  fs::copy_file(std::string(XNNPACK_PLUGIN_DIR) + "/libbaton_xnnpack.so", plugins.file("libbaton_xnnpack.so"));
  conf.write("baton.conf", "delegates = cpu, xnnpack\n[plugin.cpu]\nthreads = 3\n[plugin.xnnpack]\nthreads = 3\n");
  // A pair for cpu, then an ADD of its output to itself for xnnpack.
  OpGraph g = pair_graph({{1, 12, 10, 8}, 3, 1, fb::Padding_SAME, 0, 0, 6, true});
  const int32_t pair_out = g.ops[1].outputs[0];
  const int32_t sum = g.output({1, 12, 10, 6});
  g.ops.push_back({BATON_OP_ADD, {pair_out, pair_out}, {sum}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_AddOptions, add_options(fbb, act(0)).Union());
                   }});
  const size_t before = threads_of_this_process();
  {
    auto env = isolated_environment({plugins.path()}, conf.file("baton.conf"));
    ASSERT_TRUE(env) << env.error();
    auto model = load_model_buffer(g.build(), "pair-add.tflite");
    ASSERT_TRUE(model) << model.error();
    auto interp = Interpreter::create(env.value(), model.value());
    ASSERT_TRUE(interp) << interp.error();
    Interpreter& in = *interp.value();
    ASSERT_TRUE(in.ensure_prepared());
    std::memset(in.input(0).data, 0, in.input(0).bytes);
    Status st = in.invoke();
    ASSERT_TRUE(st) << st.message();
    EXPECT_EQ(delegated_nodes(in, "cpu"), 2u);
    EXPECT_EQ(delegated_nodes(in, "xnnpack"), 1u);
    EXPECT_EQ(threads_of_this_process(), before + 2) << "one pool of three threads for both delegates";
  }
  EXPECT_EQ(threads_of_this_process(), before) << "the pool ends with the environment";
#endif
}

// The builtin pack computes on the same shared pool (glue/shared_pool.h): xnnpack and the pack at 3 threads
// add two workers, not two pools of two workers each (which took turns with the scheduler on a plan that
// alternates the two). The TANH after the pair stays on the pack (Debian's XNNPACK has none).
TEST(BuiltinPack, SharesOneThreadPoolWithXnnpack) {
#ifndef XNNPACK_PLUGIN_DIR
  GTEST_SKIP() << "the xnnpack delegate is not built";
#else
  TempDir plugins, conf;
  fs::copy_file(std::string(BUILTIN_PACK_DIR) + "/libbaton_builtin.so", plugins.file("libbaton_builtin.so"));
  fs::copy_file(std::string(XNNPACK_PLUGIN_DIR) + "/libbaton_xnnpack.so", plugins.file("libbaton_xnnpack.so"));
  conf.write("baton.conf", "delegates = xnnpack\n[plugin.builtin]\nthreads = 3\n[plugin.xnnpack]\nthreads = 3\n");
  OpGraph g = pair_graph({{1, 12, 10, 8}, 3, 1, fb::Padding_SAME, 0, 0, 6, true});
  const int32_t pair_out = g.ops[1].outputs[0];
  const int32_t tanh = g.output({1, 12, 10, 6});
  g.ops.push_back({BATON_OP_TANH, {pair_out}, {tanh}, nullptr});
  const size_t before = threads_of_this_process();
  {
    auto env = isolated_environment({plugins.path()}, conf.file("baton.conf"));
    ASSERT_TRUE(env) << env.error();
    auto model = load_model_buffer(g.build(), "pair-tanh.tflite");
    ASSERT_TRUE(model) << model.error();
    auto interp = Interpreter::create(env.value(), model.value());
    ASSERT_TRUE(interp) << interp.error();
    Interpreter& in = *interp.value();
    ASSERT_TRUE(in.ensure_prepared());
    std::memset(in.input(0).data, 0, in.input(0).bytes);
    Status st = in.invoke();
    ASSERT_TRUE(st) << st.message();
    EXPECT_EQ(delegated_nodes(in, "xnnpack"), 2u);
    EXPECT_EQ(threads_of_this_process(), before + 2) << "one pool of three threads for the pack and the delegate";
  }
  EXPECT_EQ(threads_of_this_process(), before) << "the pool ends with the environment";
#endif
}

// ---- real models -----------------------------------------------------------------------------------------

class CpuRealModel : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuRealModel, MatchesTheReferenceThroughCpuThenXnnpack) {
  const std::string name = GetParam();
  const std::string path = model_cache() + "/" + name.substr(0, name.find('-')) + ".tflite";
  if (!fs::exists(path)) {
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << path << " (run tools/fetch-models.sh)";
    GTEST_SKIP() << "missing " << path;
  }
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    auto envs = make_envs(threads, true);
    ASSERT_TRUE(envs);
    auto model = load_model_file(path);
    ASSERT_TRUE(model) << model.error();
    auto interp = Interpreter::create(envs->cpu, model.value());
    ASSERT_TRUE(interp) << interp.error();
    Interpreter& in = *interp.value();
    ASSERT_TRUE(run_reference_inputs(in, name, 2));
    EXPECT_TRUE(in.fallbacks().empty());
    const double worst = compare_with_reference(in, name, 1e-3);
    std::printf("[ cpu      ] %s, %d threads: cpu took %zu nodes; worst |diff|/max|ref| = %.3g\n", name.c_str(),
                threads, delegated_nodes(in, "cpu"), worst);
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, CpuRealModel,
                         ::testing::ValuesIn(reference_case_names([](const ReferenceCase& c) { return c.float_input; })),
                         param_name);

}  // namespace
}  // namespace baton::test
