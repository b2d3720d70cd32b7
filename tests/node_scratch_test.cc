// ABI 1.14: an op-pack node's scratch lies in the host's arena and lives while the node runs, so the
// scratch of a graph's nodes shares one place instead of one buffer each. Through the builtin pack (its
// FULLY_CONNECTED asks for its GEMM blocks this way); the memory stage alone in arena_planner_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"

namespace baton::test {
namespace {

OptionsFn fully_connected_options() {
  return [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_FullyConnectedOptions,
                          fb::CreateFullyConnectedOptions(fbb, act(0), fb::FullyConnectedOptionsWeightsFormat_DEFAULT,
                                                          false)
                              .Union());
  };
}

// `g` over the builtin pack alone, its two nodes checked: each asks the host for scratch and gets a
// 64-byte-aligned place in the arena, the same place for both (under AddressSanitizer every block has its
// own place and a red zone). Null, with the failure recorded, if it does not load or a node has no place.
std::unique_ptr<Interpreter> two_nodes_sharing_scratch(const OpGraph& g, const std::string& name) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  if (!env) {
    ADD_FAILURE() << env.error();
    return nullptr;
  }
  auto model = load_model_buffer(g.build(), name);
  if (!model) {
    ADD_FAILURE() << model.error();
    return nullptr;
  }
  auto made = Interpreter::create(env.value(), model.value());
  if (!made) {
    ADD_FAILURE() << made.error();
    return nullptr;
  }
  const std::vector<Node>& nodes = made.value()->nodes();
  if (nodes.size() != 2) {
    ADD_FAILURE() << nodes.size() << " nodes";
    return nullptr;
  }
  for (const Node& n : nodes) {
    EXPECT_EQ(n.plugin->name, "builtin");
    EXPECT_GT(n.kernel_scratch_bytes, 0u);
    if (!n.kernel_scratch) {
      ADD_FAILURE() << "a node without scratch";
      return nullptr;
    }
    EXPECT_EQ(reinterpret_cast<uintptr_t>(n.kernel_scratch) % 64, 0u);
  }
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ(nodes[0].kernel_scratch, nodes[1].kernel_scratch);
#endif
  return std::move(made.value());
}

// x [8, 40] -> FULLY_CONNECTED (w1 [24, 40], b1) -> FULLY_CONNECTED (w2 [16, 24], b2) -> y [8, 16]: two
// products, each through the GEMM (8 rows), one after the other.
TEST(NodeScratch, TwoProductsShareOnePlaceInTheArenaAndComputeRight) {
  OpGraph g;
  const int32_t x = g.input({8, 40});
  const int32_t w1 = random_weights(g, {24, 40}, 1), b1 = random_weights(g, {24}, 2);
  const int32_t w2 = random_weights(g, {16, 24}, 3), b2 = random_weights(g, {16}, 4);
  const int32_t mid = g.add({8, 24});
  const int32_t y = g.output({8, 16});
  g.op(9 /* FULLY_CONNECTED */, {x, w1, b1}, {mid}, fully_connected_options());
  g.op(9, {mid, w2, b2}, {y}, fully_connected_options());
  const std::unique_ptr<Interpreter> made = two_nodes_sharing_scratch(g, "two_products.tflite");
  ASSERT_TRUE(made);
  Interpreter& in = *made;
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(in.arena_bytes(), in.naive_bytes());
#endif
  const auto input = random_floats(8 * 40, 5);
  std::memcpy(in.input(0).data, input.data(), input.size());
  ASSERT_TRUE(in.invoke());
  // The same products in double precision, from the model's own constants.
  auto floats = [&](int32_t t) {
    std::vector<float> v(g.tensors[t].data.size() / 4);
    std::memcpy(v.data(), g.tensors[t].data.data(), g.tensors[t].data.size());
    return v;
  };
  auto product = [](const std::vector<float>& a, const std::vector<float>& w, const std::vector<float>& b, int rows,
                    int depth, int units) {
    std::vector<float> out(static_cast<size_t>(rows) * units);
    for (int r = 0; r < rows; ++r) {
      for (int u = 0; u < units; ++u) {
        double sum = b[u];
        for (int k = 0; k < depth; ++k) sum += static_cast<double>(a[r * depth + k]) * w[u * depth + k];
        out[r * units + u] = static_cast<float>(sum);
      }
    }
    return out;
  };
  std::vector<float> x_values(8 * 40);
  std::memcpy(x_values.data(), input.data(), input.size());
  const auto want = product(product(x_values, floats(w1), floats(b1), 8, 40, 24), floats(w2), floats(b2), 8, 24, 16);
  const float* got = reinterpret_cast<const float*>(in.output(0).data);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f) << i;
  // A second invoke computes the same from the same place.
  std::vector<float> first(got, got + want.size());
  ASSERT_TRUE(in.invoke());
  EXPECT_EQ(std::vector<float>(got, got + want.size()), first);
}

// The 8-bit GEMM's blocks too: x [6, 72] uint8 -> two FULLY_CONNECTEDs (uint8 weights [20, 72] and
// [12, 72], int32 bias) -> y1 [6, 20], y2 [6, 12]. Both nodes' scratch lies at one place in the arena, and
// each output is TFLite's uint8 product worked here in double: sum((x - 128)(w - wz)) * sx * sw + bias,
// over the output scale, plus its zero point, rounded (TFLite's fixed-point multiplier can move a tie by
// one code).
TEST(NodeScratch, EightBitProductsShareOnePlaceInTheArenaAndComputeRight) {
  OpGraph g;
  uint32_t state = 99;
  auto bytes = [&](size_t n) {
    std::vector<uint8_t> v(n);
    for (uint8_t& b : v) b = static_cast<uint8_t>((state = state * 1103515245u + 12345u) >> 24);
    return v;
  };
  auto bias = [&](int n) {
    std::vector<uint8_t> v(static_cast<size_t>(n) * 4);
    for (int i = 0; i < n; ++i) {
      const int32_t b = static_cast<int32_t>((state = state * 1103515245u + 12345u) >> 20) - 2048;
      std::memcpy(v.data() + 4 * i, &b, 4);
    }
    return v;
  };
  const int32_t x = g.quantized({6, 72}, 3, {{0.05f}, {128}, 0});
  g.inputs.push_back(x);
  const std::vector<uint8_t> w1 = bytes(20 * 72), w2 = bytes(12 * 72), b1 = bias(20), b2 = bias(12);
  const int32_t w1t = g.quantized({20, 72}, 3, {{0.01f}, {120}, 0}, w1);
  const int32_t b1t = g.quantized({20}, 2, {{0.0005f}, {0}, 0}, b1);
  const int32_t w2t = g.quantized({12, 72}, 3, {{0.02f}, {131}, 0}, w2);
  const int32_t b2t = g.quantized({12}, 2, {{0.001f}, {0}, 0}, b2);
  const int32_t y1 = g.quantized({6, 20}, 3, {{0.25f}, {128}, 0});
  const int32_t y2 = g.quantized({6, 12}, 3, {{0.5f}, {100}, 0});
  g.outputs = {y1, y2};
  g.op(9 /* FULLY_CONNECTED */, {x, w1t, b1t}, {y1});
  g.op(9, {x, w2t, b2t}, {y2});
  const std::unique_ptr<Interpreter> made = two_nodes_sharing_scratch(g, "two_uint8_products.tflite");
  ASSERT_TRUE(made);
  Interpreter& in = *made;
  const std::vector<uint8_t> input = bytes(6 * 72);
  std::memcpy(in.input(0).data, input.data(), input.size());
  ASSERT_TRUE(in.invoke());
  auto check = [&](int output, const std::vector<uint8_t>& w, const std::vector<uint8_t>& b, int units, double sw,
                   int wz, double sy, int yz) {
    const uint8_t* got = static_cast<const uint8_t*>(in.output(output).data);
    for (int r = 0; r < 6; ++r) {
      for (int u = 0; u < units; ++u) {
        int64_t acc = 0;
        for (int k = 0; k < 72; ++k) acc += (input[r * 72 + k] - 128) * (w[u * 72 + k] - wz);
        int32_t bias_value;
        std::memcpy(&bias_value, b.data() + 4 * u, 4);
        const double real = (static_cast<double>(acc) + bias_value) * 0.05 * sw / sy + yz;
        const double want = std::min(255.0, std::max(0.0, std::round(real)));
        EXPECT_NEAR(got[r * units + u], want, 1.0) << "output " << output << " row " << r << " unit " << u;
      }
    }
  };
  check(0, w1, b1, 20, 0.01, 120, 0.25, 128);
  check(1, w2, b2, 12, 0.02, 131, 0.5, 100);
}

// Outside a prepare of the memory plan (a node prepared at invoke or at load) the host says it cannot.
TEST(NodeScratch, ARequestOutsideThePlanIsUnsupported) {
  Node node;
  const baton_host_api* api = host_api_table();
  ASSERT_TRUE(BATON_STRUCT_HAS(api, baton_host_api, node_scratch));
  const auto* handle = reinterpret_cast<const baton_node*>(&node);
  EXPECT_EQ(api->node_request_scratch(handle, 64, nullptr), BATON_UNSUPPORTED);
  EXPECT_EQ(node.kernel_scratch_bytes, 0u);
  node.planning = true;
  EXPECT_EQ(api->node_request_scratch(handle, 64, nullptr), BATON_OK);
  EXPECT_EQ(node.kernel_scratch_bytes, 64u);
  EXPECT_EQ(api->node_scratch(handle), nullptr);  // placed by the memory stage, not yet
}

}  // namespace
}  // namespace baton::test
