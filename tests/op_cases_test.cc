// The builtin pack's ops beyond the real models' (comparisons, logic, selection, shape and movement ops,
// reductions, more math), as one-op models (tests/data/op-cases, made by tools/make-op-cases.sh: our own
// small models, one per op, type and option that matters) run by the builtin pack alone against the
// outputs of the native TensorFlow Lite 2.9 library on the same inputs: float outputs within 1e-5 of
// the largest reference magnitude, every other type bit for bit; cases with computed axes and sizes also
// with their inputs resized between invokes, and with out-of-range values. Also: a model with several
// nodes that cannot run is refused with one error naming all of them. Needs neither the model cache nor ../shared.
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

std::vector<std::string> cases() {
  std::vector<std::string> out;
  if (!fs::is_directory(cases_dir())) return out;
  for (const auto& e : fs::directory_iterator(cases_dir())) {
    if (e.is_directory()) out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

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

// Runs one case with the builtin pack, in process or in a baton-plugin-host child (`isolate`): every
// kernel's options, constants, shapes set at prepare and data-dependent outputs cross the process boundary.
void run_case(const std::string& name, bool isolate) {
  const std::string dir = cases_dir() + "/" + name + "/";
  EnvironmentOptions o;
  o.plugin_dirs = {BUILTIN_PACK_DIR};
  o.use_environment_variables = false;
  o.use_default_dirs = false;
  o.threads = 1;
  o.state_dir = test_state_dir();
  if (isolate) o.isolate = {"builtin"};
  o.log = [](baton_log_level, const std::string&) {};
  auto env = Environment::create(o);
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_file(dir + "model.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
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

// Random ops' models built here: a float32 [n] or [rows, classes] tensor from constants, with seeds.
OptionsFn random_seeds(int64_t seed, int64_t seed2) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_RandomOptions, fb::CreateRandomOptions(fbb, seed, seed2).Union());
  };
}

std::vector<uint8_t> int32_bytes(std::vector<int32_t> values) {
  std::vector<uint8_t> out(values.size() * 4);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::vector<float> floats_of(const Tensor& t) {
  std::vector<float> out(t.bytes / 4);
  std::memcpy(out.data(), t.data, t.bytes);
  return out;
}

std::unique_ptr<Interpreter> interpreter_for(const std::shared_ptr<Environment>& env, const OpGraph& g) {
  auto model = load_model_buffer(g.build(), "random.tflite");
  EXPECT_TRUE(model) << model.error();
  if (!model) return nullptr;
  auto interp = Interpreter::create(env, model.value());
  EXPECT_TRUE(interp) << interp.error();
  return interp ? std::move(interp.value()) : nullptr;
}

// Both seeds 0: TFLite 2.9 seeds each node from the system's entropy, so there is no fixed output to
// compare; the numbers have the distribution's range and moments, change from invoke to invoke, and differ
// between two interpreters of one model. TFLite 2.9 reads only a seed's low 32 bits: 2^32 is 0 too.
TEST(RandomOps, UnseededNodesDrawFromTheSystemsEntropy) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  constexpr int kCount = 8192;
  for (int32_t code : {148 /* RANDOM_UNIFORM */, 146 /* RANDOM_STANDARD_NORMAL */}) {
    OpGraph g;
    const int32_t shape = g.add({1}, int32_bytes({kCount}), 2 /* INT32 */);
    const int32_t out = g.output({kCount});
    g.op(code, {shape}, {out}, code == 148 ? random_seeds(0, 0) : random_seeds(int64_t{1} << 32, 0));
    auto a = interpreter_for(env.value(), g);
    auto b = interpreter_for(env.value(), g);
    ASSERT_TRUE(a && b);
    ASSERT_TRUE(a->invoke());
    const std::vector<float> first = floats_of(a->output(0));
    ASSERT_TRUE(a->invoke());
    const std::vector<float> second = floats_of(a->output(0));
    ASSERT_TRUE(b->invoke());
    const std::vector<float> other = floats_of(b->output(0));
    EXPECT_NE(first, second) << code;
    EXPECT_NE(first, other) << code;
    double sum = 0, squares = 0;
    for (float v : first) {
      if (code == 148) {
        EXPECT_GE(v, 0.0f);
        EXPECT_LT(v, 1.0f);
      }
      EXPECT_TRUE(std::isfinite(v));
      sum += v;
      squares += static_cast<double>(v) * v;
    }
    const double mean = sum / kCount, variance = squares / kCount - mean * mean;
    if (code == 148) {
      EXPECT_NEAR(mean, 0.5, 0.02);
      EXPECT_NEAR(variance, 1.0 / 12, 0.01);
    } else {
      EXPECT_NEAR(mean, 0.0, 0.05);
      EXPECT_NEAR(variance, 1.0, 0.08);
    }
  }
  // MULTINOMIAL: classes drawn as often as their probabilities say (0.1, 0.2, 0.3, 0.4).
  OpGraph g;
  std::vector<float> logits = {std::log(0.1f), std::log(0.2f), std::log(0.3f), std::log(0.4f)};
  std::vector<uint8_t> bytes(16);
  std::memcpy(bytes.data(), logits.data(), 16);
  const int32_t l = g.add({1, 4}, bytes);
  const int32_t n = g.add({}, int32_bytes({kCount}), 2);
  const int32_t out = g.add({1, kCount}, {}, 2);
  g.outputs.push_back(out);
  g.op(149 /* MULTINOMIAL */, {l, n}, {out}, random_seeds(0, 0));
  auto m = interpreter_for(env.value(), g);
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->invoke());
  std::vector<int> counts(4);
  const auto* drawn = reinterpret_cast<const int32_t*>(m->output(0).data);
  for (int k = 0; k < kCount; ++k) {
    ASSERT_GE(drawn[k], 0);
    ASSERT_LT(drawn[k], 4);
    ++counts[static_cast<size_t>(drawn[k])];
  }
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(counts[static_cast<size_t>(c)] / double(kCount), 0.1 * (c + 1), 0.02) << c;
}

// A random node whose inputs are all constant is not folded at load (its output is not a function of
// them): a node after it sees new numbers at every invoke.
TEST(RandomOps, AreNotFoldedAtLoad) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  OpGraph g;
  const int32_t shape = g.add({2}, int32_bytes({2, 4}), 2);
  const int32_t r = g.add({2, 4});
  const int32_t out = g.output({2, 4});
  g.op(146 /* RANDOM_STANDARD_NORMAL */, {shape}, {r}, random_seeds(5, 6));
  g.op(101 /* ABS */, {r}, {out});
  auto in = interpreter_for(env.value(), g);
  ASSERT_TRUE(in);
  EXPECT_EQ(in->folded_nodes(), 0u);
  ASSERT_TRUE(in->invoke());
  const std::vector<float> first = floats_of(in->output(0));
  ASSERT_TRUE(in->invoke());
  EXPECT_NE(floats_of(in->output(0)), first);
  for (float v : first) EXPECT_GE(v, 0.0f);
}

// An input resize prepares every node again, as TFLite's AllocateTensors after ResizeInputTensor does:
// a random node is seeded again and starts its sequence over.
TEST(RandomOps, AResizePreparesThemAgainFromTheirSeeds) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  OpGraph g;
  const int32_t x = g.input({2});
  const int32_t y = g.output({2});
  const int32_t shape = g.add({1}, int32_bytes({6}), 2);
  const int32_t r = g.output({6});
  g.op(101 /* ABS */, {x}, {y});
  g.op(148 /* RANDOM_UNIFORM */, {shape}, {r}, random_seeds(7, 8));
  auto in = interpreter_for(env.value(), g);
  ASSERT_TRUE(in);
  ASSERT_TRUE(in->invoke());
  const std::vector<float> first = floats_of(in->output(1));
  ASSERT_TRUE(in->invoke());
  EXPECT_NE(floats_of(in->output(1)), first);
  ASSERT_TRUE(in->resize_input(0, {3}));
  ASSERT_TRUE(in->invoke());
  EXPECT_EQ(floats_of(in->output(1)), first);
}

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

// Three nodes that cannot run, each for another reason: an op no pack has, a type the builtin kernel does
// not take, a parameter it refuses in prepare. One error names all three, before anything runs.
TEST(UnrunnableNodes, AreAllReportedInOneError) {
  OpGraph g;
  const int32_t x = g.input({2, 3});
  const int32_t i = g.input({2, 3}, 2 /* INT32 */);
  const int32_t a = g.output({2, 3});
  const int32_t b = g.add({2, 3}, {}, 2);
  g.outputs.push_back(b);
  const int32_t c = g.output({2, 3});
  GraphOp custom;
  custom.code = 32;
  custom.custom = "NoSuchOp";
  custom.inputs = {x};
  custom.outputs = {a};
  g.ops.push_back(custom);
  g.op(28 /* TANH */, {i}, {b});
  g.op(0 /* ADD */, {x, x}, {c}, [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_AddOptions,
                          fb::CreateAddOptions(fbb, fb::ActivationFunctionType_TANH).Union());
  });
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_buffer(g.build(), "three.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_FALSE(interp);
  const std::string& e = interp.error();
  EXPECT_NE(e.find("3 node(s) cannot run"), std::string::npos) << e;
  EXPECT_NE(e.find("node 0 (NoSuchOp v1): no op pack supports custom op 'NoSuchOp'"), std::string::npos) << e;
  EXPECT_NE(e.find("node 1 (TANH v1): prepare failed; builtin: node 1 TANH: input type INT32 not supported"),
            std::string::npos) << e;
  EXPECT_NE(e.find("node 2 (ADD v1): prepare failed; builtin: node 2 ADD: fused activation 4 not supported"),
            std::string::npos) << e;
}

// What TFLite 2.9's kernels refuse, or run out of bounds, baton refuses at load with the reason: bool
// MATRIX_DIAG (TFLite runs it as float32), int8 REVERSE_SEQUENCE, FAKE_QUANT with narrow_range.
TEST(Tflite29Limits, AreRefusedWithTheirReasons) {
  OpGraph g;
  const int32_t flags = g.input({3}, 6 /* BOOL */);
  const int32_t codes = g.input({2, 4}, 9 /* INT8 */);
  const int32_t lengths = g.add({2}, {4, 0, 0, 0, 2, 0, 0, 0}, 2 /* INT32 */);
  const int32_t x = g.input({5});
  const int32_t diag = g.add({3, 3}, {}, 6);
  g.outputs.push_back(diag);
  const int32_t reversed = g.add({2, 4}, {}, 9);
  g.outputs.push_back(reversed);
  const int32_t fq = g.output({5});
  g.op(113 /* MATRIX_DIAG */, {flags}, {diag});
  g.op(112 /* REVERSE_SEQUENCE */, {codes, lengths}, {reversed}, [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_ReverseSequenceOptions, fb::CreateReverseSequenceOptions(fbb, 1, 0).Union());
  });
  g.op(80 /* FAKE_QUANT */, {x}, {fq}, [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_FakeQuantOptions, fb::CreateFakeQuantOptions(fbb, -1.0f, 1.0f, 8, true).Union());
  }, 2);
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_buffer(g.build(), "limits.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_FALSE(interp);
  const std::string& e = interp.error();
  EXPECT_NE(e.find("3 node(s) cannot run"), std::string::npos) << e;
  EXPECT_NE(e.find("node 0 MATRIX_DIAG: input type BOOL not supported"), std::string::npos) << e;
  EXPECT_NE(e.find("node 1 REVERSE_SEQUENCE: input type INT8 not supported"), std::string::npos) << e;
  EXPECT_NE(e.find("node 2 FAKE_QUANT: narrow_range is not supported"), std::string::npos) << e;
}

// Integer LSTMs that TFLite 2.9 does not run, or that lack what its kernel computes with, are refused
// with the reason: int16 activations (TFLite 2.9 has no 16x8 LSTM; its library fails such a model), and
// an int8 LSTM without the five intermediate tensors that carry its gates' and hidden value's scales.
TEST(IntegerLstm, IsRefusedWithoutItsIntermediatesOrWithInt16Activations) {
  OpGraph g;
  auto lstm = [&](int8_t type) {
    const int32_t x = g.input({1, 2}, type);
    const int32_t y = g.add({1, 2}, {}, type);
    g.outputs.push_back(y);
    std::vector<int32_t> in(20, -1);
    in[0] = x;
    g.op(16 /* LSTM */, in, {y});
  };
  lstm(7 /* INT16 */);
  lstm(9 /* INT8 */);
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_buffer(g.build(), "lstm_refusals.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_FALSE(interp);
  const std::string& e = interp.error();
  EXPECT_NE(e.find("2 node(s) cannot run"), std::string::npos) << e;
  EXPECT_NE(e.find("node 0 LSTM: int16 activations (16x8) are not supported: TFLite 2.9's LSTM kernels have no 16x8"),
            std::string::npos) << e;
  EXPECT_NE(e.find("node 1 LSTM: an integer LSTM needs its 5 intermediate tensors"), std::string::npos) << e;
}

// TFLite 2.9's 8x8_8 integer LSTM (12 intermediates) exists for the LSTM op only, and its kernel reads
// the layer norm, the projection and its bias whatever the node gives: without them, or on the sequence
// op, the node is refused with the reason.
TEST(IntegerLstm, The8x8_8FormIsRefusedWhereTfLiteHasNoneOrWouldReadMissingTensors) {
  OpGraph g;
  auto lstm = [&](int32_t code, std::vector<int32_t> shape) {
    const int32_t x = g.quantized(shape, 9 /* INT8 */, {{0.02f}, {0}});
    g.inputs.push_back(x);
    shape.back() = 2;
    const int32_t y = g.quantized(shape, 9, {{0.01f}, {0}});
    g.outputs.push_back(y);
    std::vector<int32_t> in(20, -1);
    in[0] = x;
    in[4] = g.quantized({2, 2}, 9, {{0.004f}, {0}}, std::vector<uint8_t>(4, 1));
    in[8] = g.quantized({2, 2}, 9, {{0.004f}, {0}}, std::vector<uint8_t>(4, 1));
    g.op(code, in, {y});
    for (int i = 0; i < 12; ++i) g.ops.back().intermediates.push_back(g.quantized({}, 9, {{0.01f}, {0}}));
  };
  lstm(16 /* LSTM */, {1, 2});
  lstm(44 /* UNIDIRECTIONAL_SEQUENCE_LSTM */, {3, 1, 2});
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_buffer(g.build(), "lstm_8x8_8_refusals.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_FALSE(interp);
  const std::string& e = interp.error();
  EXPECT_NE(e.find("2 node(s) cannot run"), std::string::npos) << e;
  EXPECT_NE(e.find("node 0 LSTM: the 8x8_8 integer LSTM needs the layer-norm coefficients (TFLite 2.9's kernel "
                   "always reads them)"),
            std::string::npos) << e;
  EXPECT_NE(e.find("node 1 UNIDIRECTIONAL_SEQUENCE_LSTM: the sequence op has no 8x8_8 integer form (12 intermediate "
                   "tensors): TFLite 2.9 fails such a model"),
            std::string::npos) << e;
}

// BIDIRECTIONAL_SEQUENCE_LSTM's auxiliary input: its forget, cell and output weights come for both
// directions or for neither (TFLite's rule), and one narrower than the input is refused (TFLite 2.9 steps
// through it by the input's width, past its end).
TEST(BidirectionalLstm, RefusesPartialAuxWeightsAndANarrowerAuxInput) {
  OpGraph g;
  auto floats = [](size_t n) { return std::vector<uint8_t>(4 * n, 0); };
  auto node = [&](int32_t aux_width, std::vector<int> aux_weights) {
    std::vector<int32_t> in(48, -1);
    in[0] = g.input({2, 1, 3});
    in[4] = g.add({4, 3}, floats(12));
    in[39] = g.input({2, 1, aux_width});
    for (int i : aux_weights) in[i] = g.add({4, aux_width}, floats(4 * aux_width));
    const int32_t fw = g.output({2, 1, 4}), bw = g.output({2, 1, 4});
    g.op(52 /* BIDIRECTIONAL_SEQUENCE_LSTM */, in, {fw, bw});
  };
  node(2, {41, 42, 43, 45, 46, 47});
  node(3, {41});
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_buffer(g.build(), "bidirectional_aux.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_FALSE(interp);
  const std::string& e = interp.error();
  EXPECT_NE(e.find("2 node(s) cannot run"), std::string::npos) << e;
  EXPECT_NE(e.find("node 0 BIDIRECTIONAL_SEQUENCE_LSTM: auxiliary input width 2 is below the input's 3"),
            std::string::npos) << e;
  EXPECT_NE(e.find("node 1 BIDIRECTIONAL_SEQUENCE_LSTM: the auxiliary input's forget, cell and output weights "
                   "(inputs 41-43, 45-47) must be all given or all omitted"), std::string::npos) << e;
}

// BIDIRECTIONAL_SEQUENCE_RNN's auxiliary input: its weights come for both directions or for neither
// (TFLite's rule) and only with the input they weigh, and a time-major one narrower than the input is
// refused (TFLite 2.9 steps through it by the input's width, past its end).
TEST(BidirectionalRnn, RefusesPartialAuxWeightsAndANarrowerAuxInput) {
  OpGraph g;
  auto floats = [](size_t n) { return std::vector<uint8_t>(4 * n, 0); };
  const OptionsFn time_major = [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::BuiltinOptions_BidirectionalSequenceRNNOptions,
                          fb::CreateBidirectionalSequenceRNNOptions(b, /*time_major=*/true).Union());
  };
  // Input [time 2, batch 1, 3]; 4 units a direction.
  auto node = [&](bool aux, int32_t aux_width, std::vector<int> aux_weights) {
    std::vector<int32_t> in(12, -1);
    in[0] = g.input({2, 1, 3});
    for (int first : {1, 5}) {
      in[first] = g.add({4, 3}, floats(12));
      in[first + 1] = g.add({4, 4}, floats(16));
      in[first + 2] = g.add({4}, floats(4));
      in[first + 3] = g.add({1, 4});  // the hidden state
      g.tensors[in[first + 3]].is_variable = true;
    }
    if (aux) in[9] = g.input({2, 1, aux_width});
    for (int i : aux_weights) in[i] = g.add({4, aux_width}, floats(4 * static_cast<size_t>(aux_width)));
    const int32_t fw = g.output({2, 1, 4}), bw = g.output({1, 2, 4});
    g.op(46 /* BIDIRECTIONAL_SEQUENCE_RNN */, in, {fw, bw}, time_major);
  };
  node(true, 2, {10, 11});
  node(true, 3, {10});
  node(false, 3, {10, 11});
  node(true, 5, {10, 11});  // wider: read at the input's row offsets, as TFLite 2.9 reads it
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_buffer(g.build(), "bidirectional_rnn_aux.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_FALSE(interp);
  const std::string& e = interp.error();
  EXPECT_NE(e.find("3 node(s) cannot run"), std::string::npos) << e;
  EXPECT_NE(e.find("node 0 BIDIRECTIONAL_SEQUENCE_RNN: auxiliary input is narrower (2) than the input (3): TFLite "
                   "2.9 steps through it by the input's width, past its end"),
            std::string::npos) << e;
  EXPECT_NE(e.find("node 1 BIDIRECTIONAL_SEQUENCE_RNN: takes the auxiliary weights (inputs 10 and 11) for both "
                   "directions or for neither"),
            std::string::npos) << e;
  EXPECT_NE(e.find("node 2 BIDIRECTIONAL_SEQUENCE_RNN: has auxiliary weights (inputs 10 and 11) but no auxiliary "
                   "input (input 9)"),
            std::string::npos) << e;
  EXPECT_EQ(e.find("node 3 "), std::string::npos) << e;
}

// Dead nodes are dropped before anything resolves or prepares them: a dead TANH on int32 (which the
// builtin pack would refuse) and the dead RELU it feeds do not stop the model; the live ABS runs. A
// custom op is kept even when nothing reads it (it may have effects), so a missing one still fails.
TEST(DeadNodes, AreDroppedBeforePrepareButCustomOpsAreKept) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  {
    OpGraph g;
    const int32_t x = g.input({2, 3});
    const int32_t i = g.input({2, 3}, 2 /* INT32 */);
    const int32_t dead = g.add({2, 3}, {}, 2);
    const int32_t dead2 = g.add({2, 3}, {}, 2);
    const int32_t y = g.output({2, 3});
    g.op(28 /* TANH */, {i}, {dead});
    g.op(19 /* RELU */, {dead}, {dead2});
    g.op(101 /* ABS */, {x}, {y});
    auto model = load_model_buffer(g.build(), "dead.tflite");
    ASSERT_TRUE(model) << model.error();
    auto interp = Interpreter::create(env.value(), model.value());
    ASSERT_TRUE(interp) << interp.error();
    Interpreter& in = *interp.value();
    EXPECT_EQ(in.dropped_nodes(), 2u);
    EXPECT_EQ(in.placement(0).kind, "dropped");
    EXPECT_EQ(in.placement(1).kind, "dropped");
    EXPECT_EQ(in.placement(2).kind, "op-pack");
    const float values[6] = {-1.5f, 2, -0.25f, 0, 3, -4};
    std::memcpy(in.input(0).data, values, sizeof values);
    ASSERT_TRUE(in.invoke());
    const float* out = reinterpret_cast<const float*>(in.output(0).data);
    for (int k = 0; k < 6; ++k) EXPECT_EQ(out[k], std::fabs(values[k])) << k;
  }
  {
    OpGraph g;
    const int32_t x = g.input({2, 3});
    const int32_t unused = g.add({2, 3});
    const int32_t y = g.output({2, 3});
    GraphOp custom;
    custom.code = 32;
    custom.custom = "NoSuchOp";
    custom.inputs = {x};
    custom.outputs = {unused};
    g.ops.push_back(custom);
    g.op(101 /* ABS */, {x}, {y});
    auto model = load_model_buffer(g.build(), "dead_custom.tflite");
    ASSERT_TRUE(model) << model.error();
    auto interp = Interpreter::create(env.value(), model.value());
    ASSERT_FALSE(interp);
    EXPECT_NE(interp.error().find("node 0 (NoSuchOp v1): no op pack supports custom op 'NoSuchOp'"), std::string::npos)
        << interp.error();
  }
}

}  // namespace
}  // namespace baton::test
