// The builtin pack's ops beyond the real models' (comparisons, logic, selection, shape and movement ops,
// reductions, more math), as one-op models (tests/data/op-cases, made by tools/make-op-cases.sh: our own
// small models, one per op, type and option that matters) run by the builtin pack alone against the
// outputs of the native TensorFlow Lite 2.9 library on the same inputs: float outputs within 1e-5 of
// the largest reference magnitude, every other type bit for bit; cases with computed axes and sizes also
// with their inputs resized between invokes, and with out-of-range values; stateful and random ops over
// several invokes; and the version ranges the cases' ops have in TFLite and LiteRT. The random ops built
// here are in op_cases_random_test.cc, what is refused or dropped at load in op_cases_load_test.cc.
// Needs neither the model cache nor ../shared.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "interpreter.h"
#include "npy.h"
#include "op_graph.h"
#include "plugin_registry.h"
#include "test_support.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;
namespace fb = baton::tflite;

std::string cases_dir() { return std::string(BATON_SOURCE_ROOT) + "/tests/data/op-cases"; }

std::vector<std::string> cases() { return case_folders(cases_dir()); }

// Float outputs within 1e-5 of the largest reference magnitude (NaN where the reference has NaN), every
// other type bit for bit.
void expect_matches(const Tensor& t, const tool::NpyArray& want, const std::string& what) {
  ASSERT_EQ(want.type, t.type) << what;
  ASSERT_EQ(want.shape, t.shape) << what;
  ASSERT_EQ(want.data.size(), t.bytes) << what;
  if (t.type == BATON_TYPE_FLOAT32) {
    const float* w = reinterpret_cast<const float*>(want.data.data());
    const float* g = reinterpret_cast<const float*>(t.data);
    double max_ref = 0, max_diff = 0;
    size_t nan_mismatch = 0;
    for (size_t k = 0; k < t.bytes / 4; ++k) {
      if (std::isnan(w[k]) || std::isnan(g[k])) {
        nan_mismatch += std::isnan(w[k]) != std::isnan(g[k]);
        continue;
      }
      max_ref = std::max(max_ref, std::abs(static_cast<double>(w[k])));
      max_diff = std::max(max_diff, std::abs(static_cast<double>(g[k]) - w[k]));
    }
    EXPECT_EQ(nan_mismatch, 0u) << what;
    EXPECT_LE(max_diff, 1e-5 * max_ref) << what << ": max |diff| " << max_diff << " vs max |ref| " << max_ref;
  } else {
    size_t differ = 0, first = 0;
    for (size_t k = 0; k < t.bytes; ++k) {
      if (t.data[k] != want.data[k] && differ++ == 0) first = k;
    }
    EXPECT_EQ(differ, 0u) << what << ": " << differ << " of " << t.bytes << " bytes differ, first at byte " << first;
  }
}

void set_input(Interpreter& in, size_t i, const std::string& file) {
  auto arr = tool::read_npy(file);
  ASSERT_TRUE(arr) << arr.error();
  ASSERT_EQ(arr->type, in.input(i).type) << file;
  ASSERT_EQ(arr->data.size(), in.input(i).bytes) << file;
  if (!arr->data.empty()) std::memcpy(in.input(i).data, arr->data.data(), arr->data.size());
}

// Feeds every input from DIR/in_I.npy; an input whose .npy has another shape than the input has now is
// resized to it first (as tflite-peer resizes it for TFLite), so one interpreter runs cases of one model
// with other input shapes one after another.
void set_inputs(Interpreter& in, const std::string& dir) {
  bool resized = false;
  for (size_t i = 0; i < in.input_count(); ++i) {
    auto arr = tool::read_npy(dir + "in_" + std::to_string(i) + ".npy");
    ASSERT_TRUE(arr) << arr.error();
    if (arr->shape == in.input(i).shape) continue;
    Status s = in.resize_input(i, arr->shape);
    ASSERT_TRUE(s) << s.message();
    resized = true;
  }
  if (resized) {
    Status s = in.ensure_prepared();
    ASSERT_TRUE(s) << s.message();
  }
  for (size_t i = 0; i < in.input_count(); ++i) {
    ASSERT_NO_FATAL_FAILURE(set_input(in, i, dir + "in_" + std::to_string(i) + ".npy"));
  }
}

// Invokes and compares every output with DIR/out_O.npy.
void invoke_and_compare(Interpreter& in, const std::string& dir, const std::string& what) {
  Status s = in.invoke();
  ASSERT_TRUE(s) << what << ": " << s.message();
  for (size_t o = 0; o < in.output_count(); ++o) {
    auto want = tool::read_npy(dir + "out_" + std::to_string(o) + ".npy");
    ASSERT_TRUE(want) << want.error();
    expect_matches(in.output(o), *want, what + " output " + std::to_string(o));
  }
}

class OpCase : public ::testing::TestWithParam<std::string> {};

// One environment per way of running the builtin pack, shared by every case: in process, or in a
// baton-plugin-host child (`isolate`) that every case's interpreter talks to in turn. Loading the pack (and
// starting a child) once instead of per case keeps the 1400 cases fast under the sanitizers; each case
// still gets its own interpreter, and a child that died would be replaced for the next one.
const std::shared_ptr<Environment>& shared_environment(bool isolate) {
  static std::shared_ptr<Environment> envs[2];
  auto& env = envs[isolate];
  if (!env) {
    EnvironmentOptions o;
    o.plugin_dirs = {BUILTIN_PACK_DIR};
    o.use_environment_variables = false;
    o.use_default_dirs = false;
    o.threads = 1;
    o.state_dir = test_state_dir();
    if (isolate) o.isolate = {"builtin"};
    o.log = [](baton_log_level, const std::string&) {};
    auto created = Environment::create(o);
    if (!created) ADD_FAILURE() << created.error();
    else env = created.value();
  }
  return env;
}

// Runs one case with the builtin pack, in process or in the child: every kernel's options, constants,
// shapes set at prepare and data-dependent outputs cross the process boundary.
void run_case(const std::string& name, bool isolate) {
  const std::string dir = cases_dir() + "/" + name + "/";
  const auto& env = shared_environment(isolate);
  ASSERT_TRUE(env);
  auto model = load_model_file(dir + "model.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env, model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  ASSERT_NO_FATAL_FAILURE(set_inputs(in, dir));
  invoke_and_compare(in, dir, name);
}

TEST_P(OpCase, MatchesNativeTfLite) { run_case(GetParam(), false); }

TEST_P(OpCase, MatchesNativeTfLiteWithTheBuiltinPackInItsOwnProcess) { run_case(GetParam(), true); }

// State carried across invokes (tests/data/op-cases/carry.json, written by tools/op-models-recurrent.mjs):
// a stateful op's single-node case, invoked once per input of its "chain" case (the same node repeated
// over one shared state tensor, run by TFLite in one invoke), gives the chain's outputs one by one: each
// invoke starts from the state the last one left. reset_variables() zeroes the state, so the next invoke
// gives the chain's first output again.
// Pairs of case names from a list tools/make-op-cases.sh writes (objects {"KEY1": "NAME", "KEY2": "NAME"},
// as JSON.stringify writes them).
std::vector<std::pair<std::string, std::string>> case_pairs(const std::string& file, const std::string& first_key,
                                                            const std::string& second_key) {
  std::vector<std::pair<std::string, std::string>> out;
  std::ifstream f(cases_dir() + "/" + file);
  if (!f) return out;
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto value_after = [&](size_t& at, const std::string& key) {
    at = text.find("\"" + key + "\"", at);
    if (at == std::string::npos) return std::string();
    const size_t open = text.find('"', text.find(':', at) + 1);
    const size_t close = text.find('"', open + 1);
    at = close + 1;
    return text.substr(open + 1, close - open - 1);
  };
  for (size_t at = 0;;) {
    std::string first = value_after(at, first_key);
    if (at == std::string::npos) break;
    std::string second = value_after(at, second_key);
    if (at == std::string::npos) break;
    out.emplace_back(first, second);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> carry_pairs() { return case_pairs("carry.json", "case", "chain"); }

class StateCarry : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(StateCarry, ASecondInvokeGivesTheNextStepsOutputs) {
  const std::string single = cases_dir() + "/" + GetParam().first + "/";
  const std::string chain = cases_dir() + "/" + GetParam().second + "/";
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_file(single + "model.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  ASSERT_EQ(in.input_count(), 1u);
  size_t steps = 0;
  while (fs::exists(chain + "in_" + std::to_string(steps) + ".npy")) ++steps;
  ASSERT_GE(steps, 2u);
  // The chain's outputs are each node's outputs in turn.
  const size_t outputs = in.output_count();
  auto step = [&](size_t k, const std::string& what) {
    ASSERT_NO_FATAL_FAILURE(set_input(in, 0, chain + "in_" + std::to_string(k) + ".npy"));
    Status s = in.invoke();
    ASSERT_TRUE(s) << s.message();
    for (size_t o = 0; o < outputs; ++o) {
      auto want = tool::read_npy(chain + "out_" + std::to_string(k * outputs + o) + ".npy");
      ASSERT_TRUE(want) << want.error();
      expect_matches(in.output(o), *want, GetParam().first + " " + what + " output " + std::to_string(o));
    }
  };
  for (size_t k = 0; k < steps; ++k) ASSERT_NO_FATAL_FAILURE(step(k, "invoke " + std::to_string(k + 1)));
  in.reset_variables();
  ASSERT_NO_FATAL_FAILURE(step(0, "first invoke after reset_variables"));
}

INSTANTIATE_TEST_SUITE_P(Cases, StateCarry, ::testing::ValuesIn(carry_pairs()),
                         [](const ::testing::TestParamInfo<std::pair<std::string, std::string>>& info) {
                           return info.param.first;
                         });

// Computed axes, permutations, sizes and k with inputs resized between invokes (tests/data/op-cases/
// resized.json, written by tools/op-models-computed.mjs): one interpreter runs a case, then its twin (the
// same model with other input shapes and values: ranks, axes and output shapes change), then the first
// again, each against native TFLite's outputs.
class ResizedBetweenInvokes : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(ResizedBetweenInvokes, GivesEachShapesOutputs) {
  const std::string first = cases_dir() + "/" + GetParam().first + "/";
  const std::string second = cases_dir() + "/" + GetParam().second + "/";
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_file(first + "model.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  ASSERT_NO_FATAL_FAILURE(set_inputs(in, first));
  ASSERT_NO_FATAL_FAILURE(invoke_and_compare(in, first, GetParam().first));
  ASSERT_NO_FATAL_FAILURE(set_inputs(in, second));
  ASSERT_NO_FATAL_FAILURE(invoke_and_compare(in, second, GetParam().second));
  ASSERT_NO_FATAL_FAILURE(set_inputs(in, first));
  ASSERT_NO_FATAL_FAILURE(invoke_and_compare(in, first, GetParam().first + " after " + GetParam().second));
}

INSTANTIATE_TEST_SUITE_P(Cases, ResizedBetweenInvokes, ::testing::ValuesIn(case_pairs("resized.json", "case", "resized")),
                         [](const ::testing::TestParamInfo<std::pair<std::string, std::string>>& info) {
                           return info.param.first;
                         });

// A computed axis, permutation, size or k that is out of range fails that invoke with the node and the
// value named (an output shape set at invoke, or, for CUMSUM and REVERSE_V2 whose outputs keep the
// input's shape, the axis read at invoke); the next invoke with good values runs.
struct BadValue {
  const char* name;
  std::vector<int32_t> values;  // for input 1
  const char* message;
};

class ComputedValueOutOfRange : public ::testing::TestWithParam<BadValue> {};

TEST_P(ComputedValueOutOfRange, FailsTheInvokeNamingTheNode) {
  const BadValue& bad = GetParam();
  const std::string dir = cases_dir() + "/" + bad.name + "/";
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_file(dir + "model.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  ASSERT_NO_FATAL_FAILURE(set_inputs(in, dir));
  ASSERT_EQ(in.input(1).type, BATON_TYPE_INT32);
  ASSERT_EQ(in.input(1).bytes, bad.values.size() * sizeof(int32_t));
  std::memcpy(in.input(1).data, bad.values.data(), in.input(1).bytes);
  Status s = in.invoke();
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find(bad.message), std::string::npos) << s.message();
  ASSERT_NO_FATAL_FAILURE(set_inputs(in, dir));
  ASSERT_NO_FATAL_FAILURE(invoke_and_compare(in, dir, std::string(bad.name) + " after a failed invoke"));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ComputedValueOutOfRange,
    ::testing::Values(BadValue{"mean_f32_computed_axes_keep", {7, 0}, "node 0 MEAN: axis 7 out of range for rank 3"},
                      BadValue{"cumsum_f32_computed_axis_exclusive", {3}, "node 0 CUMSUM: axis 3 out of range for rank 3"},
                      BadValue{"reverse_v2_computed_axis", {-4}, "node 0 REVERSE_V2: axis -4 out of range for rank 3"},
                      BadValue{"transpose_f32_computed_perm", {0, 2, 0}, "node 0 TRANSPOSE: perm repeats dimension 0"},
                      BadValue{"split_v_computed_sizes_axis", {2, 2, 2},
                               "node 0 SPLIT_V: size_splits add up to 6, dimension 1 has 7"},
                      BadValue{"topk_v2_f32_computed_k", {11}, "node 0 TOPK_V2: k 11 outside [0, 10]"}),
    [](const ::testing::TestParamInfo<BadValue>& info) { return std::string(info.param.name); });

// Cases whose outputs change from one invoke to the next (tests/data/op-cases/invokes.json, the random
// ops'; tools/op-models-random.mjs): three invokes of one interpreter give native TFLite's three, each
// drawing on from where the last left the node's generator (out_I.npy, then out_I.invoke_2.npy and
// out_I.invoke_3.npy, which tools/tflite-invokes.c wrote from one TFLite interpreter). A second
// interpreter of the same model starts again from the seeds.
std::vector<std::string> repeated_cases() {
  std::vector<std::string> out;
  std::ifstream f(cases_dir() + "/invokes.json");
  if (!f) return out;
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (size_t at = text.find('"'); at != std::string::npos; at = text.find('"', at)) {
    const size_t end = text.find('"', at + 1);
    out.push_back(text.substr(at + 1, end - at - 1));
    at = end + 1;
  }
  return out;
}

class RepeatedInvoke : public ::testing::TestWithParam<std::string> {};

TEST_P(RepeatedInvoke, LaterInvokesGiveNativeTfLitesNextOutputs) {
  const std::string dir = cases_dir() + "/" + GetParam() + "/";
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_file(dir + "model.tflite");
  ASSERT_TRUE(model) << model.error();
  for (int interpreter = 1; interpreter <= 2; ++interpreter) {
    auto interp = Interpreter::create(env.value(), model.value());
    ASSERT_TRUE(interp) << interp.error();
    Interpreter& in = *interp.value();
    for (size_t i = 0; i < in.input_count(); ++i) {
      ASSERT_NO_FATAL_FAILURE(set_input(in, i, dir + "in_" + std::to_string(i) + ".npy"));
    }
    for (int k = 1; k <= 3; ++k) {
      Status s = in.invoke();
      ASSERT_TRUE(s) << s.message();
      for (size_t o = 0; o < in.output_count(); ++o) {
        const std::string file = dir + "out_" + std::to_string(o) + (k == 1 ? "" : ".invoke_" + std::to_string(k)) + ".npy";
        auto want = tool::read_npy(file);
        ASSERT_TRUE(want) << want.error();
        expect_matches(in.output(o), *want, GetParam() + " interpreter " + std::to_string(interpreter) + " invoke " +
                                                std::to_string(k) + " output " + std::to_string(o));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, RepeatedInvoke, ::testing::ValuesIn(repeated_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });


// Lines of the form  "NAME": [ MIN, MAX ]  (whitespace as JSON.stringify writes it), by op name.
std::map<std::string, std::pair<int, int>> read_version_ranges(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f) << "no " << path;
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::map<std::string, std::pair<int, int>> ranges;
  for (size_t at = text.find('"'); at != std::string::npos; at = text.find('"', at)) {
    const size_t end = text.find('"', at + 1);
    const std::string op = text.substr(at + 1, end - at - 1);
    int lo = 0, hi = 0;
    EXPECT_EQ(std::sscanf(text.c_str() + end + 1, " : [ %d , %d ]", &lo, &hi), 2) << op;
    ranges[op] = {lo, hi};
    at = text.find(']', end);
  }
  return ranges;
}

// The version range each op of the cases has in current LiteRT (tests/data/op-cases/versions-litert.json,
// probed by tools/make-op-cases.sh), and for an op LiteRT could not be asked about the one the native
// TFLite 2.9 library registers (versions.json), is the one the builtin pack declares: a model either
// runtime runs is not refused for its version, and one both refuse is not taken. LiteRT keeps every
// version 2.9 has.
TEST(OpCaseVersions, AreTheRangesLiteRtAndTfLiteRegister) {
  const auto tflite = read_version_ranges(cases_dir() + "/versions.json");
  const auto litert = read_version_ranges(cases_dir() + "/versions-litert.json");
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  const std::vector<LoadedPlugin*> packs = env.value()->registry().op_packs();
  ASSERT_EQ(packs.size(), 1u);
  std::map<std::string, std::pair<int, int>> declared;
  for (const OpDecl& op : packs[0]->ops) declared[op_name(op.code)] = {op.min_version, op.max_version};
  for (const auto& [op, range] : tflite) {
    ASSERT_TRUE(declared.count(op)) << op << " is not declared by the builtin pack";
    const auto l = litert.find(op);
    if (l == litert.end()) {
      EXPECT_EQ(declared[op], range) << op << " (TFLite 2.9's range; LiteRT not probed)";
      continue;
    }
    EXPECT_LE(l->second.first, range.first) << op << ": LiteRT lacks a version TFLite 2.9 has";
    EXPECT_GE(l->second.second, range.second) << op << ": LiteRT lacks a version TFLite 2.9 has";
  }
  for (const auto& [op, range] : litert) {
    ASSERT_TRUE(declared.count(op)) << op << " is not declared by the builtin pack";
    EXPECT_EQ(declared[op], range) << op << " (LiteRT's range)";
  }
  EXPECT_GE(tflite.size(), 40u);
  EXPECT_GE(litert.size(), 100u);
}

INSTANTIATE_TEST_SUITE_P(Cases, OpCase, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace baton::test
