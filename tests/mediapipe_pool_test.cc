// The mediapipe pack's MaxPoolingWithArgmax2D and MaxUnpooling2D.
//
//  - Small models (tests/data/mediapipe-pool, made by tools/make-mediapipe-pool-cases.sh: odd sizes,
//    SAME and VALID, 2x2, 3x3 and 3x2 windows, batch 2, several channels, and pooling followed by
//    unpooling as in the hair segmentation model) against LiteRT 2.5's outputs. Values must agree within
//    1e-5 relative (they are copies, so in practice equal); indices exactly. LiteRT's XNNPACK delegate
//    keeps indices as uint32 bits in the float32 tensors and counts a window column by column, where
//    MediaPipe's kernels count row by row and write the float ky * filter_w + kx + 0.1; so indices are
//    compared as window positions, and the unpooling cases' committed index inputs (LiteRT's encoding)
//    are fed to baton in MediaPipe's. The inputs have no ties (the two scan orders break them apart),
//    and SAME padding only below and right of the image (above or left, XNNPACK can name a padding
//    position).
//  - What LiteRT cannot show (it runs these ops only with stride == filter, and ignores the activation):
//    a stride-1 window with a tie, a SAME window reaching above and left of the image, the padding of an unpooling whose stride exceeds its filter, the fused
//    activation, indices that point outside the output, derived by hand from MediaPipe's definition.
//  - Each refusal at prepare: the node, the op, the tensor or option and the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "interpreter.h"
#include "npy.h"
#include "op_graph.h"
#include "test_support.h"

namespace baton::test {
namespace {

constexpr int32_t kCustom = 32;
constexpr int32_t kSame = 1, kValid = 2;

std::string cases_dir() { return std::string(BATON_SOURCE_ROOT) + "/tests/data/mediapipe-pool"; }

std::vector<std::string> cases() { return case_folders(cases_dir()); }

Expected<std::unique_ptr<Interpreter>> mediapipe_interpreter(const std::vector<uint8_t>& model_bytes) {
  auto env = isolated_environment({MEDIAPIPE_PACK_DIR});
  if (!env) return Status::error(env.error());
  auto model = load_model_buffer(model_bytes, "mediapipe pool test");
  if (!model) return Status::error(model.error());
  return Interpreter::create(env.value(), model.value());
}

// The window of a case's first node, from its custom options (TfLitePoolParams: filter_w, filter_h at
// bytes 12 and 16).
struct Window {
  int32_t h = 0, w = 0;
};

Window window_of(const std::string& model_path) {
  std::ifstream f(model_path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto* options = fb::GetModel(bytes.data())->subgraphs()->Get(0)->operators()->Get(0)->custom_options();
  Window win;
  if (!options || options->size() < 20) return win;
  std::memcpy(&win.w, options->data() + 12, 4);
  std::memcpy(&win.h, options->data() + 16, 4);
  return win;
}

// LiteRT's position of a maximum in MediaPipe's encoding: XNNPACK counts a window column by column
// (kx * filter_h + ky, as uint32 bits), MediaPipe row by row, as the float ky * filter_w + kx + 0.1.
float mediapipe_index(uint32_t xnnpack_k, const Window& win) {
  const uint32_t ky = xnnpack_k % win.h, kx = xnnpack_k / win.h;
  return static_cast<float>(ky * win.w + kx) + 0.1f;
}

class PoolCase : public ::testing::TestWithParam<std::string> {};

TEST_P(PoolCase, MatchesLiteRt) {
  const std::string dir = cases_dir() + "/" + GetParam() + "/";
  auto env = isolated_environment({MEDIAPIPE_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_file(dir + "model.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  const bool unpool_only = GetParam().rfind("unpool_", 0) == 0;
  const Window win = window_of(dir + "model.tflite");
  ASSERT_GT(win.h, 0);
  ASSERT_GT(win.w, 0);
  for (size_t i = 0; i < in.input_count(); ++i) {
    auto arr = tool::read_npy(dir + "in_" + std::to_string(i) + ".npy");
    ASSERT_TRUE(arr) << arr.error();
    ASSERT_EQ(arr->type, in.input(i).type) << "input " << i;
    ASSERT_EQ(arr->data.size(), in.input(i).bytes) << "input " << i;
    if (unpool_only && i == 1) {
      // The indices, as uint32 bits (LiteRT's encoding): fed as MediaPipe's floats.
      std::vector<uint32_t> bits(arr->data.size() / 4);
      std::memcpy(bits.data(), arr->data.data(), arr->data.size());
      float* dst = reinterpret_cast<float*>(in.input(i).data);
      for (size_t k = 0; k < bits.size(); ++k) {
        ASSERT_LT(bits[k], static_cast<uint32_t>(win.h * win.w)) << "index " << k;
        dst[k] = mediapipe_index(bits[k], win);
      }
    } else {
      std::memcpy(in.input(i).data, arr->data.data(), arr->data.size());
    }
  }
  Status s = in.invoke();
  ASSERT_TRUE(s) << s.message();
  const bool argmax_only = GetParam().rfind("argmax_", 0) == 0;
  ASSERT_EQ(in.output_count(), argmax_only ? 2u : 1u);
  for (size_t o = 0; o < in.output_count(); ++o) {
    auto want = tool::read_npy(dir + "out_" + std::to_string(o) + ".npy");
    ASSERT_TRUE(want) << want.error();
    const Tensor& t = in.output(o);
    ASSERT_EQ(t.type, BATON_TYPE_FLOAT32);
    ASSERT_EQ(want->type, t.type);
    ASSERT_EQ(want->shape, t.shape) << "output " << o;
    ASSERT_EQ(want->data.size(), t.bytes);
    const float* g = reinterpret_cast<const float*>(t.data);
    const size_t n = t.bytes / 4;
    if (argmax_only && o == 1) {
      std::vector<uint32_t> w(n);
      std::memcpy(w.data(), want->data.data(), t.bytes);
      size_t differ = 0;
      for (size_t k = 0; k < n; ++k) {
        const float expected = mediapipe_index(w[k], win);
        if (std::memcmp(&g[k], &expected, 4) != 0 && differ++ < 5) {
          ADD_FAILURE() << GetParam() << " index [" << k << "]: baton " << g[k] << ", LiteRT position " << w[k];
        }
      }
      EXPECT_EQ(differ, 0u) << GetParam() << ": indices differ";
      continue;
    }
    const float* w = reinterpret_cast<const float*>(want->data.data());
    double max_rel = 0;
    for (size_t k = 0; k < n; ++k) {
      const double d = std::abs(static_cast<double>(g[k]) - w[k]);
      EXPECT_LE(d, 1e-5 * std::abs(static_cast<double>(w[k]))) << GetParam() << " output " << o << " [" << k << "]: baton "
                                                               << g[k] << ", LiteRT " << w[k];
      if (w[k] != 0) max_rel = std::max(max_rel, d / std::abs(static_cast<double>(w[k])));
    }
    std::printf("[ mediapipe pool ] %s output %zu: max relative difference %.3g\n", GetParam().c_str(), o, max_rel);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, PoolCase, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// ---- hand-derived cases and refusals

struct Params {
  int32_t padding = kValid;
  int32_t stride_h = 2, stride_w = 2, filter_h = 2, filter_w = 2;
  int32_t activation = 0;
};

// TfLitePoolParams as the converter writes it: ten little-endian int32 (the last four computed padding).
std::vector<uint8_t> pool_params(const Params& p, size_t fields = 10) {
  std::vector<int32_t> v = {p.padding, p.stride_w, p.stride_h, p.filter_w, p.filter_h, p.activation, 0, 0, 0, 0};
  v.resize(fields);
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());  // little-endian hosts only, like the runtime
  return out;
}

OpGraph argmax_graph(std::vector<int32_t> shape, std::vector<uint8_t> options, int8_t index_type = 0) {
  OpGraph g;
  const int32_t x = g.input(std::move(shape));
  const int32_t v = g.output({1});
  const int32_t i = g.add({1}, {}, index_type);
  g.outputs.push_back(i);
  g.op(kCustom, {x}, {v, i});
  g.ops.back().custom = "MaxPoolingWithArgmax2D";
  g.ops.back().custom_options = std::move(options);
  return g;
}

OpGraph unpool_graph(std::vector<int32_t> shape, std::vector<int32_t> index_shape, std::vector<uint8_t> options) {
  OpGraph g;
  const int32_t x = g.input(std::move(shape));
  const int32_t i = g.input(std::move(index_shape));
  const int32_t y = g.output({1});
  g.op(kCustom, {x, i}, {y});
  g.ops.back().custom = "MaxUnpooling2D";
  g.ops.back().custom_options = std::move(options);
  return g;
}

struct RunResult {
  std::vector<std::vector<float>> outputs;
  std::vector<std::vector<int32_t>> shapes;
};

RunResult run(const OpGraph& g, const std::vector<std::vector<float>>& inputs) {
  RunResult r;
  auto interp = mediapipe_interpreter(g.build());
  EXPECT_TRUE(interp) << interp.error();
  if (!interp) return r;
  Interpreter& in = *interp.value();
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(in.input(i).bytes, inputs[i].size() * 4) << "input " << i;
    std::memcpy(in.input(i).data, inputs[i].data(), std::min(in.input(i).bytes, inputs[i].size() * 4));
  }
  Status s = in.invoke();
  EXPECT_TRUE(s) << s.message();
  for (size_t o = 0; o < in.output_count(); ++o) {
    const Tensor& t = in.output(o);
    r.outputs.emplace_back(reinterpret_cast<const float*>(t.data), reinterpret_cast<const float*>(t.data) + t.bytes / 4);
    r.shapes.push_back(t.shape);
  }
  return r;
}

TEST(MaxPoolingWithArgmax2D, StrideOneOverlappingWindows) {
  // A 3x4 single-channel image, 2x3 windows, stride 1, VALID: 2x2 outputs. The tie at 9 (positions
  // (0,2) and (1,1) of the first window) goes to the first in row order.
  const std::vector<float> x = {1, 5, 9, 2,
                                3, 9, 0, 4,
                                8, 7, 6, 11};
  const RunResult r = run(argmax_graph({1, 3, 4, 1}, pool_params({kValid, 1, 1, 2, 3})), {x});
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 2, 2, 1}));
  EXPECT_EQ(r.shapes[1], (std::vector<int32_t>{1, 2, 2, 1}));
  EXPECT_EQ(r.outputs[0], (std::vector<float>{9, 9, 9, 11}));
  // Window (0,0): 9 at (0,2) -> 2. (0,1): 9 at (0,1) -> 1. (1,0): 9 at (0,1) -> 1. (1,1): 11 at (1,2) -> 5.
  EXPECT_EQ(r.outputs[1], (std::vector<float>{2.1f, 1.1f, 1.1f, 5.1f}));
}

TEST(MaxPoolingWithArgmax2D, SamePaddingCountsFromTheUnclippedWindow) {
  // A 1x4 image, 1x3 windows, stride 3, SAME: two outputs and padding ((2-1)*3 + 3 - 4) / 2 = 1, so the
  // first window starts at column -1 and its maximum at column 0 is position 1; the second window
  // (columns 2..4, clipped to 2..3) has its maximum at column 3, position 1 too.
  const RunResult r = run(argmax_graph({1, 1, 4, 1}, pool_params({kSame, 3, 3, 1, 3})), {{7, 1, 2, 3}});
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 1, 2, 1}));
  EXPECT_EQ(r.outputs[0], (std::vector<float>{7, 3}));
  EXPECT_EQ(r.outputs[1], (std::vector<float>{1.1f, 1.1f}));
}

TEST(MaxPoolingWithArgmax2D, ActivationClampsValuesNotIndices) {
  const RunResult relu6 = run(argmax_graph({1, 2, 2, 2}, pool_params({kValid, 2, 2, 2, 2, 3})),
                        {{-1, 10, -3, 2, -0.5f, 1, -2, 3}});
  ASSERT_EQ(relu6.outputs.size(), 2u);
  EXPECT_EQ(relu6.outputs[0], (std::vector<float>{0, 6}));
  EXPECT_EQ(relu6.outputs[1], (std::vector<float>{2.1f, 0.1f}));
}

TEST(MaxPoolingWithArgmax2D, ShortOptionsWithoutComputedPadding) {
  const RunResult r = run(argmax_graph({1, 2, 2, 1}, pool_params({kValid, 2, 2, 2, 2}, 6)), {{1, 2, 4, 3}});
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.outputs[0], (std::vector<float>{4}));
  EXPECT_EQ(r.outputs[1], (std::vector<float>{2.1f}));
}

TEST(MaxUnpooling2D, StrideBeyondFilterIsPaddedAndModeIgnored) {
  // 1x2 input, 1x2 filter, stride 4: the output is 1x4 and pad_w = ((2-1)*4 + 2 - 4) / 2 = 1, so input x
  // at position k lands on column 4x - 1 + k (-1 is skipped). The padding mode does not change that.
  for (int32_t mode : {kSame, kValid}) {
    const RunResult r = run(unpool_graph({1, 1, 2, 1}, {1, 1, 2, 1}, pool_params({mode, 1, 4, 1, 2})),
                      {{5, 6}, {0.1f, 0.1f}});
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 1, 4, 1}));
    EXPECT_EQ(r.outputs[0], (std::vector<float>{0, 0, 0, 6})) << "mode " << mode;  // 5 -> -1 skipped, 6 -> 3
  }
}

TEST(MaxUnpooling2D, IndicesOutsideTheOutputAreSkipped) {
  // 2x2 filter and stride on a 1x2x1 input (output 2x4); channel-interleaved, two channels.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const RunResult r = run(unpool_graph({1, 1, 2, 2}, {1, 1, 2, 2}, pool_params({kValid, 2, 2, 2, 2})),
                    {{1, 2, 3, 4}, {3.1f, 7.1f, nan, 1e20f}});
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 2, 4, 2}));
  std::vector<float> want(16, 0.0f);
  want[(1 * 4 + 1) * 2 + 0] = 1;  // position 3 of window 0: row 1, column 1
  // Channel 1's 7 is row 3 (outside), the NaN and 1e20 point nowhere.
  EXPECT_EQ(r.outputs[0], want);
}

TEST(MaxPoolingWithArgmax2D, PrepareRefusals) {
  struct Case {
    OpGraph graph;
    const char* message;
  } cases[] = {
      {argmax_graph({1, 4, 4}, pool_params({})), "input (input 0) must have rank 4, has shape [1,4,4]"},
      {argmax_graph({1, 4, 4, 1}, pool_params({}, 5)), "custom options: expected at least 24 bytes"},
      {argmax_graph({1, 4, 4, 1}, {}), "custom options: expected at least 24 bytes"},
      {argmax_graph({1, 4, 4, 1}, pool_params({0})), "custom options: padding 0 unknown"},
      {argmax_graph({1, 4, 4, 1}, pool_params({kSame, 0, 2})), "custom options: strides must be in 1..4096"},
      {argmax_graph({1, 4, 4, 1}, pool_params({kSame, 2, 2, 2, -1})), "custom options: filter size must be in 1..4096"},
      {argmax_graph({1, 4, 4, 1}, pool_params({kSame, 2, 2, 2, 2, 6})), "custom options: activation 6 not supported"},
      {argmax_graph({1, 2, 4, 1}, pool_params({kValid, 3, 3, 3, 3})),
       "input (input 0) height 2 is smaller than the filter's 3 with VALID padding"},
      {argmax_graph({1, 4, 4, 1}, pool_params({}), 2),
       "indices (output 1) type INT32 not supported by the mediapipe pack (float32 only)"},
  };
  for (const Case& c : cases) {
    auto interp = mediapipe_interpreter(c.graph.build());
    ASSERT_FALSE(interp) << c.message;
    EXPECT_NE(interp.error().find(std::string("node 0 MaxPoolingWithArgmax2D: ") + c.message), std::string::npos)
        << interp.error();
  }
}

TEST(MaxUnpooling2D, PrepareRefusals) {
  struct Case {
    OpGraph graph;
    const char* message;
  } cases[] = {
      {unpool_graph({2, 2, 1}, {2, 2, 1}, pool_params({})), "values (input 0) must have rank 4, has shape [2,2,1]"},
      {unpool_graph({1, 2, 2, 1}, {1, 2, 2}, pool_params({})), "indices (input 1) must have rank 4, has shape [1,2,2]"},
      {unpool_graph({1, 2, 2, 1}, {1, 2, 2, 2}, pool_params({})),
       "indices (input 1) [1,2,2,2] must have the values' shape [1,2,2,1]"},
      {unpool_graph({1, 2, 2, 1}, {1, 2, 2, 1}, pool_params({}, 3)), "custom options: expected at least 24 bytes"},
      {unpool_graph({1, 2, 2, 1}, {1, 2, 2, 1}, pool_params({3})), "custom options: padding 3 unknown"},
      {unpool_graph({1, 2, 2, 1}, {1, 2, 2, 1}, pool_params({kValid, 2, 0})), "custom options: strides must be in 1..4096"},
      {unpool_graph({1, 2, 2, 1}, {1, 2, 2, 1}, pool_params({kValid, 2, 2, 0, 2})),
       "custom options: filter size must be in 1..4096"},
  };
  for (const Case& c : cases) {
    auto interp = mediapipe_interpreter(c.graph.build());
    ASSERT_FALSE(interp) << c.message;
    EXPECT_NE(interp.error().find(std::string("node 0 MaxUnpooling2D: ") + c.message), std::string::npos)
        << interp.error();
  }
}

}  // namespace
}  // namespace baton::test
