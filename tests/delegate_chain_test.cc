// The delegate chain on real runs: first come first served, refusals with reasons, limits, fallback per
// partition at init, prepare and first invoke, strict mode, and outputs equal to the no-delegate run.
#include <gtest/gtest.h>

#include "interpreter.h"
#include "plugin_registry.h"
#include "test_support.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

class DelegateChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plugins_.add_plugin("testpack");
    plugins_.add_plugin("deleg_a");
    plugins_.add_plugin("deleg_b");
  }
  // Runs add_then_double with inputs a, b under `config` and returns the output.
  Expected<std::unique_ptr<Interpreter>> make(const std::string& config, const TinyModel& m = add_then_double(),
                                              bool strict = false) {
    conf_.write("baton.conf", config);
    auto env = isolated_environment({plugins_.path()}, conf_.file("baton.conf"), log_);
    if (!env) return env.status();
    auto model = load_model_buffer(m.build(), "tiny.tflite");
    if (!model) return model.status();
    InterpreterOptions o;
    o.strict = strict;
    return Interpreter::create(env.value(), model.value(), o);
  }
  static std::vector<float> run(Interpreter& in) {
    const float a[6] = {1, -2, 3, -4, 5, -6}, b[6] = {0.5f, 1, -4, 3, 0, 7};
    std::memcpy(in.input(0).data, a, sizeof a);
    std::memcpy(in.input(1).data, b, sizeof b);
    Status s = in.invoke();
    EXPECT_TRUE(s) << s.message();
    std::vector<float> out(6);
    std::memcpy(out.data(), in.output(0).data, 24);
    return out;
  }
  bool logged(const std::string& fragment) const {
    for (const std::string& l : log_->lines) {
      if (l.find(fragment) != std::string::npos) return true;
    }
    return false;
  }
  const std::vector<float> expected_ = {3, 0, 0, 0, 10, 2};  // 2 * relu(a + b), by hand
  TempDir plugins_, conf_;
  std::shared_ptr<Captured> log_ = std::make_shared<Captured>();
};

TEST_F(DelegateChainTest, FirstDelegateTakesEverythingItCan) {
  auto interp = make("delegates = deleg-a, deleg-b\n");
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  ASSERT_EQ(in.partitions().size(), 1u);
  EXPECT_EQ(in.placement(0).kind, "delegate");
  EXPECT_EQ(in.placement(0).plugin, "deleg-a");
  EXPECT_EQ(in.placement(1).plugin, "deleg-a");
  EXPECT_EQ(in.partitions()[0]->inputs.size(), 2u);
  EXPECT_EQ(in.partitions()[0]->outputs.size(), 1u);
  EXPECT_EQ(run(in), expected_);
}

// ABI 1.6: a partition's scratch lies in the host's arena and lives while the partition runs; a request
// outside prepare is refused (the delegate fails its invoke if the host takes it).
TEST_F(DelegateChainTest, PartitionScratchLiesInTheArena) {
  auto plain = make("delegates = deleg-a\n");
  ASSERT_TRUE(plain) << plain.error();
  const size_t without = plain.value()->arena_bytes();
  auto interp = make("delegates = deleg-a\n[plugin.deleg-a]\nscratch = true\n");
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  ASSERT_EQ(in.partitions().size(), 1u);
  ASSERT_EQ(in.partitions()[0]->nodes.size(), 2u);  // the ADD's output passes through the scratch
  EXPECT_EQ(in.partitions()[0]->scratch_bytes, 64u);
  const uint8_t* scratch = in.partitions()[0]->scratch;
  ASSERT_NE(scratch, nullptr);
  const uint8_t* input = static_cast<const uint8_t*>(in.input(0).data);
  EXPECT_GE(in.arena_bytes(), without + 64);  // under AddressSanitizer with a redzone after it
  EXPECT_LE(in.arena_bytes(), without + 128);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(scratch) % 64, 0u);
  // In the arena, apart from the tensors alive while the partition runs.
  EXPECT_TRUE(scratch >= input - in.arena_bytes() && scratch < input + in.arena_bytes());
  for (const Tensor* t : in.partitions()[0]->inputs) EXPECT_NE(static_cast<const uint8_t*>(t->data), scratch);
  EXPECT_EQ(run(in), expected_);
  EXPECT_EQ(run(in), expected_);
}

// ABI 1.8: a partition input is reusable working memory after its last read only when the partition alone
// reads it and the graph does not own it (an input, an output).
TEST_F(DelegateChainTest, AnInputOnlyThePartitionReadsIsReusable) {
  const baton_host_api* api = host_api_table();
  ASSERT_NE(api->partition_input_reusable, nullptr);
  auto reusable = [&](const Interpreter& in, size_t partition, int32_t i) {
    return api->partition_input_reusable(reinterpret_cast<const baton_partition*>(in.partitions()[partition].get()), i);
  };
  // TimesTwo alone on deleg-a: its input c comes from the op pack's ADD and nothing else reads it.
  auto alone = make("delegates = deleg-a\n[plugin.deleg-a]\nops = TimesTwo\n");
  ASSERT_TRUE(alone) << alone.error();
  ASSERT_EQ(alone.value()->partitions().size(), 1u);
  EXPECT_EQ(reusable(*alone.value(), 0, 0), 1);
  EXPECT_EQ(reusable(*alone.value(), 0, 1), 0);   // no such input
  EXPECT_EQ(reusable(*alone.value(), 0, -1), 0);
  EXPECT_EQ(run(*alone.value()), expected_);
  // Both nodes on deleg-a: its inputs are the model's.
  auto both = make("delegates = deleg-a\n");
  ASSERT_TRUE(both) << both.error();
  EXPECT_EQ(reusable(*both.value(), 0, 0), 0);
  EXPECT_EQ(reusable(*both.value(), 0, 1), 0);
  // c is a model output too, or another node reads it.
  TinyModel output = add_then_double();
  output.outputs.push_back(2);
  auto shown = make("delegates = deleg-a\n[plugin.deleg-a]\nops = TimesTwo\n", output);
  ASSERT_TRUE(shown) << shown.error();
  EXPECT_EQ(reusable(*shown.value(), 0, 0), 0);
  TinyModel shared = add_then_double();
  shared.tensors.push_back({{2, 3}, 0, {}, "e"});
  shared.ops.push_back({0, "", 1, {2, 0}, {4}, 0});
  shared.outputs.push_back(4);
  auto read_twice = make("delegates = deleg-a\n[plugin.deleg-a]\nops = TimesTwo\n", shared);
  ASSERT_TRUE(read_twice) << read_twice.error();
  ASSERT_EQ(read_twice.value()->partitions().size(), 1u);
  EXPECT_EQ(reusable(*read_twice.value(), 0, 0), 0);
}

TEST_F(DelegateChainTest, LaterDelegateGetsWhatTheFirstRefused) {
  auto interp = make("delegates = deleg-a, deleg-b\n[plugin.deleg-a]\nops = ADD\n");
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  EXPECT_EQ(in.placement(0).plugin, "deleg-a");
  EXPECT_EQ(in.placement(1).plugin, "deleg-b");
  ASSERT_EQ(in.refusals(1).size(), 1u);
  EXPECT_EQ(in.refusals(1)[0].plugin, "deleg-a");
  EXPECT_EQ(in.refusals(1)[0].reason(), "not in this delegate's ops option");
  EXPECT_EQ(run(in), expected_);
}

TEST_F(DelegateChainTest, ChainOrderDecides) {
  auto interp = make("delegates = deleg-b, deleg-a\n");
  ASSERT_TRUE(interp) << interp.error();
  EXPECT_EQ(interp.value()->placement(0).plugin, "deleg-b");
}

TEST_F(DelegateChainTest, RefusalReasonsAreRecordedAndOpPacksRunTheRest) {
  auto interp = make("delegates = deleg-a\n[plugin.deleg-a]\nrefuse-all = int8 input\n");
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  EXPECT_TRUE(in.partitions().empty());
  EXPECT_EQ(in.placement(0).kind, "op-pack");
  ASSERT_EQ(in.refusals(0).size(), 1u);
  EXPECT_EQ(in.refusals(0)[0].reason(), "int8 input");
  EXPECT_EQ(run(in), expected_);
}

TEST_F(DelegateChainTest, VersionOutOfRangeIsARefusalReason) {
  TinyModel m = add_then_double();
  m.ops[1].version = 2;  // TimesTwo v2: declared v1 only, by the packs and the delegates
  auto interp = make("delegates = deleg-a\n", m);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("deleg-a refused: version 2 out of range (declares TimesTwo v1)"), std::string::npos)
      << interp.error();
}

TEST_F(DelegateChainTest, NodesNobodyCanRunAreAllListedBeforeAnythingRuns) {
  TinyModel m = add_then_double();
  m.ops[0].version = 5;
  m.ops[1].custom = "Nope";
  auto interp = make("delegates = deleg-a\n", m);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("2 node(s) cannot run"), std::string::npos) << interp.error();
  EXPECT_NE(interp.error().find("node 0 (ADD v5): no op pack supports op ADD version 5"), std::string::npos);
  EXPECT_NE(interp.error().find("node 1 (Nope v1): no op pack supports custom op 'Nope'"), std::string::npos);
}

TEST_F(DelegateChainTest, InitFailureFallsBackToTheNextDelegate) {
  auto interp = make("delegates = deleg-a, deleg-b\n[plugin.deleg-a]\nfail = init\n");
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  EXPECT_EQ(in.placement(0).plugin, "deleg-b");
  ASSERT_EQ(in.fallbacks().size(), 1u);
  EXPECT_EQ(in.fallbacks()[0].plugin, "deleg-a");
  EXPECT_EQ(in.fallbacks()[0].stage, "init");
  EXPECT_EQ(in.fallbacks()[0].reason, "simulated init failure");
  EXPECT_TRUE(logged("delegate deleg-a lost partition 0 (2 nodes) at init: simulated init failure"));
  EXPECT_EQ(run(in), expected_);
}

TEST_F(DelegateChainTest, PrepareFailureFallsBackToOpPacks) {
  auto interp = make("delegates = deleg-a\n[plugin.deleg-a]\nfail = prepare\n");
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  EXPECT_TRUE(in.partitions().empty());
  EXPECT_EQ(in.placement(0).kind, "op-pack");
  ASSERT_EQ(in.fallbacks().size(), 1u);
  EXPECT_EQ(in.fallbacks()[0].stage, "prepare");
  EXPECT_EQ(run(in), expected_);
}

TEST_F(DelegateChainTest, FirstInvokeFailureRepeatsTheRunOnTheFallbackPath) {
  auto interp = make("delegates = deleg-a, deleg-b\n[plugin.deleg-a]\nfail = invoke\n");
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  EXPECT_EQ(in.placement(0).plugin, "deleg-a");
  EXPECT_EQ(run(in), expected_);
  EXPECT_EQ(in.placement(0).plugin, "deleg-b");
  ASSERT_EQ(in.fallbacks().size(), 1u);
  EXPECT_EQ(in.fallbacks()[0].stage, "invoke");
  EXPECT_EQ(run(in), expected_);  // and it keeps running
}

TEST_F(DelegateChainTest, MinNodesPerPartitionGivesSmallPartitionsToTheNextDelegate) {
  auto interp = make("delegates = deleg-a, deleg-b\n[plugin.deleg-a]\nmin-nodes-per-partition = 3\n");
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  EXPECT_EQ(in.placement(0).plugin, "deleg-b");
  EXPECT_NE(in.refusals(0)[0].reason().find("below min-nodes-per-partition 3"), std::string::npos);
  EXPECT_EQ(run(in), expected_);
}

TEST_F(DelegateChainTest, BadLimitValueIsAConfigError) {
  auto interp = make("[plugin.deleg-a]\nmax-partitions = -1\n");
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find(":2: key 'max-partitions' in [plugin.deleg-a]: bad value '-1'"), std::string::npos)
      << interp.error();
}

TEST_F(DelegateChainTest, StrictModeFailsWhenANodeFallsBackToOpPacks) {
  auto interp = make("delegates = deleg-a\n[plugin.deleg-a]\nops = ADD\n", add_then_double(), true);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("strict mode: 1 node(s) would fall back to op packs"), std::string::npos)
      << interp.error();
  EXPECT_NE(interp.error().find("node 1 (TimesTwo v1) would run on op pack testpack; deleg-a refused"),
            std::string::npos)
      << interp.error();
  interp = make("delegates = deleg-a\n", add_then_double(), true);
  ASSERT_TRUE(interp) << interp.error();
}

TEST_F(DelegateChainTest, OpPackPrecedenceFromTheConfigDecidesPerNode) {
  plugins_.add_plugin("otherpack", "z_otherpack.so");  // loads after testpack
  auto interp = make("delegates =\n");
  ASSERT_TRUE(interp) << interp.error();
  EXPECT_EQ(interp.value()->placement(0).plugin, "testpack");  // load order without a precedence
  interp = make("delegates =\nop-pack-precedence = otherpack, testpack\n");
  ASSERT_TRUE(interp) << interp.error();
  EXPECT_EQ(interp.value()->placement(0).plugin, "otherpack");
  EXPECT_EQ(interp.value()->placement(1).plugin, "otherpack");
  EXPECT_EQ(run(*interp.value()), expected_);
}

TEST_F(DelegateChainTest, NoDelegatesMeansOpPacksOnly) {
  conf_.write("baton.conf", "delegates = deleg-a\n");
  EnvironmentOptions o;
  o.plugin_dirs = {plugins_.path()};
  o.config_path = conf_.file("baton.conf");
  o.use_environment_variables = false;
  o.use_default_dirs = false;
  o.no_delegates = true;
  o.log = [](baton_log_level, const std::string&) {};
  auto env = Environment::create(o);
  ASSERT_TRUE(env) << env.error();
  EXPECT_TRUE(env.value()->delegate_chain().empty());
}

}  // namespace
}  // namespace baton::test
