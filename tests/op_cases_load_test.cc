// What the builtin pack's models meet at load, in models built here: nodes that cannot run all named in
// one error before anything runs; what TFLite 2.9's kernels refuse or would run out of bounds (bool
// MATRIX_DIAG, int8 REVERSE_SEQUENCE, narrow FAKE_QUANT, integer LSTMs without their intermediates,
// bidirectional sequence ops with partial auxiliary weights) refused with the reason; dead nodes dropped
// before they are resolved.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "interpreter.h"
#include "op_graph.h"
#include "tiny_model.h"
#include "test_support.h"

namespace baton::test {
namespace {

namespace fb = baton::tflite;

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
// Blockwise INT4 weights (a scale per block of 32 codes, FLOAT16 as LiteRT reads them) run in
// FULLY_CONNECTED under a float input and in EMBEDDING_LOOKUP; under an int8 input, with FLOAT32 scales,
// and in ops that take one scale per tensor or channel (DEQUANTIZE), the node is refused saying so.
TEST(BlockwiseWeights, AreRefusedWhereLiteRtDoesNotRunThem) {
  auto model_with = [](int32_t code, TinyTensor input, TinyTensor output, bool float16_scales = true) {
    TinyModel m;
    TinyTensor w{{2, 64}, 17 /* INT4 */, std::vector<uint8_t>(64, 0x21), "w"};
    w.blockwise_scales = 2;
    // 0.5, 0.25, 1, 2
    const std::vector<uint8_t> scales = float16_scales ? std::vector<uint8_t>{0x00, 0x38, 0x00, 0x34, 0x00, 0x3c, 0x00, 0x40}
                                                       : floats({0.5f, 0.25f, 1, 2});
    m.tensors = {input, w, {{2, 2}, static_cast<int8_t>(float16_scales ? 1 /* FLOAT16 */ : 0), scales, "s"}, output};
    m.ops = {{code, "", 1, code == 9 ? std::vector<int32_t>{0, 1, -1} : std::vector<int32_t>{0, 1}, {3}}};
    if (code == 6) m.ops[0].inputs = {1};
    m.inputs = {0};
    m.outputs = {3};
    return m.build();
  };
  TinyTensor int8_in{{1, 64}, 9 /* INT8 */, {}, "x"}, int8_out{{1, 2}, 9, {}, "y"};
  int8_in.scales = int8_out.scales = {0.1f};
  int8_in.zero_points = int8_out.zero_points = {0};
  struct Refusal {
    std::vector<uint8_t> model;
    std::string why;
  };
  const std::vector<Refusal> refusals = {
      {model_with(9 /* FULLY_CONNECTED */, int8_in, int8_out),
       "blockwise weights are taken as INT4 codes under a FLOAT32 input (as LiteRT), not INT4 under INT8"},
      {model_with(9, {{1, 64}, 0, {}, "x"}, {{1, 2}, 0, {}, "y"}, false),
       "the weights' quantization has FLOAT32 block scales; blockwise weights take FLOAT16 ones"},
      {model_with(7 /* EMBEDDING_LOOKUP */, {{2}, 2 /* INT32 */, {}, "ids"}, {{2, 64}, 0, {}, "y"}, false),
       "table (input 1) has FLOAT32 block scales"},
      {model_with(6 /* DEQUANTIZE */, {{2}, 2, {}, "unused"}, {{2, 64}, 0, {}, "y"}),
       "the input has blockwise quantization (blocks of 32), which only FULLY_CONNECTED and EMBEDDING_LOOKUP take"},
  };
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  for (const Refusal& r : refusals) {
    auto model = load_model_buffer(r.model, "blockwise.tflite");
    ASSERT_TRUE(model) << model.error();
    auto interp = Interpreter::create(env.value(), model.value());
    ASSERT_FALSE(interp) << r.why;
    EXPECT_NE(interp.error().find(r.why), std::string::npos) << interp.error();
  }
  // The same weights under a float input run: [1, 64] ones give per unit sum(code) * its block scales.
  auto model = load_model_buffer(model_with(9, {{1, 64}, 0, {}, "x"}, {{1, 2}, 0, {}, "y"}), "blockwise.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  std::vector<float> ones(64, 1.0f);
  std::memcpy(interp.value()->input(0).data, ones.data(), 64 * sizeof(float));
  ASSERT_TRUE(interp.value()->invoke());
  // Byte 0x21: codes 1 (low nibble) and 2, so each block of 32 sums to 16 * 3 = 48.
  const float* y = reinterpret_cast<const float*>(interp.value()->output(0).data);
  EXPECT_EQ(y[0], 48 * 0.5f + 48 * 0.25f);
  EXPECT_EQ(y[1], 48 * 1.0f + 48 * 2.0f);
}

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
