// TFLite stable delegates hosted by the tflite-delegates loader: our stable delegate
// (tests/plugins/tflite_stable_delegate.cc, written against the stable delegate ABI and TFLite's opaque
// API alone) is found in a plugin folder under its delegate_name, listed by `baton plugins` with its
// kind and version, takes the ADD and MUL nodes and computes what the builtin pack computes, and `baton
// plan` shows what it took. A stable delegate whose create returns NULL is left out of the chain with
// its errno, and one of another stable delegate ABI is skipped with the reason; the model still runs.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "op_graph.h"
#include "reference_run.h"
#include "tflite_delegates_support.h"

namespace baton::test {
namespace {

using namespace tflite_delegates;  // NOLINT: the shared set-up

const std::pair<std::string, std::string> kStable = {"tflite_stable_delegate", "libvendor_stable.so"};
const std::pair<std::string, std::string> kStableNull = {"tflite_stable_null_delegate", "libvendor_null.so"};
const std::pair<std::string, std::string> kStableV2 = {"tflite_stable_v2_delegate", "libvendor_v2.so"};

std::string command_output(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  pclose(p);
  return out;
}

std::string baton_cli(const Setup& s, const std::string& args, const std::string& env = "") {
  return command_output(env + " XDG_STATE_HOME=" + test_state_dir() + " BATON_PLUGIN_PATH= " + std::string(BATON_EXE) +
                        " " + args + " --plugin-dir " + s.plugins.path() + " --config " + s.conf.file("baton.conf"));
}

TEST(TfliteStableDelegates, FoundUnderItsDelegateNameWithKindAndVersion) {
  auto s = setup({kStable}, "delegates = baton_test_stable\n");
  ASSERT_TRUE(s);
  const LoadedPlugin* p = s->env->registry().find("baton_test_stable");
  ASSERT_TRUE(p) << log_text(*s);
  EXPECT_STREQ(p->kind_name(), "delegate");
  EXPECT_EQ(p->loaded_by, "tflite-delegates");
  EXPECT_EQ(p->version, "1.2.3");
  EXPECT_NE(p->description.find("TFLite stable delegate"), std::string::npos) << p->description;
  EXPECT_EQ(s->env->registry().find("vendor_stable"), nullptr);  // not named after its file

  const std::string listing = baton_cli(*s, "plugins");
  EXPECT_NE(listing.find("baton_test_stable 1.2.3 (delegate"), std::string::npos) << listing;
  EXPECT_NE(listing.find("TFLite stable delegate 'baton_test_stable' (stable delegate ABI 1.0.0)"), std::string::npos)
      << listing;
}

TEST(TfliteStableDelegates, ComputesAddAndMulAsTheBuiltinPackDoes) {
  AddMulRun r = run_add_mul({kStable}, "delegates = baton_test_stable\n");
  ASSERT_TRUE(r.interp);
  AddMulRun builtin = run_add_mul({}, "delegates = \n");
  ASSERT_TRUE(builtin.interp);
  EXPECT_EQ(delegated_nodes(*builtin.interp, "baton_test_stable"), 0u);
  ASSERT_EQ(r.out.size(), builtin.out.size());
  for (size_t i = 0; i < r.out.size(); ++i) EXPECT_FLOAT_EQ(r.out[i], builtin.out[i]) << i;
  expect_near(r.out, expected_add_mul());

  Interpreter& in = *r.interp;
  EXPECT_EQ(delegated_nodes(in, "baton_test_stable"), 4u) << log_text(*r.setup);
  EXPECT_EQ(in.partitions().size(), 2u);
  EXPECT_TRUE(in.fallbacks().empty());
  for (int node : {0, 1, 2, 4}) EXPECT_EQ(in.placement(node).plugin, "baton_test_stable") << node;
  EXPECT_EQ(in.placement(3).kind, "op-pack");
  bool said = false;
  for (const Refusal& f : in.refusals(3)) said |= f.plugin == "baton_test_stable" && f.reason() == "not claimed by the TFLite delegate";
  EXPECT_TRUE(said);

  // Its kernels really ran: the delegate counts its invokes (one per partition per invoke).
  void* lib = dlopen(r.setup->plugins.file(kStable.second).c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  auto invokes = reinterpret_cast<int (*)()>(dlsym(lib, "baton_test_stable_invokes"));
  ASSERT_NE(invokes, nullptr);
  const int before = invokes();
  EXPECT_GE(before, 2);
  ASSERT_TRUE(in.invoke());
  EXPECT_EQ(invokes(), before + 2);
  dlclose(lib);
}

// A real model: the stable delegate takes its ADD nodes (23 partitions between the op pack's convolutions)
// and every output still matches LiteRT's reference.
TEST(TfliteStableDelegates, RealModelMatchesTheReference) {
  const char* cache = std::getenv("BATON_MODEL_CACHE");
  const std::string path = std::string(cache ? cache : "") + "/face_detection_full_range.tflite";
  if (!fs::exists(path)) GTEST_SKIP() << "missing " << path;
  auto s = setup({kStable}, "delegates = baton_test_stable\n");
  ASSERT_TRUE(s);
  const std::unique_ptr<Interpreter> interp = s->open(path);
  ASSERT_TRUE(interp);
  ASSERT_TRUE(run_reference_inputs(*interp, "face_detection_full_range", 2));
  EXPECT_GT(delegated_nodes(*interp, "baton_test_stable"), 10u) << log_text(*s);
  EXPECT_TRUE(interp->fallbacks().empty());
  compare_with_reference(*interp, "face_detection_full_range", 1e-3);
}

// Written with TFLite 2.16's names for the registration functions (TfLiteOperatorCreate, ...): the same
// delegate, the same result.
TEST(TfliteStableDelegates, TfLiteOperatorNamesWorkToo) {
  AddMulRun r = run_add_mul({{"tflite_stable_operator_delegate", "libvendor_op.so"}},
                            "delegates = baton_test_stable_operator\n");
  ASSERT_TRUE(r.interp);
  expect_near(r.out, expected_add_mul());
  EXPECT_EQ(delegated_nodes(*r.interp, "baton_test_stable_operator"), 4u) << log_text(*r.setup);
  EXPECT_TRUE(r.interp->fallbacks().empty());
}

TEST(TfliteStableDelegates, PlanShowsWhatItTook) {
  auto s = setup({kStable}, "delegates = baton_test_stable\n");
  ASSERT_TRUE(s);
  TempDir dir;
  const std::vector<uint8_t> bytes = add_mul_model();
  dir.write("m.tflite", std::string(bytes.begin(), bytes.end()));
  const std::string plan = baton_cli(*s, "plan " + dir.file("m.tflite") + " --format json");
  EXPECT_NE(plan.find("\"baton_test_stable\""), std::string::npos) << plan;
  EXPECT_NE(plan.find("not claimed by the TFLite delegate"), std::string::npos) << plan;
}

TEST(TfliteStableDelegates, CreateReturningNullIsSkippedWithItsErrno) {
  AddMulRun r = run_add_mul({kStableNull}, "delegates = baton_test_stable_null\n");
  ASSERT_TRUE(r.interp);
  expect_near(r.out, expected_add_mul());
  EXPECT_EQ(delegated_nodes(*r.interp, "baton_test_stable_null"), 0u);
  const ChainPlacement* p = r.setup->env->find_placement("baton_test_stable_null");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->position, -1);
  EXPECT_NE(p->reason.find("the stable delegate's create returned no delegate (get_delegate_errno: 42)"),
            std::string::npos)
      << p->reason;
}

TEST(TfliteStableDelegates, AnotherStableDelegateAbiIsSkippedWithTheReason) {
  AddMulRun r = run_add_mul({kStableV2, kStable}, "delegates = baton_test_stable\n");
  ASSERT_TRUE(r.interp);
  expect_near(r.out, expected_add_mul());
  EXPECT_EQ(delegated_nodes(*r.interp, "baton_test_stable"), 4u);  // the good one beside it still works
  bool skipped = false;
  for (const SkippedPlugin& sk : r.setup->env->registry().skipped()) {
    skipped |= sk.path.find(kStableV2.second) != std::string::npos &&
               sk.reason.find("delegate_abi_version 2.0.0 is not supported") != std::string::npos;
  }
  EXPECT_TRUE(skipped) << log_text(*r.setup);
}

// With another TFLite runtime's opaque API first in the process's global scope (preloaded here), a
// stable delegate would bind to it and be handed baton's context: the loader refuses it with the reason.
TEST(TfliteStableDelegates, RefusedWhenAnotherTfliteRuntimeProvidesTheOpaqueApi) {
  auto s = setup({kStable}, "delegates = baton_test_stable\n");
  ASSERT_TRUE(s);
  // verify_asan_link_order=0: in the sanitizer build the preloaded library comes before AddressSanitizer's.
  const std::string listing = baton_cli(*s, "plugins", "LD_PRELOAD=" + test_plugin("fake_tflite_runtime") +
                                                           " ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0");
  EXPECT_NE(listing.find("fake_tflite_runtime.so) already provides TFLite's opaque API"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("baton_test_stable 1.2.3 (delegate"), std::string::npos) << listing;
}

// The misbehaviour our stable delegate shows while it lives (BATON_TEST_STABLE_MODE, read at create).
struct StableMode {
  explicit StableMode(const char* mode) { setenv("BATON_TEST_STABLE_MODE", mode, 1); }
  ~StableMode() { unsetenv("BATON_TEST_STABLE_MODE"); }
};

// A bad ReplaceNodeSubsetsWithDelegateKernels call through the opaque context is refused as the
// TfLiteContext one is: the delegate takes nothing, the log names it and the reason, the model runs.
TEST(TfliteStableDelegates, BadReplaceCallsAreRefusedWithTheReason) {
  const std::pair<const char*, const char*> cases[] = {{"twice", "is listed twice"},
                                                       {"null-registration", "no kernel registration (NULL)"}};
  for (const auto& [mode, reason] : cases) {
    StableMode m(mode);
    AddMulRun r = run_add_mul({kStable}, "delegates = baton_test_stable\n");
    ASSERT_TRUE(r.interp) << mode;
    expect_near(r.out, expected_add_mul());
    EXPECT_EQ(delegated_nodes(*r.interp, "baton_test_stable"), 0u) << mode;
    const std::string log = log_text(*r.setup);
    EXPECT_NE(log.find("delegate baton_test_stable: node selection failed"), std::string::npos) << log;
    EXPECT_NE(log.find(reason), std::string::npos) << mode << ": " << log;
  }
}

// A kernel that fails prepare or invoke (with a message through TfLiteOpaqueContextReportError) loses
// its partition to the op packs, with that message as the reason.
TEST(TfliteStableDelegates, FailingPrepareAndInvokeFallBack) {
  for (const std::string mode : {"prepare-fails", "invoke-fails"}) {
    StableMode m(mode.c_str());
    AddMulRun r = run_add_mul({kStable}, "delegates = baton_test_stable\n");
    ASSERT_TRUE(r.interp) << mode;
    expect_near(r.out, expected_add_mul());
    const std::vector<Fallback> fallbacks = r.interp->fallbacks();
    ASSERT_FALSE(fallbacks.empty()) << mode;
    EXPECT_EQ(fallbacks.front().plugin, "baton_test_stable");
    EXPECT_EQ(fallbacks.front().stage, mode == "prepare-fails" ? "prepare" : "invoke");
    EXPECT_NE(fallbacks.front().reason.find("simulated"), std::string::npos) << fallbacks.front().reason;
  }
}

// A stable delegate takes TFLiteSettings, not baton options: a key in its section is a config error that
// names the key, not a string it silently ignores.
TEST(TfliteStableDelegates, OptionsAreRefused) {
  auto s = std::make_unique<tflite_delegates::Setup>();
  fs::copy_file(std::string(TFLITE_LOADER_DIR) + "/libbaton_tflite_delegates.so",
                s->plugins.file("libbaton_tflite_delegates.so"));
  s->plugins.add_plugin(kStable.first, kStable.second);
  s->conf.write("baton.conf", "delegates = baton_test_stable\n[plugin.baton_test_stable]\nthreads_hint = 4\n");
  auto env = isolated_environment({s->plugins.path()}, s->conf.file("baton.conf"), s->log);
  ASSERT_FALSE(env);
  EXPECT_NE(env.error().find("threads_hint"), std::string::npos) << env.error();
}

}  // namespace
}  // namespace baton::test
