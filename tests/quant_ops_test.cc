// One-op quantized models (tests/data/quant-ops, made by tools/make-quant-op-cases.sh: our own small
// models, every 8-bit and int8-weight op of the builtin pack in uint8 and int8) run by the builtin pack
// alone against the outputs of the native TensorFlow Lite 2.9 library on the same inputs. 8-bit
// outputs must be equal bit for bit, which holds TFLite's rounding rules (and the last bit of every
// multiplier) to account; float outputs (DEQUANTIZE, the int8-weight kernels) within 1e-5 of the
// largest reference value. Each case runs on one thread and on three (as many as the
// process may use, if fewer): kernels that split their work must give the same bits. Needs neither the model cache nor ../shared.
#include <gtest/gtest.h>

#include <cmath>

#include "interpreter.h"
#include "npy.h"
#include "test_support.h"

namespace baton::test {
namespace {

std::string cases_dir() { return std::string(BATON_SOURCE_ROOT) + "/tests/data/quant-ops"; }

std::vector<std::string> cases() { return case_folders(cases_dir()); }

class QuantOp : public ::testing::TestWithParam<std::string> {};

void expect_native_outputs(const std::string& name, int threads) {
  SCOPED_TRACE(std::to_string(threads) + " thread(s)");
  const std::string dir = cases_dir() + "/" + name + "/";
  auto env = isolated_environment({BUILTIN_PACK_DIR}, "", nullptr, threads);
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_file(dir + "model.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  for (size_t i = 0; i < in.input_count(); ++i) {
    auto arr = tool::read_npy(dir + "in_" + std::to_string(i) + ".npy");
    ASSERT_TRUE(arr) << arr.error();
    ASSERT_EQ(arr->type, in.input(i).type) << "input " << i;
    ASSERT_EQ(arr->data.size(), in.input(i).bytes) << "input " << i;
    std::memcpy(in.input(i).data, arr->data.data(), arr->data.size());
  }
  Status s = in.invoke();
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(in.output_count(), 1u);
  auto want = tool::read_npy(dir + "out_0.npy");
  ASSERT_TRUE(want) << want.error();
  const Tensor& t = in.output(0);
  ASSERT_EQ(want->type, t.type);
  ASSERT_EQ(want->shape, t.shape);
  ASSERT_EQ(want->data.size(), t.bytes);
  if (t.type == BATON_TYPE_FLOAT32) {
    const float* w = reinterpret_cast<const float*>(want->data.data());
    const float* g = reinterpret_cast<const float*>(t.data);
    double max_ref = 0, max_diff = 0;
    for (size_t k = 0; k < t.bytes / 4; ++k) {
      max_ref = std::max(max_ref, std::abs(static_cast<double>(w[k])));
      const double d = std::abs(static_cast<double>(g[k]) - w[k]);
      if (!(d <= max_diff)) max_diff = d;
    }
    EXPECT_LE(max_diff, 1e-5 * max_ref) << name << ": max |diff| " << max_diff << " vs max |ref| " << max_ref;
    std::printf("[ quant op ] %s: max |baton - tflite| / max |ref| = %.3g\n", name.c_str(),
                max_ref > 0 ? max_diff / max_ref : max_diff);
  } else {
    size_t differ = 0, first = 0;
    for (size_t k = 0; k < t.bytes; ++k) {
      if (t.data[k] != want->data[k] && differ++ == 0) first = k;
    }
    EXPECT_EQ(differ, 0u) << name << ": " << differ << " of " << t.bytes << " codes differ, first at " << first
                          << " (baton " << int(t.data[first]) << ", tflite " << int(want->data[first]) << ")";
  }
}

TEST_P(QuantOp, MatchesNativeTfLite) {
  for (int threads : {1, 3}) expect_native_outputs(GetParam(), threads);
}

INSTANTIATE_TEST_SUITE_P(Cases, QuantOp, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace baton::test
