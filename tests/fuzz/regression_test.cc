// Every input the fuzzers ever crashed on (tests/fuzz/regressions) goes through the loader and the
// interpreter in the normal test run: each must load or fail with a message, never crash. A finding that
// was only a valid model too costly for one fuzz iteration (a timeout) is loaded, not invoked: the
// harness's budget (fuzz_budget.h) must now skip it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fuzz_budget.h"
#include "interpreter.h"
#include "test_support.h"

namespace baton::test {
namespace {

TEST(FuzzRegressions, EveryFoundInputIsHandled) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(BATON_SOURCE_ROOT) + "/tests/fuzz/regressions")) {
    if (!e.is_regular_file() || e.path().extension() == ".md") continue;
    ++files;
    std::ifstream f(e.path(), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    auto model = load_model_buffer(bytes, e.path().filename().string());
    if (!model) {
      EXPECT_FALSE(model.error().empty()) << e.path();
      continue;
    }
    // What the loader accepts names only subgraphs that exist (an index past the end is read out of
    // bounds only where the heap happens to put a red zone, so check it, not just the crash).
    for (const SubgraphInfo& g : model.value()->subgraphs) {
      for (const NodeInfo& n : g.nodes) {
        for (int32_t c : n.callees) {
          EXPECT_TRUE(c == -1 || (c >= 0 && static_cast<size_t>(c) < model.value()->subgraphs.size()))
              << e.path() << ": node " << n.index << " names subgraph " << c;
        }
      }
    }
    if (!fuzz::within_budget(*model.value())) continue;
    auto interp = Interpreter::create(env.value(), model.value());
    if (!interp) {
      EXPECT_FALSE(interp.error().empty()) << e.path();
      continue;
    }
    (void)interp.value()->invoke();
  }
  RecordProperty("files", static_cast<int>(files));
}

// TFLite 2.9's hybrid time-major BIDIRECTIONAL_SEQUENCE_RNN runs the whole sequence once per time step;
// the builtin pack does the same for bit-exact outputs, so 38659 steps are 1.5e9 steps, minutes of work.
// The fuzzer once timed out on such a mutation of an op case: the budget counts the square.
TEST(FuzzRegressions, TheBudgetCountsTheHybridBidirectionalRnnsSquareTime) {
  const std::string dir = std::string(BATON_SOURCE_ROOT) + "/tests/fuzz/regressions/";
  auto model = load_model_file(dir + "bidirectional-rnn-hybrid-time-major-38659-steps.tflite");
  ASSERT_TRUE(model) << model.error();
  EXPECT_FALSE(fuzz::within_budget(*model.value()));
  // The op case it came from (3 steps) is well within it.
  auto small = load_model_file(std::string(BATON_SOURCE_ROOT) +
                               "/tests/data/op-cases/bidirectional_sequence_rnn_hybrid_asymmetric_time_major/model.tflite");
  ASSERT_TRUE(small) << small.error();
  EXPECT_TRUE(fuzz::within_budget(*small.value()));
}

// A STABLEHLO_REDUCE_WINDOW whose window spans 1e10 positions, nearly all padding, over a 5x6 operand is a
// valid model whose every output element folds the init value 1e10 times: hours of work. The fuzzer once
// timed out on such a mutation of an op case: the budget counts the folds.
TEST(FuzzRegressions, TheBudgetCountsAReduceWindowsFolds) {
  const std::string cases = std::string(BATON_SOURCE_ROOT) + "/tests/data/op-cases/";
  auto model = load_model_file(std::string(BATON_SOURCE_ROOT) +
                               "/tests/fuzz/regressions/stablehlo-reduce-window-1e10-position-window.tflite");
  ASSERT_TRUE(model) << model.error();
  EXPECT_FALSE(fuzz::within_budget(*model.value()));
  for (const char* name : {"stablehlo_reduce_window_max_f32_padded", "reduce_window_add_i64_rank6"}) {
    auto small = load_model_file(cases + name + "/model.tflite");
    ASSERT_TRUE(small) << small.error();
    EXPECT_TRUE(fuzz::within_budget(*small.value())) << name;
  }
  // The padded case by hand: a [1,5,6,2] operand, a 3x3 window at stride 2 with one row and column of
  // padding each side gives a [1,3,3,2] output, 18 elements of 9 folds each.
  auto padded = load_model_file(cases + "stablehlo_reduce_window_max_f32_padded/model.tflite");
  ASSERT_TRUE(padded) << padded.error();
  const SubgraphInfo& g = padded.value()->subgraphs[0];
  EXPECT_EQ(fuzz::window_folds(g, g.nodes[0]), 18 * 9);
}

// A 16x8 CONV_2D over an input of no channels, 2000 x 2000 pixels, with a 100 x 100 window: no bytes in
// the input or the filter, a declared output of 3 x 3 pixels, and a million pixels of output that each
// walked the whole window (9 s in a release build; the CI's fuzzer timed out on such a mutation). The
// budget counts rows from the input too, and windows over no channels by their positions.
TEST(FuzzRegressions, TheBudgetCountsRowsFromTheInputAndWindowsOverNoChannels) {
  auto model = load_model_file(std::string(BATON_SOURCE_ROOT) +
                               "/tests/fuzz/regressions/conv-2d-16x8-wide-window-over-no-channels.tflite");
  ASSERT_TRUE(model) << model.error();
  const SubgraphInfo& g = model.value()->subgraphs[0];
  // 2000 x 2000 input rows times (4 x 100 x 100 filter positions + 4 biases).
  EXPECT_EQ(fuzz::node_multiplies(g, g.nodes[0]), 2000.0 * 2000 * (4 * 100 * 100 + 4));
  EXPECT_FALSE(fuzz::within_budget(*model.value()));
}

// The fuzzer starts from every one-op case: the budget must let each of them run.
TEST(FuzzRegressions, EveryOneOpCaseIsWithinTheBudget) {
  size_t cases = 0;
  for (const char* set : {"op-cases", "quant-ops"}) {
    for (const auto& e : std::filesystem::directory_iterator(std::string(BATON_SOURCE_ROOT) + "/tests/data/" + set)) {
      const auto path = e.path() / "model.tflite";
      if (!std::filesystem::exists(path)) continue;
      auto model = load_model_file(path.string());
      if (!model) continue;  // the cases of refused models
      ++cases;
      EXPECT_TRUE(fuzz::within_budget(*model.value())) << path;
    }
  }
  EXPECT_GT(cases, 500u);
}

}  // namespace
}  // namespace baton::test
