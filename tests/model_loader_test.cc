// Model loading: good models read back as written; every malformed model is rejected with a message
// that says what is wrong, and nothing crashes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>

#include "model.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

Expected<std::shared_ptr<const Model>> load(const std::vector<uint8_t>& bytes) {
  return load_model_buffer(bytes, "tiny.tflite");
}

void expect_rejected(const TinyModel& m, const std::string& fragment) {
  auto model = load(m.build());
  ASSERT_FALSE(model) << "accepted a model that should fail with: " << fragment;
  EXPECT_NE(model.error().find(fragment), std::string::npos) << model.error();
  EXPECT_EQ(model.error().rfind("tiny.tflite: ", 0), 0u) << model.error();
}

TEST(ModelLoader, ReadsTensorsNodesAndMetadata) {
  TinyModel m = add_then_double();
  m.metadata = {{"min_runtime_version", std::string("2.3.0\0\0", 7)}};
  auto model = load(m.build());
  ASSERT_TRUE(model) << model.error();
  const Model& mod = *model.value();
  EXPECT_EQ(mod.description, "tiny test model");
  EXPECT_EQ(mod.min_runtime_version, "2.3.0");
  ASSERT_EQ(mod.subgraphs.size(), 1u);
  const SubgraphInfo& g = mod.main();
  EXPECT_EQ(g.name, "main");
  ASSERT_EQ(g.tensors.size(), 4u);
  EXPECT_EQ(g.tensors[2].name, "c");
  EXPECT_EQ(g.tensors[2].shape, (std::vector<int32_t>{2, 3}));
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op_code, 0);
  EXPECT_EQ(g.nodes[0].options.u.elementwise.activation, 1);
  EXPECT_EQ(g.nodes[1].op_code, 32);
  EXPECT_EQ(g.nodes[1].custom_name, "TimesTwo");
  EXPECT_EQ(g.inputs, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(g.outputs, (std::vector<int32_t>{3}));
}

TEST(ModelLoader, RealOpCodeIsTheLargerOfTheTwoFields) {
  TinyModel m;
  m.tensors = {{{4}, 0, {}, "x"}, {{4}, 0, {}, "y"}};
  // CONV_2D (3) in deprecated_builtin_code only; builtin_code reads 0 (ADD), as old converters wrote it.
  m.ops = {{3, "", 1, {0}, {1}, -1, true}};
  m.inputs = {0};
  m.outputs = {1};
  auto model = load(m.build());
  ASSERT_TRUE(model) << model.error();
  EXPECT_EQ(model.value()->main().nodes[0].op_code, 3);
}

TEST(ModelLoader, ConstantDataPointsIntoTheModel) {
  TinyModel m = add_then_double();
  m.tensors[1].data = floats({1, 2, 3, 4, 5, 6});
  m.inputs = {0};
  auto bytes = m.build();
  auto model = load(bytes);
  ASSERT_TRUE(model) << model.error();
  const TensorInfo& b = model.value()->main().tensors[1];
  ASSERT_TRUE(b.is_constant);
  ASSERT_EQ(b.data.size(), 24u);
  float v[6];
  std::memcpy(v, b.data.data(), sizeof v);
  EXPECT_EQ(v[5], 6.0f);
  EXPECT_EQ(model.value()->constant_bytes, 24u);
}

TEST(ModelLoader, TensorIndexOutOfRange) {
  TinyModel m = add_then_double();
  m.ops[1].inputs = {42};
  expect_rejected(m, "node 1 (TimesTwo) input names tensor 42, out of range (4 tensors)");
}

TEST(ModelLoader, BufferSmallerThanShape) {
  TinyModel m = add_then_double();
  m.tensors[1].data = floats({1, 2, 3});
  m.inputs = {0};
  expect_rejected(m, "tensor 1 \"b\": buffer 1 holds 12 bytes but shape and type need 24");
}

// Blockwise quantization: INT4 codes whose scales are a constant FLOAT16 or FLOAT32 tensor with one scale
// per block of the last dimension (what LiteRT runs). Anything else is refused at load with the tensor and
// the reason, instead of a kernel later finding no scales.
TEST(ModelLoader, BlockwiseQuantizationOutsideWhatLiteRtRunsIsRefused) {
  auto int4_weights = [](std::vector<int32_t> scales_shape, bool constant_scales, int32_t block) {
    TinyModel m = add_then_double();
    m.tensors.push_back({{2, 64}, 17 /* INT4 */, std::vector<uint8_t>(64, 0x21), "w"});
    m.tensors.back().blockwise_scales = 5;
    m.tensors.back().blockwise_block = block;
    const size_t bytes = 4 * static_cast<size_t>(scales_shape[0] * scales_shape[1]);
    m.tensors.push_back({scales_shape, 0, constant_scales ? std::vector<uint8_t>(bytes, 0) : std::vector<uint8_t>{}, "s"});
    return m;
  };
  TinyModel m = add_then_double();
  m.tensors[1].blockwise_scales = 0;
  expect_rejected(m, "tensor 1 \"b\": blockwise quantization (scales in tensor 0, blocks of 32) of a FLOAT32 tensor is "
                     "not supported (LiteRT runs INT4 codes only)");
  expect_rejected(int4_weights({2, 2}, true, 48), "tensor 4 \"w\": blockwise quantization (scales in tensor 5, blocks of 48): "
                                                  "the block size must be positive and divide the last dimension (64)");
  expect_rejected(int4_weights({2, 2}, false, 32), "tensor 4: its block scales, tensor 5, are not a constant");
  expect_rejected(int4_weights({2, 4}, true, 32), "tensor 4: its block scales, tensor 5, have shape [2,4], not [2,2] "
                                                  "(one per block of 32)");
  TinyModel fine = int4_weights({2, 4}, true, 16);
  auto loaded = load(fine.build());
  ASSERT_TRUE(loaded) << loaded.error();
  const Quantization& q = loaded.value()->subgraphs[0].tensors[4].quant;
  EXPECT_EQ(q.block_size, 16);
  EXPECT_EQ(q.block_scale_type, BATON_TYPE_FLOAT32);
  EXPECT_EQ(q.block_scales.size(), 32u);
}

TEST(ModelLoader, ShapeWhoseByteSizeOverflows) {
  TinyModel m = add_then_double();
  m.tensors[2].shape = {1 << 30, 1 << 30, 1 << 30};
  expect_rejected(m, "tensor 2 \"c\": shape has a negative dimension or its byte size overflows");
}

TEST(ModelLoader, LimitsAreCheckedBeforeAllocating) {
  const std::vector<uint8_t> bytes = add_then_double().build();
  LoadLimits small_tensors;
  small_tensors.max_tensor_bytes = 20;  // every tensor here is 2x3 floats = 24 bytes
  auto model = load_model_buffer(bytes, "tiny.tflite", small_tensors);
  ASSERT_FALSE(model);
  EXPECT_NE(model.error().find("tensor 0 \"a\": 24 bytes, over the tensor limit of 20"), std::string::npos)
      << model.error();
  LoadLimits small_file;
  small_file.max_file_bytes = 100;
  model = load_model_buffer(bytes, "tiny.tflite", small_file);
  ASSERT_FALSE(model);
  EXPECT_NE(model.error().find("over the limit of 100"), std::string::npos) << model.error();
  size_t n = 0;
  EXPECT_TRUE(parse_byte_size("512M", &n));
  EXPECT_EQ(n, 512u << 20);
  EXPECT_TRUE(parse_byte_size("3k", &n));
  EXPECT_EQ(n, 3072u);
  EXPECT_FALSE(parse_byte_size("-1", &n));
  EXPECT_FALSE(parse_byte_size("12Q", &n));
  EXPECT_FALSE(parse_byte_size("99999999999999999999G", &n));
}

TEST(ModelLoader, NegativeDimension) {
  TinyModel m = add_then_double();
  m.tensors[2].shape = {2, -3};
  expect_rejected(m, "negative dimension");
}

TEST(ModelLoader, NodeReadingATensorProducedLaterIsACycle) {
  TinyModel m = add_then_double();
  m.ops[0].inputs = {0, 3};  // reads d, which node 1 produces
  expect_rejected(m, "node 0 (ADD) reads tensor 3 which node 1 produces later");
}

TEST(ModelLoader, TensorWrittenTwice) {
  TinyModel m = add_then_double();
  m.ops[1].outputs = {2};
  expect_rejected(m, "node 1 (TimesTwo) writes tensor 2, which node 0 already writes");
}

TEST(ModelLoader, BufferOffsetOutsideTheFile) {
  TinyModel m = add_then_double();
  m.tensors[1].buffer_offset = 1u << 30;
  m.tensors[1].buffer_size = 24;
  m.inputs = {0};
  expect_rejected(m, "buffer 1 points outside the file");
}

TEST(ModelLoader, UnknownBuiltinOp) {
  TinyModel m = add_then_double();
  m.ops[0].code = 126;  // fits the deprecated byte but is no op in the 2.x schema's range we know
  m.ops[0].code = 4000;
  expect_rejected(m, "has unknown builtin op 4000");
}

TEST(ModelLoader, CustomOpWithoutName) {
  TinyModel m = add_then_double();
  m.ops[1].custom = "";
  expect_rejected(m, "is CUSTOM but has no custom name");
}

TEST(ModelLoader, TruncatedAtManyPointsIsRejected) {
  const std::vector<uint8_t> bytes = add_then_double().build();
  for (size_t cut : {size_t(0), size_t(4), size_t(7), size_t(8), size_t(16), bytes.size() / 3, bytes.size() / 2,
                     bytes.size() - 20, bytes.size() - 1}) {
    std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + cut);
    auto model = load(truncated);
    EXPECT_FALSE(model) << "accepted the model cut at " << cut;
    if (!model) {
      EXPECT_FALSE(model.error().empty());
    }
  }
}

TEST(ModelLoader, OffsetPointingOutsideTheFileIsRejected) {
  std::vector<uint8_t> bytes = add_then_double().build();
  const uint32_t huge = 0x7ffffff0u;
  std::memcpy(bytes.data(), &huge, 4);  // the root table offset
  auto model = load(bytes);
  ASSERT_FALSE(model);
  EXPECT_NE(model.error().find("failed verification"), std::string::npos) << model.error();
}

TEST(ModelLoader, RandomBytesAreRejected) {
  std::mt19937 rng(1234);
  for (int i = 0; i < 200; ++i) {
    std::vector<uint8_t> bytes(8 + rng() % 4096);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    if (i % 2) std::memcpy(bytes.data() + 4, "TFL3", 4);  // get past the identifier check half the time
    auto model = load(bytes);
    EXPECT_FALSE(model) << "random bytes accepted as a model (case " << i << ")";
  }
}

TEST(ModelLoader, MissingFileAndNonModelFile) {
  auto missing = load_model_file("/nonexistent/model.tflite");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("/nonexistent/model.tflite: cannot open"), std::string::npos);
  auto dir = load_model_file("/");
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().find("not a regular file"), std::string::npos);
}

// A few hundred corrupted variants of a real model: each either loads or fails with a message, and
// no variant crashes (the test run under AddressSanitizer makes "crash" include bad reads).
TEST(ModelLoader, CorruptedRealModelNeverCrashes) {
  const char* cache = std::getenv("BATON_MODEL_CACHE");
  std::string path = std::string(cache ? cache : "") + "/face_detection_short_range.tflite";
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "model not found: " << path << " (run tools/fetch-models.sh)";
    GTEST_SKIP() << "real model not fetched: " << path;
  }
  std::vector<uint8_t> original((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(load(original)) << "the unmodified model must load";
  std::mt19937 rng(42);
  int rejected = 0;
  for (int variant = 0; variant < 300; ++variant) {
    std::vector<uint8_t> bytes = original;
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      // Aim most edits at the first 4 KiB and the tail, where the tables and vtables are.
      size_t at = rng() % 3 == 0 ? rng() % std::min<size_t>(4096, bytes.size())
                                 : (rng() % 2 ? bytes.size() - 1 - rng() % std::min<size_t>(8192, bytes.size())
                                              : rng() % bytes.size());
      bytes[at] = static_cast<uint8_t>(rng());
    }
    if (variant % 10 == 0) bytes.resize(rng() % bytes.size());
    auto model = load(bytes);
    if (!model) {
      ++rejected;
      EXPECT_FALSE(model.error().empty());
    }
  }
  RecordProperty("rejected", rejected);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace baton::test
