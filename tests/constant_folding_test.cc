// Load-time constant folding and densifying: nodes whose inputs are all constant run once at load and
// cost nothing per invoke; sparse constants expand to the dense values worked out by hand.
#include <gtest/gtest.h>

#include "baton/c_api.h"
#include "folder.h"

#include "interpreter.h"
#include "sparse.h"
#include "test_support.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

TEST(ConstantFolding, NodeWithConstantInputsRunsOnceAtLoad) {
  TempDir dir;
  dir.add_plugin("testpack");
  auto env = isolated_environment({dir.path()});
  ASSERT_TRUE(env) << env.error();
  // k = ADD(c1, c2) has constant inputs: folded. out = ADD(x, k) depends on the input: runs.
  TinyModel m;
  m.tensors = {{{3}, 0, {}, "x"},
               {{3}, 0, floats({1, 2, 3}), "c1"},
               {{3}, 0, floats({10, 20, 30}), "c2"},
               {{3}, 0, {}, "k"},
               {{3}, 0, {}, "out"}};
  m.ops = {{0, "", 1, {1, 2}, {3}}, {0, "", 1, {0, 3}, {4}}};
  m.inputs = {0};
  m.outputs = {4};
  auto model = load_model_buffer(m.build(), "fold.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  EXPECT_EQ(in.folded_nodes(), 1u);
  EXPECT_EQ(in.folded_bytes(), 12u);
  EXPECT_EQ(in.placement(0).kind, "folded");
  EXPECT_EQ(in.placement(1).kind, "op-pack");
  // Only x and out need arena memory now.
  EXPECT_EQ(in.naive_bytes(), 128u);
  const float x[3] = {0.5f, 0.25f, -100};
  std::memcpy(in.input(0).data, x, sizeof x);
  ASSERT_TRUE(in.invoke());
  float out[3];
  std::memcpy(out, in.output(0).data, sizeof out);
  EXPECT_EQ(std::vector<float>(out, out + 3), (std::vector<float>{11.5f, 22.25f, -67}));
}

TEST(ConstantFolding, CustomOpsAreNotFolded) {
  TempDir dir;
  dir.add_plugin("testpack");
  auto env = isolated_environment({dir.path()});
  ASSERT_TRUE(env) << env.error();
  TinyModel m;
  m.tensors = {{{2}, 0, floats({1, 2}), "c"}, {{2}, 0, {}, "t"}, {{2}, 0, {}, "x"}, {{2}, 0, {}, "out"}};
  m.ops = {{32, "TimesTwo", 1, {0}, {1}}, {0, "", 1, {2, 1}, {3}}};
  m.inputs = {2};
  m.outputs = {3};
  auto model = load_model_buffer(m.build(), "custom.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  EXPECT_EQ(interp.value()->folded_nodes(), 0u);
}

TEST(ConstantFolding, FoldableNodesFollowConstantsThroughTheGraph) {
  // c1 -> A -> k1 -> B -> k2; x + k2 -> out. A and B fold (B's input becomes constant once A folds); the
  // last ADD reads the input x; a custom op never folds.
  TinyModel m;
  m.tensors = {{{2}, 0, {}, "x"},        {{2}, 0, floats({1, 2}), "c1"}, {{2}, 0, floats({3, 4}), "c2"},
               {{2}, 0, {}, "k1"},       {{2}, 0, {}, "k2"},             {{2}, 0, {}, "out"},
               {{2}, 0, {}, "custom_out"}};
  m.ops = {{0, "", 1, {1, 2}, {3}}, {0, "", 1, {3, 3}, {4}}, {0, "", 1, {0, 4}, {5}}, {32, "TimesTwo", 1, {1}, {6}}};
  m.inputs = {0};
  m.outputs = {5, 6};
  auto model = load_model_buffer(m.build(), "f.tflite");
  ASSERT_TRUE(model) << model.error();
  EXPECT_EQ(foldable_nodes(model.value()->main()), (std::vector<bool>{true, true, false, false}));
}

TensorInfo sparse_2x3(std::vector<float>& values) {
  // Dense [[0, 0, a], [b, c, 0]]: dimension 0 dense (2 rows), dimension 1 CSR. Row 0 has one value at
  // column 2, row 1 two values at columns 0 and 1: segments {0, 1, 3}, indices {2, 0, 1}.
  TensorInfo t;
  t.name = "w";
  t.type = BATON_TYPE_FLOAT32;
  t.shape = {2, 3};
  t.is_constant = true;
  t.data = {reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(float)};
  auto s = std::make_shared<Sparsity>();
  s->traversal_order = {0, 1};
  s->dims.resize(2);
  s->dims[0].dense_size = 2;
  s->dims[1].sparse = true;
  s->dims[1].segments = {0, 1, 3};
  s->dims[1].indices = {2, 0, 1};
  t.sparsity = s;
  return t;
}

std::vector<float> as_floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

TEST(Densify, CsrRowsExpandToTheDenseMatrix) {
  std::vector<float> values = {7, 8, 9};
  TensorInfo t = sparse_2x3(values);
  std::vector<uint8_t> out;
  ASSERT_TRUE(densify(t, out));
  EXPECT_EQ(as_floats(out), (std::vector<float>{0, 0, 7, 8, 9, 0}));
}

// What the C API gives applications (the Python module's sparsity_parameters) of a sparse tensor: the
// model's layout as it is, before densifying.
TEST(Densify, TheCApiGivesTheModelsSparsity) {
  std::vector<float> values = {7, 8, 9};
  const TensorInfo info = sparse_2x3(values);
  Tensor t;
  t.info = &info;
  const auto* handle = reinterpret_cast<const baton_tensor*>(&t);
  baton_sparsity s{};
  s.struct_size = sizeof s;
  ASSERT_EQ(baton_tensor_get_sparsity(handle, &s), 1);
  EXPECT_EQ(std::vector<int32_t>(s.traversal_order, s.traversal_order + s.traversal_order_count), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(s.block_map_count, 0);
  ASSERT_EQ(s.dimension_count, 2);
  baton_sparsity_dimension d{};
  d.struct_size = sizeof d;
  ASSERT_EQ(baton_tensor_get_sparsity_dimension(handle, 0, &d), 1);
  EXPECT_EQ(d.sparse, 0);
  EXPECT_EQ(d.dense_size, 2);
  ASSERT_EQ(baton_tensor_get_sparsity_dimension(handle, 1, &d), 1);
  EXPECT_EQ(d.sparse, 1);
  EXPECT_EQ(std::vector<int32_t>(d.segments, d.segments + d.segment_count), (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(std::vector<int32_t>(d.indices, d.indices + d.index_count), (std::vector<int32_t>{2, 0, 1}));
  EXPECT_EQ(baton_tensor_get_sparsity_dimension(handle, 2, &d), 0);
  // A dense tensor: 0, and `out` untouched.
  const TensorInfo dense;
  Tensor plain;
  plain.info = &dense;
  s.dimension_count = 42;
  EXPECT_EQ(baton_tensor_get_sparsity(reinterpret_cast<const baton_tensor*>(&plain), &s), 0);
  EXPECT_EQ(s.dimension_count, 42);
}

TEST(Densify, TraversalOrderColumnMajor) {
  // Traversal (1, 0): the outer dense level walks the 3 columns, the inner CSR level the rows. Column 0
  // holds row 1, column 1 nothing, column 2 rows 0 and 1: segments {0, 1, 1, 3}, indices {1, 0, 1}.
  std::vector<float> values = {5, 6, 7};
  TensorInfo t = sparse_2x3(values);
  auto s = std::make_shared<Sparsity>(*t.sparsity);
  s->traversal_order = {1, 0};
  s->dims[0].dense_size = 3;
  s->dims[1].segments = {0, 1, 1, 3};
  s->dims[1].indices = {1, 0, 1};
  t.sparsity = s;
  std::vector<uint8_t> out;
  ASSERT_TRUE(densify(t, out));
  EXPECT_EQ(as_floats(out), (std::vector<float>{0, 0, 6, 5, 0, 7}));
}

TEST(Densify, MalformedSparseDataIsAnError) {
  std::vector<float> values = {7, 8, 9};
  std::vector<uint8_t> out;
  {
    TensorInfo t = sparse_2x3(values);
    auto s = std::make_shared<Sparsity>(*t.sparsity);
    s->dims[1].indices = {2, 0, 3};  // column 3 of 3
    t.sparsity = s;
    auto st = densify(t, out);
    ASSERT_FALSE(st);
    EXPECT_NE(st.message().find("sparse index 3 is outside dimension 1 of size 3"), std::string::npos) << st.message();
  }
  {
    TensorInfo t = sparse_2x3(values);
    auto s = std::make_shared<Sparsity>(*t.sparsity);
    s->dims[1].segments = {0, 1, 9};
    t.sparsity = s;
    EXPECT_FALSE(densify(t, out));
  }
  {
    std::vector<float> two = {7, 8};
    TensorInfo t = sparse_2x3(two);
    auto st = densify(t, out);
    ASSERT_FALSE(st);
    EXPECT_NE(st.message().find("past the 2 stored"), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace baton::test
