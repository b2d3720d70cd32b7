// The resolve stage alone (resolver.h): each node gets the first op pack, in the order given, that
// declares its op and version; quarantined packs are skipped; a node none declares gets a reason naming
// the op, the version and every loaded range; nodes that do not run or that the runtime runs get nothing.
#include <gtest/gtest.h>

#include "baton/tflite_ops.h"
#include "resolver.h"

namespace baton {
namespace {

OpDecl decl(int32_t code, int32_t min_version, int32_t max_version) {
  OpDecl d;
  d.code = code;
  d.min_version = min_version;
  d.max_version = max_version;
  d.has_kernel = true;
  return d;
}

TEST(Resolve, FirstDeclaringPackWinsQuarantineSkipsAndReasonsNameTheRanges) {
  LoadedPlugin a, b;
  a.name = "pack-a";
  a.ops = {decl(BATON_OP_ADD, 1, 2)};
  b.name = "pack-b";
  b.ops = {decl(BATON_OP_ADD, 1, 3), decl(BATON_OP_MUL, 1, 1)};
  std::vector<NodeInfo> infos(5);
  const std::pair<int32_t, int32_t> ops[] = {
      {BATON_OP_ADD, 2}, {BATON_OP_ADD, 3}, {BATON_OP_ADD, 4}, {BATON_OP_MUL, 1}, {BATON_OP_WHILE, 1}};
  std::vector<Node> nodes(5);
  for (size_t i = 0; i < 5; ++i) {
    infos[i].index = static_cast<int32_t>(i);
    infos[i].op_code = ops[i].first;
    infos[i].version = ops[i].second;
    nodes[i].info = &infos[i];
    nodes[i].runtime = runtime_op(ops[i].first);
  }
  LoadedPlugin* packs[] = {&a, &b};

  std::vector<NodeKernel> k = resolve_kernels(nodes, packs, {});
  ASSERT_EQ(k.size(), 5u);
  EXPECT_EQ(k[0].plugin, &a);  // both declare ADD v2: the first in order wins
  EXPECT_EQ(k[0].kernel, &a.ops[0].kernel);
  EXPECT_EQ(k[1].plugin, &b);  // only pack-b reaches v3
  EXPECT_EQ(k[2].plugin, nullptr);
  EXPECT_EQ(k[2].unresolved,
            "no op pack supports op ADD version 4 (loaded: pack-a has ADD v1-2, pack-b has ADD v1-3)");
  EXPECT_EQ(k[3].plugin, &b);
  EXPECT_EQ(k[4].plugin, nullptr);  // WHILE: the runtime's own
  EXPECT_EQ(k[4].unresolved, "");

  // pack-a quarantined: ADD v2 goes to pack-b; pack-b quarantined: MUL has no pack, and the reason says why.
  k = resolve_kernels(nodes, packs, {{"pack-a", "crashed twice"}});
  EXPECT_EQ(k[0].plugin, &b);
  k = resolve_kernels(nodes, packs, {{"pack-b", "crashed twice"}});
  EXPECT_EQ(k[3].plugin, nullptr);
  EXPECT_EQ(k[3].unresolved, "no op pack supports op MUL version 1 (loaded: pack-b has MUL v1); pack-b is quarantined");

  // A dropped node is not resolved at all.
  nodes[0].dropped = true;
  k = resolve_kernels(nodes, packs, {});
  EXPECT_EQ(k[0].plugin, nullptr);
  EXPECT_EQ(k[0].unresolved, "");
}

}  // namespace
}  // namespace baton
