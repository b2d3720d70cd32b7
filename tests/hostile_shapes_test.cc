// Models whose fields disagree in ways that cost nothing to declare: a filter of a billion output
// channels that holds no bytes (another dimension is 0), a bias of 3 for it, a table with no rows whose
// lookup output would be terabytes, an input of a huge declared dimension. Each must be refused in
// milliseconds, with a small RSS and an error naming the node, the tensor and the reason (#41). Each
// model runs in a child process under an address-space limit, so that a regression fails the test
// quickly (an allocation fails) instead of taking the machine's memory.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"

namespace baton::test {
namespace {

constexpr int32_t kChannels = 989855747;  // the fuzzer's 848-byte model's

// AddressSanitizer reserves terabytes of address space for its shadow and allocator: under it the child
// keeps no address-space limit (it could not start), and the RSS and time bounds alone catch a regression.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kLimitAddressSpace = false;
#else
constexpr bool kLimitAddressSpace = true;
#endif

struct Outcome {
  std::string error;  // the load's or the interpreter's; "" when the model was accepted
  double seconds = 0;
  long max_rss_kb = 0;
  int exit_status = -1;
};

// Loads `bytes` and makes an interpreter with the builtin pack (and invokes it once, with `invoke`) in a
// child limited to 2 GiB of address space and 20 s, and reports the error, the wall time and the child's
// peak RSS.
Outcome run_in_child(const std::vector<uint8_t>& bytes, const LoadLimits& limits = {}, bool invoke = false) {
  int fds[2];
  if (pipe(fds) != 0) return {"pipe failed"};
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (kLimitAddressSpace) {
      const rlimit as{size_t(2) << 30, size_t(2) << 30};
      setrlimit(RLIMIT_AS, &as);
    }
    alarm(20);
    std::string message;
    auto env = isolated_environment({BUILTIN_PACK_DIR});
    if (!env) {
      message = "environment: " + env.error();
    } else if (auto model = load_model_buffer(bytes, "hostile.tflite", limits); !model) {
      message = model.error();
    } else if (auto interp = Interpreter::create(env.value(), model.value()); !interp) {
      message = interp.error();
    } else if (invoke) {
      if (Status s = interp.value()->invoke(); !s) message = "invoke: " + s.message();
    }
    if (write(fds[1], message.data(), message.size()) < 0) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  Outcome out;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) out.error.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.max_rss_kb = usage.ru_maxrss;
  out.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

// Refused, fast, small, with every fragment in the error.
void expect_refused(const Outcome& o, const std::vector<std::string>& fragments) {
  EXPECT_EQ(o.exit_status, 0) << "the child died (128 + signal, or the 20 s alarm); error so far: " << o.error;
  EXPECT_FALSE(o.error.empty()) << "the model was accepted";
  for (const std::string& f : fragments) EXPECT_NE(o.error.find(f), std::string::npos) << f << "\nin: " << o.error;
  EXPECT_LT(o.seconds, 2.0) << o.error;
  EXPECT_LT(o.max_rss_kb, 300 * 1024) << o.error;
}

OptionsFn conv_options() {
  return [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::BuiltinOptions_Conv2DOptions, fb::CreateConv2DOptions(b, fb::Padding_VALID, 1, 1).Union());
  };
}

const Quantization kU8{{0.5f}, {128}, 0};
const Quantization kS8{{0.5f}, {0}, 0};

// A constant int32 bias of 3 values, with the scale input x filter (0.25).
int32_t bias3(OpGraph& g) { return g.quantized({3}, 2, {{0.25f}, {0}, 0}, ints({1, 2, 3})); }

// The fuzzer's model: a uint8 CONV_2D whose empty filter declares 989,855,747 output channels, and a
// bias of 3. The builtin pack built per-channel scales for every declared channel before it compared the
// bias with them: 11.6 GB and 40 s.
TEST(HostileShapes, Conv2dWithABillionEmptyChannelsAndABiasOfThree) {
  OpGraph g;
  const int32_t in = g.quantized({1, 3, 3, 0}, 3, kU8);
  g.inputs.push_back(in);
  const int32_t w = g.quantized({kChannels, 3, 3, 0}, 3, kU8);
  const int32_t out = g.quantized({1, 1, 1, 3}, 3, kU8);
  g.outputs.push_back(out);
  g.op(3 /* CONV_2D */, {in, w, bias3(g)}, {out}, conv_options());
  expect_refused(run_in_child(g.build()), {"node 0 CONV_2D", "bias (tensor 3 't3') has 3 elements",
                                           "989855747 channels"});
}

TEST(HostileShapes, Int8DepthwiseWithABillionEmptyChannels) {
  OpGraph g;
  const int32_t in = g.quantized({1, 3, 3, 1}, 9, kS8);
  g.inputs.push_back(in);
  const int32_t w = g.quantized({1, 1, 0, kChannels}, 9, kS8);
  const int32_t out = g.quantized({1, 1, 1, 3}, 9, kS8);
  g.outputs.push_back(out);
  g.op(4 /* DEPTHWISE_CONV_2D */, {in, w, bias3(g)}, {out}, [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                          fb::CreateDepthwiseConv2DOptions(b, fb::Padding_VALID, 1, 1, 0).Union());
  });
  expect_refused(run_in_child(g.build()), {"node 0 DEPTHWISE_CONV_2D", "bias (tensor 3 't3') has 3 elements",
                                           "989855747 channels"});
}

// FULLY_CONNECTED sets its output shape (here empty: a batch of 0) before the 8-bit setup, which read a
// scale per declared unit before it looked at the bias. Its weights cannot be empty (a depth of 0 is
// refused), so they are an input of the model: 989 MB declared, within the machine's memory, never
// allocated (prepare comes before the arena).
TEST(HostileShapes, Uint8FullyConnectedWithABillionUnitsAndAnEmptyBatch) {
  OpGraph g;
  const int32_t in = g.quantized({0, 1}, 3, kU8);
  g.inputs.push_back(in);
  const int32_t w = g.quantized({kChannels, 1}, 3, kU8);
  g.inputs.push_back(w);
  const int32_t out = g.quantized({0, 3}, 3, kU8);
  g.outputs.push_back(out);
  g.op(9 /* FULLY_CONNECTED */, {in, w, bias3(g)}, {out});
  expect_refused(run_in_child(g.build()), {"node 0 FULLY_CONNECTED", "bias (tensor 3 't3') has 3 elements",
                                           "989855747 channels"});
}

// TRANSPOSE_CONV's output (1 x 1 x 1 x 989,855,747 int8, under the machine's memory) is allowed; its
// per-channel multipliers were made before the bias was checked.
TEST(HostileShapes, Int8TransposeConvWithABillionChannels) {
  OpGraph g;
  const int32_t shape = g.add({4}, ints({1, 1, 1, kChannels}), 2);
  const int32_t w = g.quantized({kChannels, 1, 1, 0}, 9, kS8);
  const int32_t in = g.quantized({1, 1, 1, 0}, 9, kS8);
  g.inputs.push_back(in);
  const int32_t out = g.quantized({1, 1, 1, 3}, 9, kS8);
  g.outputs.push_back(out);
  g.op(67 /* TRANSPOSE_CONV */, {shape, w, in, bias3(g)}, {out}, [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::BuiltinOptions_TransposeConvOptions,
                          fb::CreateTransposeConvOptions(b, fb::Padding_VALID, 1, 1).Union());
  }, 3);
  expect_refused(run_in_child(g.build()), {"node 0 TRANSPOSE_CONV", "bias (tensor 4 't4') has 3 elements",
                                           "989855747 channels"});
}

TEST(HostileShapes, Conv3dWithABillionEmptyChannels) {
  OpGraph g;
  const int32_t in = g.input({1, 1, 1, 1, 0});
  const int32_t w = g.add({1, 1, 1, 0, kChannels});
  const int32_t bias = g.add({3}, floats({1, 2, 3}));
  const int32_t out = g.output({1, 1, 1, 1, 3});
  g.op(132 /* CONV_3D */, {in, w, bias}, {out}, [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::BuiltinOptions_Conv3DOptions, fb::CreateConv3DOptions(b, fb::Padding_VALID, 1, 1, 1).Union());
  });
  expect_refused(run_in_child(g.build()), {"node 0 CONV_3D", "bias has 3 elements", "989855747 channels"});
}

// Per-channel scales whose count disagrees with the quantized dimension: the loader refuses them.
TEST(HostileShapes, PerChannelScalesThatDisagreeWithTheDimension) {
  OpGraph g;
  const int32_t in = g.quantized({1, 1, 1, 1}, 9, kS8);
  g.inputs.push_back(in);
  const int32_t w = g.quantized({2, 1, 1, 1}, 9, {{0.5f, 0.5f, 0.5f}, {0, 0, 0}, 0}, {1, 2});
  const int32_t out = g.quantized({1, 1, 1, 2}, 9, kS8);
  g.outputs.push_back(out);
  g.op(3 /* CONV_2D */, {in, w}, {out}, conv_options());
  expect_refused(run_in_child(g.build()), {"tensor 1", "per-channel quantization with 3 scales does not match "
                                           "dimension 0"});
}

// SVDF with a billion filters, an empty batch and a bias of 3.
TEST(HostileShapes, SvdfWithABillionFilters) {
  OpGraph g;
  const int32_t in = g.input({0, 0});
  const int32_t feature = g.add({kChannels, 0});
  const int32_t time = g.input({kChannels, 1});
  const int32_t bias = g.add({3}, floats({1, 2, 3}));
  const int32_t state = g.add({0, kChannels});
  g.tensors[state].is_variable = true;
  const int32_t out = g.output({0, 3});
  g.op(27 /* SVDF */, {in, feature, time, bias, state}, {out}, [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::BuiltinOptions_SVDFOptions, fb::CreateSVDFOptions(b, 1).Union());
  });
  expect_refused(run_in_child(g.build()), {"node 0 SVDF", "bias"});
}

// A float UNIDIRECTIONAL_SEQUENCE_LSTM of a billion cells, all of its weights empty (no input features,
// a projection to no outputs), no batch, and gate biases of 3: refused on the biases before anything is
// sized by the cell count.
TEST(HostileShapes, SequenceLstmWithABillionEmptyCells) {
  OpGraph g;
  const int32_t in = g.input({0, 4, 0});
  auto empty = [&](std::vector<int32_t> shape) { return g.add(std::move(shape)); };
  std::vector<int32_t> inputs = {in, -1};
  for (int k = 0; k < 3; ++k) inputs.push_back(empty({kChannels, 0}));  // input to forget, cell, output
  inputs.push_back(-1);
  for (int k = 0; k < 3; ++k) inputs.push_back(empty({kChannels, 0}));  // recurrent to forget, cell, output
  inputs.insert(inputs.end(), {-1, -1, -1, -1});                         // peepholes, input gate bias
  for (int k = 0; k < 3; ++k) inputs.push_back(g.add({3}, floats({1, 2, 3})));  // forget, cell, output biases
  inputs.push_back(empty({0, kChannels}));                               // projection weights
  inputs.push_back(-1);                                                  // projection bias
  const int32_t output_state = g.add({0, 0});
  const int32_t cell_state = g.add({0, kChannels});
  g.tensors[output_state].is_variable = true;
  g.tensors[cell_state].is_variable = true;
  inputs.insert(inputs.end(), {output_state, cell_state, -1, -1, -1, -1});
  const int32_t out = g.output({0, 4, 0});
  g.op(44 /* UNIDIRECTIONAL_SEQUENCE_LSTM */, inputs, {out}, [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::BuiltinOptions_UnidirectionalSequenceLSTMOptions,
                          fb::CreateUnidirectionalSequenceLSTMOptions(b, fb::ActivationFunctionType_TANH, 0, 0, true).Union());
  });
  expect_refused(run_in_child(g.build()), {"node 0 UNIDIRECTIONAL_SEQUENCE_LSTM", "bias"});
}

// GATHER and EMBEDDING_LOOKUP from a table with no rows but a billion columns: the output would be
// 1000 x 989,855,747 floats. The host refuses the shape when prepare sets it, naming the tensor and the
// limit, before the arena is planned.
TEST(HostileShapes, GatherFromAnEmptyTableOfABillionColumns) {
  OpGraph g;
  const int32_t params = g.input({0, kChannels});
  const int32_t indices = g.input({1000}, 2);
  const int32_t out = g.output({1000, 1});
  g.op(36 /* GATHER */, {params, indices}, {out});
  expect_refused(run_in_child(g.build()), {"node 0 (GATHER v1)", "output tensor 2 \"t2\" of shape [1000,989855747]",
                                           "over the tensor limit of"});
}

TEST(HostileShapes, EmbeddingLookupInAnEmptyTableOfABillionColumns) {
  OpGraph g;
  const int32_t ids = g.input({1000}, 2);
  const int32_t table = g.input({0, kChannels});
  const int32_t out = g.output({1000, 1});
  g.op(7 /* EMBEDDING_LOOKUP */, {ids, table}, {out});
  expect_refused(run_in_child(g.build()), {"node 0 (EMBEDDING_LOOKUP v1)", "output tensor 2 \"t2\"",
                                           "over the tensor limit of"});
}

// SPACE_TO_BATCH_ND of an input with no channels and 2^29 rows and columns of padding after it: the
// output holds no bytes, but the kernel's loops visited each of its 2^58 pixels (a fuzzer's timeout).
// Padding that makes a dimension past int32 is refused.
TEST(HostileShapes, SpaceToBatchWithNoChannelsAndABillionRowsOfPadding) {
  auto model = [](int32_t pad) {
    OpGraph g;
    const int32_t in = g.input({1, 2, 2, 0});
    const int32_t block = g.add({2}, ints({1, 1}), 2);
    const int32_t pads = g.add({2, 2}, ints({0, pad, 0, pad}), 2);
    const int32_t out = g.output({1, 2, 2, 0});
    g.op(38 /* SPACE_TO_BATCH_ND */, {in, block, pads}, {out});
    return g.build();
  };
  const Outcome ran = run_in_child(model(1 << 29), {}, true);
  EXPECT_EQ(ran.exit_status, 0) << "the child died (128 + signal, or the 20 s alarm); error so far: " << ran.error;
  EXPECT_EQ(ran.error, "");
  EXPECT_LT(ran.seconds, 2.0);
  expect_refused(run_in_child(model(INT32_MAX - 1)), {"node 0 (SPACE_TO_BATCH_ND v1)", "does not fit int32"});
}

// A SQUEEZE whose options are another op's (Conv2DOptions): TFLite's parser reads them as absent, and so
// does the host. Read as SqueezeOptions, their padding and strides made a dimension count and a pointer
// (a fuzzer's crash).
TEST(HostileShapes, SqueezeWithAnotherOpsOptionsReadsThemAsAbsent) {
  OpGraph g;
  const int32_t in = g.input({1, 3, 1});
  const int32_t out = g.output({3});
  g.op(43 /* SQUEEZE */, {in}, {out}, conv_options());
  const std::vector<uint8_t> bytes = g.build();
  const Outcome ran = run_in_child(bytes, {}, true);
  EXPECT_EQ(ran.exit_status, 0) << "the child died (128 + signal, or the 20 s alarm); error so far: " << ran.error;
  EXPECT_EQ(ran.error, "");
  auto model = load_model_buffer(bytes, "squeeze.tflite");
  ASSERT_TRUE(model) << model.error();
  EXPECT_EQ(model.value()->main().nodes[0].options.kind, 0);
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  EXPECT_EQ(interp.value()->output(0).shape, std::vector<int32_t>({3}));  // every dimension of 1 squeezed
}

// Windows over an input of no channels: no bytes in the input or the filter, millions of positions. The
// kernels walked every window position of every output pixel (or every input pixel, for the transposed
// convolutions) to add nothing: minutes of work for each of these, and a timeout of the CI's fuzzer. Each
// output is its bias now, at once (the child's 20 s alarm fails the test otherwise).
void expect_runs(const std::vector<uint8_t>& bytes, const std::string& what) {
  const Outcome o = run_in_child(bytes, {}, true);
  EXPECT_EQ(o.exit_status, 0) << what << ": the child died (128 + signal, or the 20 s alarm); error so far: " << o.error;
  EXPECT_EQ(o.error, "") << what;
}

OptionsFn transpose_conv_options() {
  return [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::BuiltinOptions_TransposeConvOptions,
                          fb::CreateTransposeConvOptions(b, fb::Padding_VALID, 1, 1).Union());
  };
}

TEST(HostileShapes, WindowsOverNoChannelsRunAtOnce) {
  {  // int16 CONV_2D: a million output pixels, a 200 x 200 window each
    OpGraph g;
    const int32_t in = g.quantized({1, 2000, 2000, 0}, 7 /* INT16 */, {{0.5f}, {0}, 0});
    g.inputs.push_back(in);
    const int32_t w = g.quantized({4, 200, 200, 0}, 9, kS8);
    const int32_t out = g.quantized({1, 3, 3, 4}, 7, {{0.5f}, {0}, 0});
    g.outputs.push_back(out);
    g.op(3 /* CONV_2D */, {in, w, -1}, {out}, [](flatbuffers::FlatBufferBuilder& b) {
      return std::make_pair(fb::BuiltinOptions_Conv2DOptions, fb::CreateConv2DOptions(b, fb::Padding_SAME, 2, 2).Union());
    });
    expect_runs(g.build(), "int16 CONV_2D");
  }
  {  // float CONV_3D: a million output positions, a 40 x 40 x 40 window each
    OpGraph g;
    const int32_t in = g.input({1, 100, 100, 100, 0});
    const int32_t w = g.add({40, 40, 40, 0, 4});
    const int32_t bias = g.add({4}, floats({1, 2, 3, 4}));
    const int32_t out = g.output({1, 1, 1, 1, 4});
    g.op(132 /* CONV_3D */, {in, w, bias}, {out}, [](flatbuffers::FlatBufferBuilder& b) {
      return std::make_pair(fb::BuiltinOptions_Conv3DOptions, fb::CreateConv3DOptions(b, fb::Padding_SAME, 1, 1, 1).Union());
    });
    expect_runs(g.build(), "CONV_3D");
  }
  {  // int8 TRANSPOSE_CONV: 1.6 billion input pixels, a 30 x 30 window each
    OpGraph g;
    const int32_t shape = g.add({4}, ints({1, 5, 5, 3}), 2);
    const int32_t w = g.quantized({3, 30, 30, 0}, 9, kS8);
    const int32_t in = g.quantized({1, 40000, 40000, 0}, 9, kS8);
    g.inputs.push_back(in);
    const int32_t out = g.quantized({1, 5, 5, 3}, 9, kS8);
    g.outputs.push_back(out);
    g.op(67 /* TRANSPOSE_CONV */, {shape, w, in, -1}, {out}, transpose_conv_options(), 3);
    expect_runs(g.build(), "int8 TRANSPOSE_CONV");
  }
  {  // float TRANSPOSE_CONV, the same
    OpGraph g;
    const int32_t shape = g.add({4}, ints({1, 5, 5, 3}), 2);
    const int32_t w = g.add({3, 30, 30, 0});
    const int32_t in = g.input({1, 40000, 40000, 0});
    const int32_t out = g.output({1, 5, 5, 3});
    g.op(67 /* TRANSPOSE_CONV */, {shape, w, in}, {out}, transpose_conv_options());
    expect_runs(g.build(), "float TRANSPOSE_CONV");
  }
  {  // float CONV_3D_TRANSPOSE: a million input positions, a 40 x 40 x 40 window each
    OpGraph g;
    const int32_t shape = g.add({5}, ints({1, 139, 139, 139, 4}), 2);
    const int32_t w = g.add({40, 40, 40, 4, 0});
    const int32_t in = g.input({1, 100, 100, 100, 0});
    const int32_t out = g.output({1, 2, 2, 2, 4});
    g.op(141 /* CONV_3D_TRANSPOSE */, {shape, w, in}, {out}, [](flatbuffers::FlatBufferBuilder& b) {
      return std::make_pair(fb::BuiltinOptions_Conv3DOptions, fb::CreateConv3DOptions(b, fb::Padding_VALID, 1, 1, 1).Union());
    });
    expect_runs(g.build(), "CONV_3D_TRANSPOSE");
  }
}

// One int8 pixel per row widened to 55 columns (the fuzzer's kind of shape): TFLite's 10-bit scale,
// 19/1024 of a pixel, puts the last column's lower tap at 54 * 19 / 1024 = 1.002, past the row's one
// pixel, where TFLite reads the next row or past the input. The taps stay in the image, and every column
// is the row's pixel (its four weights sum to 2^20: the integer formula gives the pixel back exactly).
TEST(HostileShapes, Int8ResizeOfOnePixelToFiftyFiveColumnsStaysInTheRow) {
  for (const auto& [align, half] : {std::pair{false, false}, {true, false}, {false, true}}) {
    SCOPED_TRACE(std::string(align ? "align_corners" : half ? "half_pixel_centers" : "plain"));
    OpGraph g;
    const int32_t in = g.quantized({1, 2, 1, 3}, 9, kS8);
    g.inputs.push_back(in);
    const int32_t size = g.add({2}, ints({2, 55}), 2);
    const int32_t out = g.quantized({1, 2, 55, 3}, 9, kS8);
    g.outputs.push_back(out);
    g.op(23 /* RESIZE_BILINEAR */, {in, size}, {out}, [align = align, half = half](flatbuffers::FlatBufferBuilder& b) {
      return std::make_pair(fb::BuiltinOptions_ResizeBilinearOptions, fb::CreateResizeBilinearOptions(b, align, half).Union());
    }, 3);
    auto env = isolated_environment({BUILTIN_PACK_DIR});
    ASSERT_TRUE(env) << env.error();
    auto model = load_model_buffer(g.build(), "resize.tflite");
    ASSERT_TRUE(model) << model.error();
    auto interp = Interpreter::create(env.value(), model.value());
    ASSERT_TRUE(interp) << interp.error();
    Interpreter& it = *interp.value();
    const int8_t pixels[6] = {-128, 5, 127, 90, -7, -1};  // row 0's pixel, then row 1's
    std::memcpy(it.input(0).data, pixels, sizeof pixels);
    Status s = it.invoke();
    ASSERT_TRUE(s) << s.message();
    const auto* got = reinterpret_cast<const int8_t*>(it.output(0).data);
    for (int row = 0; row < 2; ++row) {
      for (int x = 0; x < 55; ++x) {
        for (int c = 0; c < 3; ++c) {
          ASSERT_EQ(got[(row * 55 + x) * 3 + c], pixels[row * 3 + c]) << "row " << row << " column " << x << " channel " << c;
        }
      }
    }
  }
}

// An input of a huge declared dimension: refused at load by the default tensor limit (the machine's
// memory), naming the tensor and the limit. With the limit off the load does not refuse it for that.
TEST(DefaultLimits, AHugeInputIsRefusedByDefaultAndNotWithTheLimitOff) {
  OpGraph g;
  const int32_t in = g.input({1 << 30, 1 << 12});  // 16 TiB of float32
  const int32_t out = g.output({1 << 30, 1 << 12});
  g.op(0 /* ADD */, {in, in}, {out});
  const std::vector<uint8_t> bytes = g.build();
  const LoadLimits defaults;
  EXPECT_EQ(defaults.max_tensor_bytes, machine_memory_bytes());
  EXPECT_EQ(defaults.max_arena_bytes, machine_memory_bytes());
  EXPECT_LT(machine_memory_bytes(), SIZE_MAX);
  const Outcome o = run_in_child(bytes);
  expect_refused(o, {"tensor 0 \"t0\": 17592186044416 bytes, over the tensor limit of " +
                     std::to_string(machine_memory_bytes())});

  LoadLimits off;
  ASSERT_TRUE(parse_byte_limit("none", &off.max_tensor_bytes));
  ASSERT_TRUE(parse_byte_limit("0", &off.max_arena_bytes));
  EXPECT_EQ(off.max_tensor_bytes, SIZE_MAX);
  EXPECT_EQ(off.max_arena_bytes, SIZE_MAX);
  auto model = load_model_buffer(bytes, "huge.tflite", off);
  EXPECT_TRUE(model) << model.error();
}

}  // namespace
}  // namespace baton::test
