// ABI 1.15: a kernel that keeps a packed copy of its weights tells the host (tensor_release_constant), and
// the host gives the weights' pages in the model file back to the system, so a model's weights count once
// in the process's memory instead of as the file's pages beside the copy. Pages are read through
// /proc/self/pagemap (bit 63: the page is mapped into this process now).
#include <gtest/gtest.h>

#include <cstring>

#include "interpreter.h"
#include "op_graph.h"
#include "page_residency.h"
#include "test_support.h"

namespace baton::test {
namespace {

// x [4, 256] uint8 -> FULLY_CONNECTED (w [128, 256] uint8, 32 KiB; b [128] int32) -> y [4, 128] uint8: the
// builtin pack packs w for its 8-bit GEMM in prepare and reads only the packed copy at invoke.
OpGraph uint8_fully_connected() {
  OpGraph g;
  std::vector<uint8_t> w(128 * 256), b(128 * 4, 0);
  uint32_t state = 12345;
  for (uint8_t& v : w) v = static_cast<uint8_t>((state = state * 1103515245u + 12345u) >> 24);
  const int32_t x = g.quantized({4, 256}, 3, {{0.05f}, {128}, 0});
  g.inputs.push_back(x);
  const int32_t wt = g.quantized({128, 256}, 3, {{0.01f}, {120}, 0}, w);
  const int32_t bt = g.quantized({128}, 2, {{0.0005f}, {0}, 0}, b);
  const int32_t y = g.quantized({4, 128}, 3, {{0.5f}, {128}, 0});
  g.outputs.push_back(y);
  g.op(9 /* FULLY_CONNECTED */, {x, wt, bt}, {y});
  return g;
}

std::vector<uint8_t> run(Interpreter& in) {
  std::vector<uint8_t> x(in.input(0).bytes);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 7);
  std::memcpy(in.input(0).data, x.data(), x.size());
  EXPECT_TRUE(in.invoke());
  const uint8_t* y = static_cast<const uint8_t*>(in.output(0).data);
  return {y, y + in.output(0).bytes};
}

TEST(ConstantPages, PackedWeightsLeaveTheProcessAndStayReadable) {
  const std::vector<uint8_t> bytes = uint8_fully_connected().build();
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto file_model = load_through_a_file(bytes, "baton-constant-pages");
  ASSERT_TRUE(file_model) << file_model.error();
  const TensorInfo& w = file_model.value()->main().tensors[1];
  ASSERT_TRUE(w.data_in_mapped_file);
  ASSERT_GE(whole_pages(w.data), 4);
  const uint32_t sum = touch(w.data);
  if (present_pages(w.data) < 0) GTEST_SKIP() << "/proc/self/pagemap cannot be read here";
  EXPECT_EQ(present_pages(w.data), whole_pages(w.data));  // read just now: the check sees mapped pages

  auto made = Interpreter::create(env.value(), file_model.value());
  ASSERT_TRUE(made) << made.error();
  ASSERT_EQ(made.value()->nodes()[0].plugin->name, "builtin");
  EXPECT_EQ(present_pages(w.data), 0) << "the builtin pack packed the weights and released them";
  const std::vector<uint8_t> from_file = run(*made.value());
  EXPECT_EQ(present_pages(w.data), 0) << "invoke reads only the packed copy";
  EXPECT_EQ(touch(w.data), sum) << "the released pages read again from the file";

  // A model in memory: its constants are the host's own copy, never released (dropping such pages would
  // zero them). The same weights give the same outputs.
  auto buffer_model = load_model_buffer(bytes, "in-memory.tflite");
  ASSERT_TRUE(buffer_model) << buffer_model.error();
  const TensorInfo& w2 = buffer_model.value()->main().tensors[1];
  EXPECT_FALSE(w2.data_in_mapped_file);
  auto made2 = Interpreter::create(env.value(), buffer_model.value());
  ASSERT_TRUE(made2) << made2.error();
  EXPECT_EQ(present_pages(w2.data), whole_pages(w2.data));
  EXPECT_EQ(touch(w2.data), sum);
  EXPECT_EQ(run(*made2.value()), from_file);
}

}  // namespace
}  // namespace baton::test
