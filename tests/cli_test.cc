// The `baton` command line end to end: exit codes (0 ok, 1 runtime/model error, 2 usage/config error),
// .npy in and out, generated inputs written beside the outputs, and errors that name the input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "npy.h"
#include "test_support.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

Result baton(const std::string& args) {
  Result r;
  // The crash journal goes to a scratch folder, not the user's state folder.
  const std::string cmd = "XDG_STATE_HOME=" + test_state_dir() + " " + std::string(BATON_EXE) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plugins_.add_plugin("testpack");
    const std::vector<uint8_t> bytes = add_then_double().build();
    std::ofstream(work_.file("tiny.tflite"), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    common_ = " --plugin-dir " + plugins_.path() + " --config " + work_.file("empty.conf");
    work_.write("empty.conf", "# nothing\n");
  }
  void write_floats(const std::string& name, std::vector<int32_t> shape, std::vector<float> v) {
    tool::NpyArray a;
    a.shape = std::move(shape);
    a.data.resize(v.size() * 4);
    std::memcpy(a.data.data(), v.data(), a.data.size());
    ASSERT_TRUE(tool::write_npy(work_.file(name), a));
  }
  std::vector<float> read_floats(const std::string& path) {
    auto a = tool::read_npy(path);
    EXPECT_TRUE(a) << (a ? "" : a.error());
    if (!a) return {};
    std::vector<float> v(a->data.size() / 4);
    std::memcpy(v.data(), a->data.data(), a->data.size());
    return v;
  }
  TempDir plugins_, work_;
  std::string common_;
};

TEST_F(CliTest, RunReadsNpyInputsAndWritesOutputs) {
  write_floats("a.npy", {2, 3}, {1, -2, 3, -4, 5, -6});
  write_floats("b.npy", {2, 3}, {0.5f, 1, -4, 3, 0, 7});
  Result r = baton("run " + work_.file("tiny.tflite") + " --input " + work_.file("a.npy") + " --input " +
                   work_.file("b.npy") + " --output-dir " + work_.file("out") + common_);
  ASSERT_EQ(r.code, 0) << r.out;
  // relu(a + b) * 2, worked out by hand.
  EXPECT_EQ(read_floats(work_.file("out/out_0.npy")), (std::vector<float>{3, 0, 0, 0, 10, 2}));
  auto shape = tool::read_npy(work_.file("out/out_0.npy"))->shape;
  EXPECT_EQ(shape, (std::vector<int32_t>{2, 3}));
}

TEST_F(CliTest, GeneratedInputsAreWrittenAndDeterministic) {
  Result r = baton("run " + work_.file("tiny.tflite") + " --seed 7 --output-dir " + work_.file("g1") + common_);
  ASSERT_EQ(r.code, 0) << r.out;
  std::vector<float> a = read_floats(work_.file("g1/in_0.npy")), b = read_floats(work_.file("g1/in_1.npy"));
  std::vector<float> out = read_floats(work_.file("g1/out_0.npy"));
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(out.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_GE(a[i], -1.0f);
    EXPECT_LT(a[i], 1.0f);
    EXPECT_EQ(out[i], 2 * std::max(0.0f, a[i] + b[i]));
  }
  EXPECT_NE(a, b);  // one stream per input
  r = baton("run " + work_.file("tiny.tflite") + " --seed 7 --output-dir " + work_.file("g2") + common_);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_floats(work_.file("g2/in_0.npy")), a);
}

TEST_F(CliTest, GeneratedInputsMatchTheReferenceRunnersStream) {
  // The reference runner wrote its seed-0 inputs with the test data: stream 0 starts every model's
  // in_0.npy, stream 1 every in_1.npy. Ours must start with the same numbers.
  Result r = baton("run " + work_.file("tiny.tflite") + " --seed 0 --output-dir " + work_.file("s0") + common_);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string ref = std::string(BATON_SOURCE_ROOT) + "/tests/data/reference/model_1/";
  for (int i = 0; i < 2; ++i) {
    std::vector<float> ours = read_floats(work_.file("s0/in_" + std::to_string(i) + ".npy"));
    std::vector<float> theirs = read_floats(ref + "in_" + std::to_string(i) + ".npy");
    ASSERT_EQ(ours.size(), 6u);
    ASSERT_GE(theirs.size(), 6u);
    EXPECT_EQ(ours, std::vector<float>(theirs.begin(), theirs.begin() + 6)) << "stream " << i;
  }
}

// --int-range LO:HI draws integer inputs as the reference runner's --int-range does: the token ids
// tflite-peer fed the committed BERT-style case (seed 0, ids 0..49) come out of `baton run` byte for
// byte. Without it the ids span int32 and the model's GATHER refuses them; a malformed range is a usage
// error that says what it wants.
TEST_F(CliTest, IntRangeDrawsIntegerInputsAsTheReferenceRunnerDoes) {
  const std::string dir = std::string(BATON_SOURCE_ROOT) + "/tests/data/transformer/transformer_bert/";
  const std::string cfg = " --config " + work_.file("empty.conf");
  Result r = baton("run " + dir + "model.tflite --int-range 0:49 --output-dir " + work_.file("ids") + cfg);
  ASSERT_EQ(r.code, 0) << r.out;
  auto ours = tool::read_npy(work_.file("ids/in_0.npy"));
  auto theirs = tool::read_npy(dir + "in_0.npy");
  ASSERT_TRUE(ours && theirs);
  EXPECT_EQ(ours->type, BATON_TYPE_INT32);
  EXPECT_EQ(ours->data, theirs->data);
  r = baton("run " + dir + "model.tflite --output-dir " + work_.file("wide") + cfg);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("GATHER"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("out of range"), std::string::npos) << r.out;
  r = baton("bench " + dir + "model.tflite --runs 2 --warmup 0 --int-range 0:49" + cfg);
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* bad : {"5:2", "3", "a:b", "1:", ":4"}) {
    for (const char* cmd : {"run ", "bench "}) {
      r = baton(std::string(cmd) + dir + "model.tflite --int-range " + bad + cfg);
      EXPECT_EQ(r.code, 2) << cmd << bad << ": " << r.out;
      EXPECT_NE(r.out.find("--int-range wants LO:HI with LO <= HI, got '" + std::string(bad) + "'"), std::string::npos)
          << r.out;
    }
  }
}

// A complex64 tensor crosses `baton run` as NumPy's '<c8' both ways: x (complex64 [2, 3]) comes back
// through RESHAPE byte for byte and through COMPLEX_ABS as |x| (the builtin pack runs both); a generated
// complex input takes its real and imaginary parts from the float stream.
TEST_F(CliTest, RunReadsAndWritesComplex64Npy) {
  TinyModel m;
  const int32_t target[] = {3, 2};
  std::vector<uint8_t> shape(sizeof target);
  std::memcpy(shape.data(), target, sizeof target);
  m.tensors = {{{2, 3}, 8, {}, "x"}, {{2}, 2, shape, "shape"}, {{3, 2}, 8, {}, "moved"}, {{2, 3}, 0, {}, "magnitude"}};
  m.ops = {{22, "", 1, {0, 1}, {2}}, {135, "", 1, {0}, {3}}};
  m.inputs = {0};
  m.outputs = {2, 3};
  const std::vector<uint8_t> bytes = m.build();
  const std::string model = work_.file("complex.tflite");
  std::ofstream(model, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());

  const std::vector<float> parts = {3, 4, -1, 0, 0.5f, -2, 6, 8, -5, 12, 0, 0};
  tool::NpyArray x;
  x.type = BATON_TYPE_COMPLEX64;
  x.shape = {2, 3};
  x.data.resize(parts.size() * 4);
  std::memcpy(x.data.data(), parts.data(), x.data.size());
  ASSERT_TRUE(tool::write_npy(work_.file("x.npy"), x));
  std::ifstream written(work_.file("x.npy"), std::ios::binary);
  const std::string head((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  EXPECT_NE(head.find("'descr': '<c8'"), std::string::npos) << head.substr(0, 64);

  Result r = baton("run " + model + " --input " + work_.file("x.npy") + " --output-dir " + work_.file("c") + common_);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("COMPLEX64"), std::string::npos) << r.out;
  auto moved = tool::read_npy(work_.file("c/out_0.npy"));
  ASSERT_TRUE(moved) << moved.error();
  EXPECT_EQ(moved->type, BATON_TYPE_COMPLEX64);
  EXPECT_EQ(moved->shape, (std::vector<int32_t>{3, 2}));
  EXPECT_TRUE(moved->data == x.data);
  EXPECT_EQ(read_floats(work_.file("c/out_1.npy")), (std::vector<float>{5, 1, std::hypot(0.5f, -2.0f), 10, 13, 0}));

  r = baton("run " + model + " --seed 3 --output-dir " + work_.file("g") + common_);
  ASSERT_EQ(r.code, 0) << r.out;
  auto generated = tool::read_npy(work_.file("g/in_0.npy"));
  auto out = tool::read_npy(work_.file("g/out_0.npy"));
  ASSERT_TRUE(generated && out);
  EXPECT_EQ(generated->type, BATON_TYPE_COMPLEX64);
  EXPECT_EQ(generated->data.size(), 48u);
  EXPECT_TRUE(out->data == generated->data);
  std::vector<float> g(12);
  std::memcpy(g.data(), generated->data.data(), 48);
  EXPECT_NE(g[0], g[1]);  // real and imaginary parts are different draws
  for (float v : g) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
}

TEST_F(CliTest, WrongDtypeOrShapeNamesTheInput) {
  tool::NpyArray ints;
  ints.type = BATON_TYPE_INT32;
  ints.shape = {2, 3};
  ints.data.resize(24);
  ASSERT_TRUE(tool::write_npy(work_.file("ints.npy"), ints));
  write_floats("b.npy", {2, 3}, {0, 0, 0, 0, 0, 0});
  Result r = baton("run " + work_.file("tiny.tflite") + " --input " + work_.file("ints.npy") + " --input " +
                   work_.file("b.npy") + common_);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("input 0 (a) is FLOAT32 but " + work_.file("ints.npy") + " holds INT32"), std::string::npos)
      << r.out;

  write_floats("rank3.npy", {1, 2, 3}, {0, 0, 0, 0, 0, 0});
  r = baton("run " + work_.file("tiny.tflite") + " --input " + work_.file("b.npy") + " --input " +
            work_.file("rank3.npy") + common_);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("input 1 (b) has shape [2,3]"), std::string::npos) << r.out;

  r = baton("run " + work_.file("tiny.tflite") + " --input " + work_.file("b.npy") + common_);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("the model has 2 input(s) but 1 --input file(s) were given"), std::string::npos) << r.out;
}

TEST_F(CliTest, ExitCodes) {
  EXPECT_EQ(baton("--help").code, 0);
  EXPECT_EQ(baton("run --help").code, 0);
  EXPECT_EQ(baton("frobnicate").code, 2);
  EXPECT_EQ(baton("run --no-such-option x").code, 2);
  EXPECT_EQ(baton("inspect").code, 2);
  Result missing = baton("inspect /nonexistent/model.tflite");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.out.find("/nonexistent/model.tflite: cannot open"), std::string::npos) << missing.out;
  work_.write("garbage.tflite", "not a model at all, just text");
  Result garbage = baton("run " + work_.file("garbage.tflite") + common_);
  EXPECT_EQ(garbage.code, 1);
  EXPECT_NE(garbage.out.find("not a TFLite model"), std::string::npos) << garbage.out;
  // Two files after one --input: a usage error that says each file needs its option.
  Result two = baton("run " + work_.file("tiny.tflite") + " --input a.npy b.npy" + common_);
  EXPECT_EQ(two.code, 2);
  EXPECT_NE(two.out.find("each further file needs its option, e.g. --input a.npy --input b.npy"), std::string::npos)
      << two.out;
}

TEST_F(CliTest, ConfigErrorIsAUsageErrorNamingFileLineAndKey) {
  work_.write("bad.conf", "delegates = xnnpack\nthreads = lots\n");
  Result r = baton("plugins --config " + work_.file("bad.conf"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(work_.file("bad.conf") + ":2: bad value 'lots' for key 'threads'"), std::string::npos) << r.out;
}

TEST_F(CliTest, InspectShowsOpsIoAndMetadata) {
  Result r = baton("inspect " + work_.file("tiny.tflite"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("0: a FLOAT32 [2,3] (tensor 0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TimesTwo"), std::string::npos) << r.out;
  r = baton("inspect --json " + work_.file("tiny.tflite"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\"ops\":[{\"op\":\"ADD\",\"version\":1,\"count\":1},{\"op\":\"TimesTwo\",\"version\":1,\"count\":1}]"),
            std::string::npos)
      << r.out;
}

TEST_F(CliTest, InspectShowsQuantization) {
  // A uint8 input (scale 1/128, zero point 128) reshaped by the builtin pack, and per-channel int8 weights
  // that only count in the summary.
  TinyModel m;
  TinyTensor in{{1, 2, 2, 3}, 3, {}, "image"};
  in.scales = {0.0078125f};
  in.zero_points = {128};
  TinyTensor weights{{2, 1}, 9, {1, 2}, "weights"};
  weights.scales = {0.5f, 0.25f};
  weights.zero_points = {0, 0};
  TinyTensor out = in;
  out.name = "flat";
  out.shape = {12};
  m.tensors = {in, {{1}, 2, {12, 0, 0, 0}, "shape"}, out, weights};
  m.ops = {{22, "", 1, {0, 1}, {2}}};
  m.inputs = {0};
  m.outputs = {2};
  const std::vector<uint8_t> bytes = m.build();
  const std::string model = work_.file("quant.tflite");
  std::ofstream(model, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  Result r = baton("inspect " + model);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("0: image UINT8 [1,2,2,3] (tensor 0), scale 0.0078125 zero point 128"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("quantized tensors: 3 (1 per-channel)"), std::string::npos) << r.out;
  r = baton("inspect --json " + model);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\"quantization\":{\"scales\":[0.0078125],\"zero_points\":[128],\"quantized_dimension\":0}"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"quantized_tensors\":3,\"per_channel_tensors\":1"), std::string::npos) << r.out;
}

// Blockwise INT4 weights count as quantized tensors, and say so.
TEST_F(CliTest, InspectCountsBlockwiseQuantization) {
  const std::string model =
      std::string(BATON_SOURCE_ROOT) + "/tests/data/op-cases/fully_connected_blockwise_int4_f16_scales/model.tflite";
  Result r = baton("inspect " + model);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("quantized tensors: 1 (0 per-channel, 1 blockwise)"), std::string::npos) << r.out;
  r = baton("inspect --json " + model);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\"quantized_tensors\":1,\"per_channel_tensors\":0,\"blockwise_tensors\":1"), std::string::npos)
      << r.out;
}

TEST_F(CliTest, PluginsListsLoadedAndSkipped) {
  plugins_.write("broken.so", "not elf");
  Result r = baton("plugins --json" + common_);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\"name\":\"testpack\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{\"op\":\"ADD\",\"custom\":false,\"min_version\":1,\"max_version\":2}"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"reason\":\"not a shared object (no ELF header)\""), std::string::npos) << r.out;
}

TEST_F(CliTest, PlanShowsPlacementRefusalsAndPartitions) {
  plugins_.add_plugin("deleg_a");
  work_.write("deleg.conf", "delegates = deleg-a\n[plugin.deleg-a]\nops = ADD\n");
  const std::string args = work_.file("tiny.tflite") + " --plugin-dir " + plugins_.path() + " --config " +
                           work_.file("deleg.conf");
  Result r = baton("plan " + args);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("deleg-a: 1 of 2 nodes in 1 partition; testpack: 1 node"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("deleg-a refused: [r1]\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refusals:\n  [r1] deleg-a refused: not in this delegate's ops option\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("boundary bytes: 72"), std::string::npos) << r.out;  // a, b in; c out: 3 x 24 bytes

  r = baton("plan --format json " + args);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("{\"index\":0,\"op\":\"ADD\",\"version\":1,\"placement\":{\"kind\":\"delegate\","
                       "\"plugin\":\"deleg-a\",\"partition\":0},\"refusals\":[]}"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"placement\":{\"kind\":\"op-pack\",\"plugin\":\"testpack\",\"partition\":null},"
                       "\"refusals\":[{\"plugin\":\"deleg-a\",\"reason\":\"not in this delegate's ops option\"}]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"partitions\":[{\"id\":0,\"plugin\":\"deleg-a\",\"nodes\":[0],\"inputs\":[0,1],"
                       "\"outputs\":[2]"),
            std::string::npos)
      << r.out;

  r = baton("plan --format dot " + args);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("subgraph cluster_p0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("n0 -> n1;"), std::string::npos) << r.out;

  r = baton("plan --format svg " + args);
  if (std::system("command -v dot >/dev/null 2>&1") == 0) {
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("<svg"), std::string::npos);
  } else {
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("needs Graphviz's `dot`, which is not installed"), std::string::npos) << r.out;
  }
  EXPECT_EQ(baton("plan --format png " + args).code, 2);

  r = baton("run --strict " + args);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("strict mode: 1 node(s) would fall back to op packs"), std::string::npos) << r.out;
  r = baton("run " + args);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: deleg-a: 1 of 2 nodes in 1 partition; testpack: 1 node"), std::string::npos) << r.out;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The text plan gives each distinct (plugin, reason) once, under "refusals:", and a node names it by tag:
// a delegate's reason repeated under hundreds of nodes buried the plan. The JSON keeps it per node.
TEST_F(CliTest, PlanTextGivesEachRefusalOnceAndNodesNameItsTag) {
  // ADD, then three TimesTwo: deleg-a takes the ADD only, deleg-b refuses everything it is asked.
  TinyModel m = add_then_double();
  m.tensors.push_back({{2, 3}, 0, {}, "e"});
  m.tensors.push_back({{2, 3}, 0, {}, "f"});
  m.ops.push_back({32, "TimesTwo", 1, {3}, {4}});
  m.ops.push_back({32, "TimesTwo", 1, {4}, {5}});
  m.outputs = {5};
  const std::vector<uint8_t> bytes = m.build();
  const std::string model = work_.file("doubles.tflite");
  std::ofstream(model, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  plugins_.add_plugin("deleg_a");
  plugins_.add_plugin("deleg_b");
  const std::string long_reason =
      "this test delegate refuses every node it is offered, with a reason long enough to matter";
  work_.write("two.conf", "delegates = deleg-a, deleg-b\n[plugin.deleg-a]\nops = ADD\n[plugin.deleg-b]\nrefuse-all = " +
                              long_reason + "\n");
  const std::string args = model + " --plugin-dir " + plugins_.path() + " --config " + work_.file("two.conf");

  Result r = baton("plan " + args);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("deleg-a: 1 of 4 nodes in 1 partition; testpack: 3 nodes"), std::string::npos) << r.out;
  EXPECT_EQ(count_of(r.out, "not in this delegate's ops option"), 1u) << r.out;
  EXPECT_EQ(count_of(r.out, long_reason), 1u) << r.out;
  EXPECT_NE(r.out.find("\nrefusals:\n  [r1] deleg-a refused: not in this delegate's ops option\n"
                       "  [r2] deleg-b refused: " + long_reason + "\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(count_of(r.out, "deleg-a refused: [r1]\n"), 3u) << r.out;
  EXPECT_EQ(count_of(r.out, "deleg-b refused: [r2]\n"), 3u) << r.out;
  EXPECT_NE(r.out.find("TimesTwo v1                  testpack (op pack)\n         deleg-a refused: [r1]\n"
                       "         deleg-b refused: [r2]\n"),
            std::string::npos)
      << r.out;

  r = baton("plan --format json " + args);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count_of(r.out, "\"refusals\":[{\"plugin\":\"deleg-a\",\"reason\":\"not in this delegate's ops option\"},"
                            "{\"plugin\":\"deleg-b\",\"reason\":\"" + long_reason + "\"}]"),
            3u)
      << r.out;
  EXPECT_EQ(r.out.find("[r1]"), std::string::npos) << r.out;
}

// An --input of another shape than the model's input resizes it, and says so once per input on stderr;
// --strict-shapes refuses it as a wrong input file (exit 1), naming the input and both shapes.
TEST_F(CliTest, RunSaysWhenAnInputIsResizedAndStrictShapesRefuses) {
  write_floats("a43.npy", {4, 3}, {1, -2, 3, -4, 5, -6, 7, 8, -9, 0, 1, 2});
  write_floats("b43.npy", {4, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  const std::string both = " --input " + work_.file("a43.npy") + " --input " + work_.file("b43.npy");
  Result r = baton("run " + work_.file("tiny.tflite") + both + " --runs 2 --output-dir " + work_.file("r43") + common_);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* name : {"0 (a)", "1 (b)"}) {
    const char letter = name[3];
    const std::string notice = std::string("baton: input ") + name +
                               ": resized from [2,3] (the model's) to [4,3] (the shape of " +
                               work_.file(std::string(1, letter) + "43.npy") + ")";
    EXPECT_EQ(count_of(r.out, notice), 1u) << notice << " in\n" << r.out;
  }
  // relu(a + b) * 2 on the resized inputs.
  EXPECT_EQ(read_floats(work_.file("r43/out_0.npy")), (std::vector<float>{4, 0, 8, 0, 12, 0, 16, 18, 0, 2, 4, 6}));

  r = baton("run " + work_.file("tiny.tflite") + both + " --strict-shapes" + common_);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("baton: error: input 0 (a) has shape [2,3] but " + work_.file("a43.npy") +
                       " holds [4,3] (--strict-shapes: an input is not resized)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("resized from"), std::string::npos) << r.out;
  EXPECT_NE(baton("run --help").out.find("--strict-shapes"), std::string::npos);

  // Inputs of the model's own shape: no notice, with or without --strict-shapes.
  write_floats("a.npy", {2, 3}, {1, -2, 3, -4, 5, -6});
  write_floats("b.npy", {2, 3}, {0.5f, 1, -4, 3, 0, 7});
  const std::string same = " --input " + work_.file("a.npy") + " --input " + work_.file("b.npy");
  for (const char* strict : {"", " --strict-shapes"}) {
    r = baton("run " + work_.file("tiny.tflite") + same + strict + common_);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(r.out.find("resized from"), std::string::npos) << r.out;
  }
}

TEST_F(CliTest, BenchReportsLatencyMemoryAndProfile) {
  // --no-delegates: delegates built in the build tree (xnnpack) would otherwise join the chain and take the ADD.
  Result r = baton("bench " + work_.file("tiny.tflite") + " --runs 7 --warmup 1 --threads 1 --profile --json --no-delegates" +
                   common_);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* field : {"\"load_ms\":", "\"first_run_ms\":", "\"latency_ms\":{\"min\":", "\"median\":",
                            "\"mean\":", "\"p90\":", "\"runs\":7", "\"threads\":1", "\"arena_bytes\":",
                            "\"peak_rss_bytes\":", "\"plan\":\"testpack: 2 nodes\"",
                            "{\"op\":\"TimesTwo\",\"plugin\":\"testpack\""}) {
    EXPECT_NE(r.out.find(field), std::string::npos) << field << " missing in " << r.out;
  }
  r = baton("bench " + work_.file("tiny.tflite") + " --runs 3 --profile" + common_);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("latency ms: min"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per op type"), std::string::npos) << r.out;
  EXPECT_EQ(baton("bench " + work_.file("tiny.tflite") + " --runs 0" + common_).code, 2);
}

// --image prepares a photo exactly as the committed reference inputs were prepared (tools/image-to-npy.mjs).
TEST_F(CliTest, ImageInputMatchesTheReferencePreparation) {
  const char* cache = std::getenv("BATON_MODEL_CACHE");
  const std::string png = std::string(cache ? cache : "") + "/images/astronaut.png";
  if (!std::ifstream(png)) {
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << png << " (run tools/fetch-images.sh)";
    GTEST_SKIP() << "no " << png;
  }
  struct Case {
    int size;
    const char* range;
    const char* reference;
  };
  for (const Case& c : {Case{128, "-1:1", "face_detection_short_range-astronaut"},
                        Case{256, "0:1", "pose_landmark_lite-astronaut"}}) {
    TinyModel m;
    m.tensors = {{{1, c.size, c.size, 3}, 0, {}, "image"}, {{1, c.size, c.size, 3}, 0, {}, "doubled"}};
    m.ops = {{32, "TimesTwo", 1, {0}, {1}}};
    m.inputs = {0};
    m.outputs = {1};
    const std::vector<uint8_t> bytes = m.build();
    const std::string model = work_.file("image" + std::to_string(c.size) + ".tflite");
    std::ofstream(model, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    const std::string out = work_.file("img" + std::to_string(c.size));
    Result r = baton("run " + model + " --image " + png + " --image-range " + c.range + " --output-dir " + out + common_);
    ASSERT_EQ(r.code, 0) << r.out;
    std::vector<float> ours = read_floats(out + "/in_0.npy");
    std::vector<float> ref = read_floats(std::string(BATON_SOURCE_ROOT) + "/tests/data/reference/" + c.reference + "/in_0.npy");
    ASSERT_EQ(ours.size(), ref.size());
    float worst = 0;
    for (size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, std::abs(ours[i] - ref[i]));
    EXPECT_LT(worst, 1e-5f) << c.reference;
  }
  // A uint8 input (quantized models take pixel codes) gets the resized values rounded half up, byte for
  // byte what tools/image-to-npy.mjs --dtype uint8 made for the SSD reference; the builtin pack's RESHAPE
  // runs the model.
  {
    TinyModel m;
    const int32_t flat = 300 * 300 * 3;
    std::vector<uint8_t> shape(4);
    std::memcpy(shape.data(), &flat, 4);
    m.tensors = {{{1, 300, 300, 3}, 3, {}, "image"}, {{1}, 2, shape, "shape"}, {{flat}, 3, {}, "flat"}};
    m.ops = {{22, "", 1, {0, 1}, {2}}};
    m.inputs = {0};
    m.outputs = {2};
    const std::vector<uint8_t> bytes = m.build();
    const std::string model = work_.file("image_u8.tflite");
    std::ofstream(model, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    const std::string out = work_.file("img_u8");
    Result r = baton("run " + model + " --image " + png + " --output-dir " + out + common_);
    ASSERT_EQ(r.code, 0) << r.out;
    auto ours = tool::read_npy(out + "/in_0.npy");
    auto ref = tool::read_npy(std::string(BATON_SOURCE_ROOT) +
                              "/tests/data/reference/mobilenet_ssd_v2_coco_quant_postprocess-astronaut/in_0.npy");
    ASSERT_TRUE(ours && ref);
    EXPECT_EQ(ours->type, BATON_TYPE_UINT8);
    EXPECT_EQ(ours->shape, ref->shape);
    EXPECT_TRUE(ours->data == ref->data) << "the uint8 photo differs from the reference input";
  }
  Result r = baton("run " + work_.file("tiny.tflite") + " --image " + png + common_);
  EXPECT_EQ(r.code, 2) << r.out;  // two inputs
  EXPECT_EQ(baton("run " + work_.file("image128.tflite") + " --image " + png + " --image-range 1:1" + common_).code, 2);
}

TEST_F(CliTest, PluginsShowWhichPackWinsForContestedOps) {
  plugins_.add_plugin("otherpack", "z_otherpack.so");
  Result r = baton("plugins" + common_);
  ASSERT_EQ(r.code, 0) << r.out;
  // The build tree's builtin pack loads too (it comes after the --plugin-dir folder), with ADD v1-6.
  EXPECT_NE(r.out.find("ADD v1-2: testpack (shadows otherpack, builtin)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ADD v3-6: builtin\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TimesTwo v1: testpack (shadows otherpack)"), std::string::npos) << r.out;
  work_.write("prec.conf", "op-pack-precedence = otherpack\n");
  r = baton("plugins --json --plugin-dir " + plugins_.path() + " --config " + work_.file("prec.conf"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("{\"op\":\"ADD\",\"min_version\":1,\"max_version\":2,\"plugin\":\"otherpack\","
                       "\"shadowed\":[\"testpack\",\"builtin\"]}"),
            std::string::npos)
      << r.out;
}

TEST_F(CliTest, ResourceLimitsFromTheCommandLineAndTheConfig) {
  Result r = baton("run " + work_.file("tiny.tflite") + " --max-arena-bytes 100" + common_);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("the arena needs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("over the limit of 100"), std::string::npos) << r.out;
  r = baton("run " + work_.file("tiny.tflite") + " --max-model-bytes 64" + common_);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("over the limit of 64"), std::string::npos) << r.out;
  EXPECT_EQ(baton("run " + work_.file("tiny.tflite") + " --max-tensor-bytes lots" + common_).code, 2);
  work_.write("limits.conf", "max-tensor-bytes = 16\n");
  r = baton("run " + work_.file("tiny.tflite") + " --plugin-dir " + plugins_.path() + " --config " +
            work_.file("limits.conf"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("24 bytes, over the tensor limit of 16"), std::string::npos) << r.out;
  work_.write("badlimit.conf", "max-arena-bytes = lots\n");
  r = baton("plugins --config " + work_.file("badlimit.conf"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(":1: bad value 'lots' for key 'max-arena-bytes'"), std::string::npos) << r.out;
  // none (or 0) turns a limit off, in the config and on the command line: the command line's wins.
  work_.write("nolimit.conf", "max-tensor-bytes = none\nmax-arena-bytes = 0\n");
  r = baton("run " + work_.file("tiny.tflite") + " --plugin-dir " + plugins_.path() + " --config " +
            work_.file("nolimit.conf"));
  EXPECT_EQ(r.code, 0) << r.out;
  r = baton("run " + work_.file("tiny.tflite") + " --max-tensor-bytes none --max-arena-bytes 0 --config " +
            work_.file("limits.conf") + " --plugin-dir " + plugins_.path());
  EXPECT_EQ(r.code, 0) << r.out;
}

}  // namespace
}  // namespace baton::test
