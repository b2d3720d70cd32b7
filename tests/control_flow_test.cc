// Models with several subgraphs (tests/data/control-flow, made by tools/make-control-flow-cases.sh: our
// own small models): WHILE loops (counting, a body that passes a value through), IF on a computed
// condition, CALL_ONCE initialising a resource variable that each invoke accumulates into, signatures
// on another subgraph. Outputs against the native TensorFlow Lite 2.9 library's on the same inputs (float
// within 1e-5 of the largest reference magnitude, the rest bit for bit), with the builtin pack alone and
// with XNNPACK taking the float nodes of the subgraphs; what the library's one run cannot show (several
// invokes of a stateful model, a reset, a signature's subgraph) is derived by hand from it. Also:
// cancelling an endless loop from another thread, and recursion refused at load. The cases whose shapes
// change at invoke (loops that grow a variable, branches of different shapes, a growing resource variable)
// are run here against the library too; control_flow_shapes_test.cc follows them over several invokes.
#include <chrono>
#include <thread>

#include "baton/baton.hpp"
#include "control_flow_support.h"
#include "state_folder.h"

namespace baton::test {
namespace {

class ControlFlowCase : public ::testing::TestWithParam<std::string> {};

TEST_P(ControlFlowCase, MatchesNativeTfLite) {
  auto in = open(GetParam(), false);
  ASSERT_TRUE(in);
  feed(*in, GetParam());
  Status s = in->invoke();
  ASSERT_TRUE(s) << s.message();
  expect_outputs_match(*in, GetParam());
}

#ifdef XNNPACK_PLUGIN_DIR
// The subgraphs are partitioned like subgraph 0: XNNPACK takes the float ADD and MUL inside loop bodies and
// branches, the control-flow nodes stay with the runtime, and the outputs still match.
TEST_P(ControlFlowCase, MatchesNativeTfLiteWithXnnpackInTheSubgraphs) {
  auto in = open(GetParam(), true);
  ASSERT_TRUE(in);
  size_t delegated = 0;
  for (size_t g = 0; g < in->subgraph_count(); ++g) {
    const Subgraph* sg = in->subgraph(g);
    if (!sg) continue;
    for (size_t n = 0; n < sg->nodes().size(); ++n) {
      const Placement p = sg->placement(n);
      if (sg->nodes()[n].runtime != RuntimeOp::none) {
        EXPECT_EQ(p.kind, "runtime") << "subgraph " << g << " node " << n;
      }
      delegated += p.kind == "delegate";
    }
  }
  feed(*in, GetParam());
  Status s = in->invoke();
  ASSERT_TRUE(s) << s.message();
  expect_outputs_match(*in, GetParam());
  if (GetParam() == "reshape_computed") {
    // The MUL after the RESHAPE reads a shape known only at invoke: xnnpack gives it back at prepare.
    ASSERT_EQ(in->fallbacks().size(), 1u);
    EXPECT_NE(in->fallbacks()[0].reason.find("gets its shape only at invoke"), std::string::npos);
  } else if (GetParam() != "signatures" && GetParam() != "call_once_accumulator" && GetParam() != "variable_grows") {
    EXPECT_GT(delegated, 0u) << "no node of any subgraph went to xnnpack";
  }
}
#endif

INSTANTIATE_TEST_SUITE_P(Cases, ControlFlowCase, ::testing::ValuesIn(reference_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(ControlFlow, BuildsEverySubgraphALoopRuns) {
  auto in = open("while_count", false);
  ASSERT_TRUE(in);
  ASSERT_EQ(in->subgraph_count(), 3u);
  for (size_t g = 0; g < 3; ++g) EXPECT_NE(in->subgraph(g), nullptr) << g;
  EXPECT_EQ(in->placement(0).kind, "runtime");
  EXPECT_EQ(in->subgraph(2)->placement(0).kind, "op-pack");  // the int32 counter's ADD
}

// CALL_ONCE sets the variable to its initial value v0 once; each invoke adds x to it and returns the sum.
// The native library's one run gives v0 + x; invoke k gives v0 + k x, and a reset starts over.
TEST(ResourceVariables, KeepTheirValueAcrossInvokesUntilAReset) {
  const std::string name = "call_once_accumulator";
  auto in = open(name, false);
  ASSERT_TRUE(in);
  feed(*in, name);
  const std::vector<float> x = npy_floats(case_dir(name) + "in_0.npy");
  const std::vector<float> first = npy_floats(case_dir(name) + "out_0.npy");
  for (int k = 1; k <= 3; ++k) {
    Status s = in->invoke();
    ASSERT_TRUE(s) << s.message();
    std::vector<float> want(first);
    for (size_t i = 0; i < want.size(); ++i) want[i] += static_cast<float>(k - 1) * x[i];
    expect_near(floats(in->output(0)), want, "invoke " + std::to_string(k));
  }
  in->reset_variables();
  Status s = in->invoke();
  ASSERT_TRUE(s) << s.message();
  expect_near(floats(in->output(0)), first, "after reset");
}

// "double" runs subgraph 0 (x + x), "triple" subgraph 1 (x * 3); names are the signature's.
TEST(Signatures, RunTheirOwnSubgraph) {
  const std::string name = "signatures";
  InterpreterOptions o;
  o.signature = "triple";
  auto in = open(name, false, o);
  ASSERT_TRUE(in);
  EXPECT_EQ(in->entry_subgraph(), 1);
  EXPECT_EQ(in->subgraph(0), nullptr);  // nothing runs subgraph 0 from here
  ASSERT_EQ(in->input_index("x"), 0);
  ASSERT_EQ(in->output_index("y"), 0);
  feed(*in, name);
  ASSERT_TRUE(in->invoke());
  std::vector<float> want = npy_floats(case_dir(name) + "in_0.npy");
  for (float& v : want) v *= 3.0f;
  expect_near(floats(in->output(0)), want, "triple");

  o.signature = "double";
  auto twice = open(name, false, o);
  ASSERT_TRUE(twice);
  feed(*twice, name);
  ASSERT_TRUE(twice->invoke());
  expect_outputs_match(*twice, name);
}

TEST(Signatures, AnUnknownKeyNamesTheKnownOnes) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env);
  auto model = load_model_file(case_dir("signatures") + "model.tflite");
  ASSERT_TRUE(model);
  InterpreterOptions o;
  o.signature = "quadruple";
  auto in = Interpreter::create(env.value(), model.value(), o);
  ASSERT_FALSE(in);
  EXPECT_NE(in.error().find("no signature \"quadruple\""), std::string::npos) << in.error();
  EXPECT_NE(in.error().find("double, triple"), std::string::npos) << in.error();
}

// The same through the C++ API (over the C API): a signature's subgraph, variables reset.
TEST(Signatures, RunThroughTheApplicationApi) {
  const char* dirs[] = {BUILTIN_PACK_DIR};
  baton_environment_options eo{};
  eo.struct_size = sizeof eo;
  eo.plugin_dirs = dirs;
  eo.plugin_dir_count = 1;
  eo.no_default_dirs = 1;
  eo.config_path = empty_config().c_str();
  api::Environment env(&eo);
  api::Interpreter in(env, case_dir("signatures") + "model.tflite", api::Interpreter::Signature{"triple"});
  const std::vector<float> x = npy_floats(case_dir("signatures") + "in_0.npy");
  in.set_input(0, x);
  in.invoke();
  std::vector<float> want(x);
  for (float& v : want) v *= 3.0f;
  expect_near(in.output_values<float>(0), want, "triple through the C++ API");
  EXPECT_THROW(api::Interpreter(env, case_dir("signatures") + "model.tflite", api::Interpreter::Signature{"none"}),
               api::Error);

  api::Interpreter acc(env, case_dir("call_once_accumulator") + "model.tflite");
  const std::vector<float> a = npy_floats(case_dir("call_once_accumulator") + "in_0.npy");
  const std::vector<float> first = npy_floats(case_dir("call_once_accumulator") + "out_0.npy");
  acc.set_input(0, a);
  acc.invoke();
  acc.invoke();
  std::vector<float> second(first);
  for (size_t i = 0; i < second.size(); ++i) second[i] += a[i];
  expect_near(acc.output_values<float>(0), second, "second invoke");
  acc.reset_variables();
  acc.invoke();
  expect_near(acc.output_values<float>(0), first, "after reset");
}

TEST(Signatures, BatonRunTakesASignatureKey) {
  fs::path out = fs::temp_directory_path() / ("baton-signature-" + std::to_string(getpid()));
  const std::string model = case_dir("signatures") + "model.tflite";
  const std::string common = std::string(" --no-delegates --plugin-dir ") + BUILTIN_PACK_DIR + " --config " + empty_config() + " ";
  const std::string cmd = std::string(BATON_EXE) + " run " + model + common + "--signature triple --input " +
                          case_dir("signatures") + "in_0.npy --output-dir " + out.string() + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<float> want = npy_floats(case_dir("signatures") + "in_0.npy");
  for (float& v : want) v *= 3.0f;
  expect_near(npy_floats((out / "out_0.npy").string()), want, "baton run --signature triple");
  fs::remove_all(out);
  const std::string bad = std::string(BATON_EXE) + " run " + model + common + "--signature nope >/dev/null 2>&1";
  EXPECT_EQ(WEXITSTATUS(std::system(bad.c_str())), 1);
}

// RESHAPE to a shape computed from data: the output gets its shape and memory at invoke, outside the arena,
// and so does the node after it; a new shape on the next invoke is followed.
TEST(DynamicShapes, FollowTheDataAtEveryInvoke) {
  const std::string name = "reshape_computed";
  auto in = open(name, false);
  ASSERT_TRUE(in);
  feed(*in, name);
  ASSERT_TRUE(in->invoke());
  expect_outputs_match(*in, name);
  const Tensor& out = in->output(1);
  EXPECT_TRUE(out.dynamic);
  EXPECT_FALSE(in->input(0).dynamic);
  const int32_t wide[2] = {-1, 12};
  std::memcpy(in->input(1).data, wide, sizeof wide);
  ASSERT_TRUE(in->invoke());
  EXPECT_EQ(in->output(1).shape, (std::vector<int32_t>{2, 12}));
  const std::vector<float> x = npy_floats(case_dir(name) + "in_0.npy");
  std::vector<float> want(x);
  for (float& v : want) v *= 2.0f;
  expect_near(floats(in->output(1)), want, "second shape");
  const int32_t bad[2] = {5, -1};  // 24 elements do not split into rows of 5
  std::memcpy(in->input(1).data, bad, sizeof bad);
  Status s = in->invoke();
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("prepare at invoke failed"), std::string::npos) << s.message();
}

std::string command_output(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(ControlFlow, InspectAndPlanShowEverySubgraph) {
  const std::string model = case_dir("while_count") + "model.tflite";
  const std::string inspect = command_output(std::string(BATON_EXE) + " inspect " + model);
  EXPECT_NE(inspect.find("  2 body: 3 nodes, 8 tensors (run by WHILE node 0 of subgraph 0)"), std::string::npos) << inspect;
  EXPECT_NE(inspect.find("ops (subgraph 2, 3 nodes):"), std::string::npos) << inspect;
  const std::string plan = command_output(std::string(BATON_EXE) + " plan " + model + " --no-delegates --plugin-dir " +
                                          BUILTIN_PACK_DIR + " --config " + empty_config());
  EXPECT_NE(plan.find("WHILE v1                     runtime -> subgraph 1 -> subgraph 2"), std::string::npos) << plan;
  EXPECT_NE(plan.find("subgraph 2 \"body\" (run by control flow):"), std::string::npos) << plan;
  EXPECT_NE(plan.find("1 MUL v1                       builtin (op pack)"), std::string::npos) << plan;
  const std::string json = command_output(std::string(BATON_EXE) + " plan " + model + " --format json --no-delegates " +
                                          "--plugin-dir " + BUILTIN_PACK_DIR + " --config " + empty_config());
  EXPECT_NE(json.find("\"callees\":[1,2]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"subgraphs\":[{\"index\":1,\"name\":\"cond\""), std::string::npos) << json;
}

// A STABLEHLO_COMPOSITE node is the runtime's: the plan names the operation and the decomposition it runs.
TEST(ControlFlow, PlanNamesAComposite) {
  const std::string model = case_dir("composite_one_input") + "model.tflite";
  const std::string args = " --no-delegates --plugin-dir " + std::string(BUILTIN_PACK_DIR) + " --config " + empty_config();
  const std::string plan = command_output(std::string(BATON_EXE) + " plan " + model + args);
  EXPECT_NE(plan.find("STABLEHLO_COMPOSITE v1       runtime -> subgraph 1 (baton.test_square_plus, its decomposition)"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("subgraph 1 \"decomposition\" (run by control flow):"), std::string::npos) << plan;
  const std::string json = command_output(std::string(BATON_EXE) + " plan " + model + " --format json" + args);
  EXPECT_NE(json.find("\"callees\":[1],\"composite\":\"baton.test_square_plus\""), std::string::npos) << json;
}

// An op pack that claims the composite by its name (tests/plugins/test_pack.c declares
// "baton.test_square_plus") runs it on its kernel, which sees the composite's name and attributes,
// instead of the decomposition: the placement and the plan say so, and the outputs are LiteRT's.
// The composite case run once in an environment of the builtin pack and `plugins` (and `config`): its
// outputs must be LiteRT's. Returns the interpreter for the caller's placement checks.
std::unique_ptr<Interpreter> run_composite_case(const TempDir& plugins, const std::string& config = "") {
  auto env = isolated_environment({BUILTIN_PACK_DIR, plugins.path()}, config);
  EXPECT_TRUE(env) << env.error();
  if (!env) return nullptr;
  auto model = load_model_file(case_dir("composite_one_input") + "model.tflite");
  EXPECT_TRUE(model) << model.error();
  if (!model) return nullptr;
  auto made = Interpreter::create(env.value(), model.value());
  EXPECT_TRUE(made) << made.error();
  if (!made) return nullptr;
  feed(*made.value(), "composite_one_input");
  Status s = made.value()->invoke();
  EXPECT_TRUE(s) << s.message();
  if (s) expect_outputs_match(*made.value(), "composite_one_input");
  return std::move(made.value());
}

TEST(ControlFlow, AnOpPackClaimsACompositeByName) {
  TempDir plugins;
  plugins.add_plugin("testpack");
  std::unique_ptr<Interpreter> in = run_composite_case(plugins);
  ASSERT_TRUE(in);
  EXPECT_EQ(in->placement(0).kind, "op-pack");
  EXPECT_EQ(in->placement(0).plugin, "testpack");
  const std::string plan = command_output(std::string(BATON_EXE) + " plan " + case_dir("composite_one_input") +
                                          "model.tflite --no-delegates --plugin-dir " + BUILTIN_PACK_DIR +
                                          " --plugin-dir " + plugins.path() + " --config " + empty_config());
  EXPECT_NE(plan.find("STABLEHLO_COMPOSITE v1       testpack (op pack)"), std::string::npos) << plan;
}

// A delegate that declares the composite by its name (ABI 1.11; tests/plugins/test_delegate.c, as
// deleg-a, with ops = baton.test_square_plus) takes the node into its partition and runs the operation
// fused; the plan says so. When its partition fails to prepare, the node goes back to its decomposition, which the
// runtime runs: the outputs are LiteRT's either way.
TEST(ControlFlow, ADelegateClaimsACompositeByNameAndFallsBackToItsDecomposition) {
  for (const std::string fail : {"none", "prepare"}) {
    SCOPED_TRACE("fail = " + fail);
    TempDir plugins, conf;
    plugins.add_plugin("deleg_a");
    conf.write("baton.conf", "delegates = deleg-a\n[plugin.deleg-a]\nops = baton.test_square_plus\nfail = " +
                                 fail + "\n");
    std::unique_ptr<Interpreter> made = run_composite_case(plugins, conf.file("baton.conf"));
    ASSERT_TRUE(made);
    Interpreter& in = *made;
    if (fail == "none") {
      EXPECT_EQ(in.placement(0).kind, "delegate");
      EXPECT_EQ(in.placement(0).plugin, "deleg-a");
      const std::string plan = command_output(std::string(BATON_EXE) + " plan " + case_dir("composite_one_input") +
                                              "model.tflite --plugin-dir " + BUILTIN_PACK_DIR + " --plugin-dir " +
                                              plugins.path() + " --config " + conf.file("baton.conf"));
      EXPECT_NE(plan.find("STABLEHLO_COMPOSITE v1       deleg-a (partition 0), baton.test_square_plus fused"),
                std::string::npos)
          << plan;
    } else {
      EXPECT_EQ(in.placement(0).kind, "runtime");
      ASSERT_FALSE(in.fallbacks().empty());
      EXPECT_EQ(in.fallbacks()[0].plugin, "deleg-a");
    }
  }
}

TEST(ControlFlow, AnEndlessLoopIsCancelledFromAnotherThread) {
  auto in = open("while_endless", false);
  ASSERT_TRUE(in);
  std::memset(in->input(0).data, 0, 4);
  Status result = Status::ok();
  std::thread runner([&] { result = in->invoke(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  in->cancel();
  runner.join();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.message(), "invoke cancelled");
}

// STABLEHLO_CASE nodes that cannot run are refused at load, each with the node and the reason.
TEST(ControlFlow, ACaseThatCannotRunIsRefusedWithItsReason) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env);
  for (const auto& [name, why] : std::vector<std::pair<std::string, std::string>>{
           {"case_bad_index_type", "node 0 (STABLEHLO_CASE v1): input 0, the branch index, must be one INT32 value"},
           {"case_bad_no_branches", "node 0 (STABLEHLO_CASE) names no branch subgraphs"},
           {"case_bad_branch_missing", "node 0 (STABLEHLO_CASE) names subgraph 9, out of range (2 subgraphs)"},
           {"case_bad_branch_inputs", "node 0 (STABLEHLO_CASE v1): branch 0 subgraph 1 takes 2 inputs but is given 1"}}) {
    auto model = load_model_file(case_dir(name) + "model.tflite");
    const std::string error = !model ? model.error() : [&] {
      auto in = Interpreter::create(env.value(), model.value());
      return in ? std::string("(runs)") : in.error();
    }();
    EXPECT_NE(error.find(why), std::string::npos) << name << ": " << error;
  }
}

TEST(ControlFlow, ASubgraphThatRunsItselfIsRefusedAtLoad) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env);
  auto model = load_model_file(case_dir("while_recursive") + "model.tflite");
  ASSERT_TRUE(model) << model.error();
  auto in = Interpreter::create(env.value(), model.value());
  ASSERT_FALSE(in);
  EXPECT_NE(in.error().find("subgraph 0 runs itself (0 -> 0)"), std::string::npos) << in.error();
}

}  // namespace
}  // namespace baton::test
