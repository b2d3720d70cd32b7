// Invariant 6 of the design (ARCHITECTURE.md, "Partitioning invariants"): same model, plugins and config:
// the same plan, every time. The build tree's plugins, with the default delegate chain and no config,
// plan real models (from $BATON_MODEL_CACHE) and the models of several subgraphs in tests/data/control-flow
// again and again: `baton plan --format json` in fresh processes prints the same bytes, and interpreters
// built in one Environment and in fresh Environments of this process place every node of every subgraph
// alike, group the same partitions with the same boundary tensors, run the same steps and plan an arena
// of the same size. A model that cannot be built must fail with the same error every time.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>

#include "interpreter.h"
#include "test_support.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;

constexpr int kRuns = 3;
// Fresh processes: two per model (a process of an instrumented build takes most of a second to start).
constexpr int kProcessRuns = 2;

// The real models whose plans differ the most: float, sparse (DENSIFY folded), quantized with a custom op,
// MediaPipe's custom ops, an LSTM.
const char* const kRealModels[] = {"face_detection_full_range", "face_detection_full_range_sparse",
                                   "hand_landmark_lite", "selfie_segmentation",
                                   "mobilenet_ssd_v2_coco_quant_postprocess", "face_landmark_with_attention",
                                   "model_1"};

// The cached real models there are; skips (or fails, when BATON_REQUIRE_MODELS is set) when none is.
std::vector<std::string> real_model_paths() {
  const char* cache = std::getenv("BATON_MODEL_CACHE");
  std::vector<std::string> paths;
  for (const char* name : kRealModels) {
    const std::string path = std::string(cache ? cache : "") + "/" + name + ".tflite";
    if (cache && fs::exists(path)) paths.push_back(path);
  }
  return paths;
}

#define REAL_MODELS_OR_SKIP(paths)                                                                 \
  const std::vector<std::string> paths = real_model_paths();                                       \
  if (paths.empty()) {                                                                             \
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "no real model in $BATON_MODEL_CACHE";      \
    GTEST_SKIP() << "no real model in $BATON_MODEL_CACHE (run tools/fetch-models.sh)";             \
  }

// Every model in tests/data/control-flow, in name order: several subgraphs each, one that is refused.
std::vector<std::string> control_flow_paths() {
  std::vector<std::string> paths;
  for (const auto& e : fs::directory_iterator(std::string(BATON_SOURCE_ROOT) + "/tests/data/control-flow")) {
    if (fs::exists(e.path() / "model.tflite")) paths.push_back((e.path() / "model.tflite").string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// The plugins a program in the build tree finds (those of the build tree's plugin folders), no config,
// the default delegate chain.
std::shared_ptr<Environment> default_environment() {
  EnvironmentOptions o;
  o.use_environment_variables = false;
  o.read_config = false;
  o.threads = 1;
  o.state_dir = test_state_dir();
  o.log = [](baton_log_level, const std::string&) {};
  auto env = Environment::create(o);
  EXPECT_TRUE(env) << env.error();
  return env ? env.value() : nullptr;
}

std::string tensor_indices(const std::vector<Tensor*>& tensors) {
  std::string s;
  for (const Tensor* t : tensors) s += " t" + std::to_string(t->index);
  return s;
}

// Everything the interpreter decided, as text: per subgraph, each node's placement and refusals, the
// partitions (delegate, nodes, boundary tensors), the steps in order and the arena's size; then the
// fallbacks. Or the error, when the model cannot be built.
std::string plan_of(const std::shared_ptr<Environment>& env, const std::string& path) {
  auto model = load_model_file(path);
  if (!model) return "load error: " + model.error();
  auto interp = Interpreter::create(env, model.value());
  if (!interp) return "error: " + interp.error();
  const Interpreter& in = *interp.value();
  std::string s = "entry " + std::to_string(in.entry_subgraph()) + "\n";
  for (size_t g = 0; g < in.subgraph_count(); ++g) {
    const Subgraph* sub = in.subgraph(g);
    s += "subgraph " + std::to_string(g) + (sub ? "\n" : ": not run\n");
    if (!sub) continue;
    for (size_t i = 0; i < sub->nodes().size(); ++i) {
      const Placement p = sub->placement(i);
      s += "  node " + std::to_string(i) + " " + node_op_name(*sub->nodes()[i].info) + ": " + p.kind + " " +
           p.plugin + " " + std::to_string(p.partition) + "\n";
      for (const Refusal& r : sub->refusals(i)) s += "    " + r.plugin + " refused: " + r.reason() + "\n";
    }
    for (const auto& part : sub->partitions()) {
      s += "  partition ";
      s += std::to_string(part->id) + " " + part->plugin->name + ":";
      for (const Node* n : part->nodes) s += " n" + std::to_string(n->info->index);
      s += " in" + tensor_indices(part->inputs) + " out" + tensor_indices(part->outputs) + "\n";
    }
    for (size_t i = 0; i < sub->step_count(); ++i) {
      s += "  step " + std::to_string(i) + " " + sub->step_op(i) + " " + sub->step_plugin(i) + "\n";
    }
    s += "  arena " + std::to_string(sub->arena_bytes()) + " folded " + std::to_string(sub->folded_nodes()) +
         " dropped " + std::to_string(sub->dropped_nodes()) + "\n";
  }
  for (const Fallback& f : in.fallbacks()) {
    s += "fallback " + f.plugin + " subgraph " + std::to_string(f.subgraph) + " partition " +
         std::to_string(f.partition) + " at " + f.stage + ": " + f.reason + "\n";
  }
  return s;
}

// Interpreters of one Environment, then of fresh Environments: the same plan as the first.
void expect_same_plans_in_process(const std::vector<std::string>& paths) {
  auto shared = default_environment();
  ASSERT_TRUE(shared);
  size_t built = 0;
  for (const std::string& path : paths) {
    const std::string first = plan_of(shared, path);
    if (first.rfind("entry ", 0) == 0) ++built;
    for (int run = 1; run < kRuns; ++run) {
      EXPECT_EQ(plan_of(shared, path), first) << path << ": interpreter " << run << " of one Environment";
      auto fresh = default_environment();
      ASSERT_TRUE(fresh);
      EXPECT_EQ(plan_of(fresh, path), first) << path << ": fresh Environment " << run;
    }
  }
  EXPECT_GT(built, 0u) << "no model could be built: are the build tree's plugins built?";
}

// `baton plan --format json MODEL` with the build tree's plugins, an empty config and the default chain,
// in a process of its own: its stdout and stderr together, and its exit code.
std::string baton_plan_json(const std::string& config, const std::string& path) {
  const std::string cmd = "env -u BATON_PLUGIN_PATH -u BATON_CONFIG XDG_STATE_HOME=" + test_state_dir() + " " +
                          BATON_EXE + " plan --format json --config " + config + " " + path + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return out + "\nexit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

void expect_same_json_in_fresh_processes(const std::vector<std::string>& paths) {
  TempDir conf;
  conf.write("empty.conf", "# nothing: the default chain\n");
  size_t planned = 0;
  for (const std::string& path : paths) {
    const std::string first = baton_plan_json(conf.file("empty.conf"), path);
    if (first.find("\"nodes\"") != std::string::npos) ++planned;
    for (int run = 1; run < kProcessRuns; ++run) {
      const std::string again = baton_plan_json(conf.file("empty.conf"), path);
      // Not EXPECT_EQ: the reports run to hundreds of kilobytes; say where they part.
      size_t at = 0;
      while (at < first.size() && at < again.size() && first[at] == again[at]) ++at;
      EXPECT_TRUE(again == first) << path << ": run " << run << " of baton plan differs from run 0 at byte " << at
                                  << ":\n  run 0: " << first.substr(at > 80 ? at - 80 : 0, 240)
                                  << "\n  run " << run << ": " << again.substr(at > 80 ? at - 80 : 0, 240);
    }
  }
  EXPECT_GT(planned, 0u) << "baton plan planned no model: are the build tree's plugins built?";
}

TEST(PlanDeterminism, RealModelsGetTheSamePlacementsInEveryEnvironment) {
  REAL_MODELS_OR_SKIP(paths);
  expect_same_plans_in_process(paths);
}

TEST(PlanDeterminism, ControlFlowModelsGetTheSamePlacementsInEveryEnvironment) {
  expect_same_plans_in_process(control_flow_paths());
}

TEST(PlanDeterminism, RealModelsGetTheSamePlanJsonInEveryProcess) {
  REAL_MODELS_OR_SKIP(paths);
  expect_same_json_in_fresh_processes(paths);
}

TEST(PlanDeterminism, ControlFlowModelsGetTheSamePlanJsonInEveryProcess) {
  expect_same_json_in_fresh_processes(control_flow_paths());
}

}  // namespace
}  // namespace baton::test
