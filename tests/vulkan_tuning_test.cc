// The vulkan delegate's workgroup tuning (plugins/vulkan/tuning.h) on the test device: shapes timed
// with `tune = true` give the rule's results bit for bit, are kept in a table per device and driver in
// the cache folder, and the next start reads them instead of timing; any shape the table names gives
// the same results; a damaged table is said and timed again; a CPU implementation does not tune unless
// asked.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"
#include "vulkan_support.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;

// A 3x3 convolution to 12 channels, then a stride-2 depthwise convolution: two dispatches whose
// workgroups may take any shape, over odd extents.
std::vector<uint8_t> conv_depthwise_model() {
  OpGraph g;
  const int32_t in = g.input({1, 37, 45, 3});
  const int32_t f = random_weights(g, {12, 3, 3, 3}, 1);
  const int32_t b = random_weights(g, {12}, 2);
  const int32_t mid = g.add({1, 37, 45, 12});
  g.op(BATON_OP_CONV_2D, {in, f, b}, {mid}, conv_options(fb::Padding_SAME, 1, 1, 1));
  const int32_t df = random_weights(g, {1, 3, 3, 12}, 3);
  const int32_t db = random_weights(g, {12}, 4);
  const int32_t out = g.output({1, 19, 23, 12});
  g.op(BATON_OP_DEPTHWISE_CONV_2D, {mid, df, db}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                          fb::CreateDepthwiseConv2DOptions(fbb, fb::Padding_SAME, 2, 2, 1, act(0)).Union());
  });
  return g.build();
}

struct ModelRun {
  std::string log;
  std::vector<uint8_t> output;
  int tuned = -1, timed = -1;  // "N dispatches tuned (M shapes timed"
  int from_table = -1;         // "N from the tuning table"
};

// One fresh environment with `options`; the model run once on vulkan alone.
ModelRun run_model(const std::string& options) {
  ModelRun r;
  auto env = vulkan_env("vulkan", options);
  if (!env) return r;
  auto model = load_model_buffer(conv_depthwise_model(), "tuning.tflite");
  auto vi = Interpreter::create(env->env, model.value());
  EXPECT_TRUE(vi) << vi.error();
  if (!vi) return r;
  Interpreter& v = *vi.value();
  const auto data = random_floats(v.input(0).bytes / 4, 5);
  std::memcpy(v.input(0).data, data.data(), data.size());
  const Status s = v.invoke();
  EXPECT_TRUE(s) << s.message();
  EXPECT_EQ(fallbacks_text(v), "");
  EXPECT_EQ(env->validation_messages(), "");
  const auto* out = static_cast<const uint8_t*>(v.output(0).data);
  r.output.assign(out, out + v.output(0).bytes);
  r.log = env->log_text();
  if (const size_t at = r.log.find("workgroups: "); at != std::string::npos) {
    const char* p = r.log.c_str() + at + std::strlen("workgroups: ");
    int a = 0, b = 0;
    if (std::sscanf(p, "%d dispatches tuned (%d shapes timed", &a, &b) == 2) {
      r.tuned = a;
      r.timed = b;
    }
    if (const size_t t = r.log.find(" from the tuning table", at); t != std::string::npos) {
      size_t begin = r.log.rfind(' ', t - 1);
      r.from_table = std::atoi(r.log.c_str() + begin + 1);
    }
  }
  return r;
}

std::vector<fs::path> tuning_files(const std::string& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".tuning") found.push_back(e.path());
  }
  return found;
}

// A cache entry as shader_cache.h writes it: magic, u32 key size, key, u32 count, payload (little-endian).
struct Entry {
  std::string magic, key, payload;
};

uint32_t get_u32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + static_cast<size_t>(i)]);
  return v;
}

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

Entry read_entry(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Entry e;
  if (bytes.size() < 16) return e;
  e.magic = bytes.substr(0, 8);
  const uint32_t key_size = get_u32(bytes, 8);
  e.key = bytes.substr(12, key_size);
  e.payload = bytes.substr(16 + key_size);
  EXPECT_EQ(get_u32(bytes, 12 + key_size), e.payload.size());
  return e;
}

void write_entry(const fs::path& p, const Entry& e) {
  std::string bytes = e.magic;
  put_u32(bytes, static_cast<uint32_t>(e.key.size()));
  bytes += e.key;
  put_u32(bytes, static_cast<uint32_t>(e.payload.size()));
  bytes += e.payload;
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    lines.push_back(text.substr(at, end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return lines;
}

TEST(VulkanTuning, TimedShapesGiveTheRulesResultsAndTheSecondStartTimesNothing) {
  const ModelRun rule = run_model("tune = false\n");
  ASSERT_FALSE(rule.output.empty());
  EXPECT_EQ(rule.log.find("workgroups: "), std::string::npos) << rule.log;

  TempDir cache;
  const std::string options = "cache-dir = " + cache.path() + "\ntune = true\n";
  const ModelRun first = run_model(options);
  EXPECT_NE(first.log.find("workgroups tuned (0 in the table)"), std::string::npos) << first.log;
  // The convolution and the depthwise convolution at least (the partition's copies in and out are not
  // tuned); more than one shape timed for each.
  EXPECT_GE(first.tuned, 2) << first.log;
  EXPECT_GT(first.timed, first.tuned) << first.log;
  EXPECT_EQ(first.from_table, -1) << first.log;
  EXPECT_EQ(first.output, rule.output);

  const std::vector<fs::path> files = tuning_files(cache.path());
  ASSERT_EQ(files.size(), 1u);
  const Entry table = read_entry(files[0]);
  EXPECT_EQ(table.magic, "BATONWGT");
  EXPECT_EQ(table.key.rfind("baton vulkan workgroup tuning 1\n", 0), 0u);
  const std::vector<std::string> lines = lines_of(table.payload);
  EXPECT_EQ(lines.size(), static_cast<size_t>(first.tuned)) << table.payload;
  bool conv = false, depthwise = false;
  for (const std::string& line : lines) {
    unsigned x = 0, y = 0, z = 0;
    EXPECT_EQ(std::sscanf(line.c_str(), "%u %u %u\t", &x, &y, &z), 3) << line;
    EXPECT_LE(x * y * z, 256u) << line;
    conv = conv || line.find("\tconv2d ") != std::string::npos;
    depthwise = depthwise || line.find("\tdepthwise_conv2d ") != std::string::npos;
  }
  EXPECT_TRUE(conv && depthwise) << table.payload;

  const ModelRun second = run_model(options);
  EXPECT_NE(second.log.find("workgroups tuned (" + std::to_string(first.tuned) + " in the table)"), std::string::npos)
      << second.log;
  EXPECT_EQ(second.tuned, -1) << second.log;
  EXPECT_EQ(second.from_table, first.tuned) << second.log;
  EXPECT_EQ(second.output, rule.output);
}

// The table decides the shapes, whatever they are: workgroups wider than the extents and lopsided ones
// give the same results as the rule's.
TEST(VulkanTuning, AnyShapeTheTableNamesGivesTheSameResults) {
  const ModelRun rule = run_model("tune = false\n");
  TempDir cache;
  const std::string options = "cache-dir = " + cache.path() + "\ntune = true\n";
  const ModelRun first = run_model(options);
  ASSERT_GE(first.tuned, 2) << first.log;
  const std::vector<fs::path> files = tuning_files(cache.path());
  ASSERT_EQ(files.size(), 1u);
  for (const char* shape : {"1 1 1", "256 1 1", "1 256 1", "2 8 4", "1 1 64"}) {
    Entry table = read_entry(files[0]);
    std::string payload;
    for (const std::string& line : lines_of(table.payload)) payload += shape + line.substr(line.find('\t')) + "\n";
    table.payload = payload;
    write_entry(files[0], table);
    const ModelRun forced = run_model("cache-dir = " + cache.path() + "\ntune = false\n");
    EXPECT_EQ(forced.from_table, first.tuned) << shape << "\n" << forced.log;
    EXPECT_EQ(forced.output, rule.output) << shape;
  }
}

TEST(VulkanTuning, ADamagedTableIsSaidAndTimedAgain) {
  TempDir cache;
  const std::string options = "cache-dir = " + cache.path() + "\ntune = true\n";
  const ModelRun first = run_model(options);
  ASSERT_GE(first.tuned, 2) << first.log;
  const fs::path file = tuning_files(cache.path()).at(0);

  // One bad line: named with the file, ignored, its dispatch timed again; the table is written again whole.
  Entry table = read_entry(file);
  std::vector<std::string> lines = lines_of(table.payload);
  lines[0] = "seven 1\t" + lines[0].substr(lines[0].find('\t') + 1);
  table.payload.clear();
  for (const std::string& l : lines) table.payload += l + "\n";
  write_entry(file, table);
  const ModelRun second = run_model(options);
  EXPECT_NE(second.log.find("workgroup tuning: line 1 of " + file.string() + " is not \"LX LY LZ<tab>dispatch\""),
            std::string::npos)
      << second.log;
  EXPECT_EQ(second.tuned, 1) << second.log;
  EXPECT_EQ(second.from_table, first.tuned - 1) << second.log;
  EXPECT_EQ(lines_of(read_entry(file).payload).size(), static_cast<size_t>(first.tuned));
  EXPECT_EQ(run_model(options).from_table, first.tuned);

  // A file that is not a table at all reads as none: everything is timed again and the file rewritten.
  std::ofstream(file, std::ios::binary | std::ios::trunc) << "BATONWGT garbage";
  const ModelRun third = run_model(options);
  EXPECT_EQ(third.tuned, first.tuned) << third.log;
  EXPECT_EQ(read_entry(file).magic, "BATONWGT");
  EXPECT_EQ(run_model(options).from_table, first.tuned);
}

// Unset, the option is off on a CPU implementation (lavapipe, where timing costs more than it wins) and
// on a GPU; the test device is lavapipe on machines without a GPU.
TEST(VulkanTuning, OffUnlessAskedOnACpuImplementation) {
  TempDir cache;
  const ModelRun r = run_model("cache-dir = " + cache.path() + "\n");
  if (r.log.find("a CPU implementation") == std::string::npos) GTEST_SKIP() << "the test device is a GPU";
  EXPECT_EQ(r.log.find("workgroups"), std::string::npos) << r.log;
  EXPECT_TRUE(tuning_files(cache.path()).empty());
}

}  // namespace
}  // namespace baton::test
