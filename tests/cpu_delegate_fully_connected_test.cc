// The cpu delegate's FULLY_CONNECTED (a transformer's dense layers: constant float32 weights over the last
// dimension of its input) through the runtime, against the builtin pack alone on the same random inputs at
// one to three threads: ranks, keep_num_dims, widths that run either GEMM tile, the fused activations, the
// residual ADD that joins it, what it leaves to the next delegate, with the reason, and the weights' pages it
// gives back once it packed them.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cpu_delegate_support.h"
#include "interpreter.h"
#include "op_graph.h"
#include "page_residency.h"
#include "reference_run.h"
#include "test_support.h"
#include "tflite_generated.h"

namespace baton::test {
namespace {

namespace fb = baton::tflite;

struct DenseCase {
  std::vector<int32_t> in;  // the last dimension is the weights' depth
  int units, act;
  bool keep_num_dims, bias;
};

// in -> FULLY_CONNECTED (weights [units, depth]) -> out.
OpGraph dense_graph(const DenseCase& p) {
  OpGraph g;
  const int32_t in = g.input(p.in);
  const int32_t depth = p.in.back();
  const int32_t w = random_weights(g, {p.units, depth}, 31);
  const int32_t b = p.bias ? random_weights(g, {p.units}, 32) : -1;
  std::vector<int32_t> out_shape = p.in;
  out_shape.back() = p.units;
  if (!p.keep_num_dims) {
    int32_t rows = 1;
    for (size_t d = 0; d + 1 < p.in.size(); ++d) rows *= p.in[d];
    out_shape = {rows, p.units};
  }
  const int32_t y = g.output(out_shape);
  const int a = p.act;
  const bool keep = p.keep_num_dims;
  g.ops.push_back({BATON_OP_FULLY_CONNECTED, {in, w, b}, {y}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_FullyConnectedOptions,
                                           fb::CreateFullyConnectedOptions(fbb, act(a), fb::FullyConnectedOptionsWeightsFormat_DEFAULT,
                                                                           keep).Union());
                   }});
  return g;
}

TEST(CpuDelegate, FullyConnectedMatchesTheBuiltinPack) {
  const DenseCase cases[] = {
      {{1, 99, 40}, 64, 0, true, true},     // a keyword-spotting transformer's first layer
      {{1, 196, 192}, 48, 1, true, true},   // RELU; 48 columns: the wide tile's half panel
      {{2, 70, 33}, 37, 3, false, false},   // RELU6, no bias, flattened to [140, 37]
      {{1, 128, 128}, 512, 2, true, true},  // RELU_N1_TO_1; BERT-tiny's expansion
      {{77, 24}, 40, 0, true, true},        // rank 2; the narrow tile's half tile
      {{2, 5, 11, 32}, 48, 0, true, true},  // rank 4
  };
  for (int threads : {1, 2, 3}) {
    int i = 0;
    for (const DenseCase& c : cases) {
      EXPECT_EQ(run_against_builtin(dense_graph(c), "dense case " + std::to_string(i), threads), 1u)
          << "case " << i << ", " << threads << " threads";
      ++i;
    }
  }
}

// A transformer's residual: the layer's input added to the dense layer's output joins the step (each block
// of rows while it is in cache); a constant added (a position embedding) stays an ADD of the next delegate.
TEST(CpuDelegate, AResidualAddJoinsTheFullyConnected) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    OpGraph g = dense_graph({{1, 99, 64}, 64, 0, true, true});
    const int32_t y = g.outputs.back();
    g.outputs.clear();
    const int32_t sum = g.output({1, 99, 64});
    g.ops.push_back({BATON_OP_ADD, {y, g.inputs[0]}, {sum}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_AddOptions, add_options(fbb, act(1)).Union());
                     }});
    EXPECT_EQ(run_against_builtin(g, "dense + residual ADD with RELU", threads), 2u);

    OpGraph e = dense_graph({{1, 99, 40}, 64, 0, true, true});
    const int32_t z = e.outputs.back();
    e.outputs.clear();
    const int32_t position = random_weights(e, {1, 99, 64}, 33);
    const int32_t embedded = e.output({1, 99, 64});
    e.ops.push_back({BATON_OP_ADD, {z, position}, {embedded}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_AddOptions, add_options(fbb, act(0)).Union());
                     }});
    EXPECT_EQ(run_against_builtin(e, "dense + constant ADD", threads), 1u);
  }
}

// Fewer than 64 rows (a classifier head), weights computed by the graph, and a depth that is not the
// input's last dimension go to the next delegate, each with its reason.
TEST(CpuDelegate, FullyConnectedItLeavesWithReasons) {
  auto envs = make_envs(1, false);
  ASSERT_TRUE(envs);
  auto refused = [&](const OpGraph& g, const std::string& reason) {
    SCOPED_TRACE(reason);
    auto model = load_model_buffer(g.build(), "dense.tflite");
    ASSERT_TRUE(model) << model.error();
    auto in = Interpreter::create(envs->cpu, model.value());
    ASSERT_TRUE(in) << in.error();
    EXPECT_EQ(delegated_nodes(*in.value(), "cpu"), 0u);
    ASSERT_FALSE(in.value()->refusals(0).empty());
    EXPECT_NE(in.value()->refusals(0).back().reason().find(reason), std::string::npos) << in.value()->refusals(0).back().reason();
  };
  refused(dense_graph({{1, 1, 1024}, 1000, 0, true, true}), "FULLY_CONNECTED of fewer than 64 rows");

  OpGraph computed;
  const int32_t x = computed.input({1, 99, 64});
  const int32_t w = computed.input({32, 64});
  const int32_t y = computed.output({1, 99, 32});
  computed.ops.push_back({BATON_OP_FULLY_CONNECTED, {x, w, -1}, {y}, [](flatbuffers::FlatBufferBuilder& fbb) {
                            return std::make_pair(fb::BuiltinOptions_FullyConnectedOptions,
                                                  fb::CreateFullyConnectedOptions(fbb, act(0), fb::FullyConnectedOptionsWeightsFormat_DEFAULT,
                                                                                  true).Union());
                          }});
  refused(computed, "non-constant FULLY_CONNECTED weights");

  // [6, 100] read as 10 rows of 60 by TFLite (the input flattened to the weights' depth).
  OpGraph flattened;
  const int32_t f = flattened.input({6, 100});
  const int32_t fw = random_weights(flattened, {16, 60}, 34);
  const int32_t fy = flattened.output({10, 16});
  flattened.ops.push_back({BATON_OP_FULLY_CONNECTED, {f, fw, -1}, {fy}, nullptr});
  refused(flattened, "last dimension is not the weights' depth 60");
}

// The weights it packed (ABI 1.15): from a model file, their pages leave the process once the partition
// is built, and invoke reads only the packed copy.
TEST(CpuDelegate, FullyConnectedWeightsItPackedLeaveTheProcess) {
  auto envs = make_envs(1, false);
  ASSERT_TRUE(envs);
  const std::vector<uint8_t> bytes = dense_graph({{1, 64, 256}, 128, 0, true, true}).build();  // weights 128 KiB
  auto model = load_through_a_file(bytes, "baton-cpu-pages");
  ASSERT_TRUE(model) << model.error();
  const TensorInfo& w = model.value()->main().tensors[1];
  ASSERT_TRUE(w.data_in_mapped_file);
  ASSERT_GE(whole_pages(w.data), 16);
  const uint32_t sum = touch(w.data);
  if (present_pages(w.data) < 0) GTEST_SKIP() << "/proc/self/pagemap cannot be read here";
  EXPECT_EQ(present_pages(w.data), whole_pages(w.data));
  auto made = Interpreter::create(envs->cpu, model.value());
  ASSERT_TRUE(made) << made.error();
  Interpreter& in = *made.value();
  ASSERT_EQ(delegated_nodes(in, "cpu"), 1u);
  EXPECT_EQ(present_pages(w.data), 0) << "the cpu delegate packed the weights and released them";
  const auto x = random_floats(in.input(0).bytes / 4, 9);
  std::memcpy(in.input(0).data, x.data(), x.size());
  ASSERT_TRUE(in.invoke());
  EXPECT_EQ(present_pages(w.data), 0) << "invoke reads only the packed copy";
  EXPECT_EQ(touch(w.data), sum) << "the released pages read again from the file";
}

}  // namespace
}  // namespace baton::test
