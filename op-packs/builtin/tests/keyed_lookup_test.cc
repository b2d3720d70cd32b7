// The legacy lookup ops' kernels on small tables: HASHTABLE_LOOKUP's search, EMBEDDING_LOOKUP_SPARSE's
// combination of each run of lookups and its refusal of ids out of range, and the fingerprint
// LSH_PROJECTION hashes with where FarmHash defines it by a constant.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/fingerprint.h"
#include "kernels/keyed_lookup.h"

namespace baton::builtin::testing {
namespace {

TEST(Fingerprint, OfNothingIsFarmHashsThirdPrime) { EXPECT_EQ(fingerprint64(nullptr, 0), 0x9ae16a3b2f90404full); }

TEST(HashtableLookup, FindsKeysAsTflitesBsearchDoes) {
  const std::vector<int32_t> keys = {-7, 0, 3, 12};
  const std::vector<float> values = {1, 2, 3, 4};
  const std::vector<int32_t> lookups = {3, 4, -7, 12, -8};
  std::vector<float> out(5);
  std::vector<uint8_t> hits(5);
  hashtable_lookup(lookups.data(), 5, keys.data(), 4, reinterpret_cast<const uint8_t*>(values.data()), 4,
                   reinterpret_cast<uint8_t*>(out.data()), hits.data());
  EXPECT_EQ(out, (std::vector<float>{3, 0, 1, 4, 0}));
  EXPECT_EQ(hits, (std::vector<uint8_t>{1, 0, 1, 1, 0}));
}

TEST(EmbeddingLookupSparse, CombinesEachRunOfLookupsIntoOneRow) {
  const std::vector<float> params = {1, 10, 2, 20, 3, 30};  // [3, 2]
  const std::vector<int32_t> ids = {0, 2, 1};
  const std::vector<int32_t> indices = {0, 0, 0, 1, 2, 0};  // rows 0, 0, 2 of a [3, 2] sparse tensor
  const std::vector<int32_t> dense_shape = {3, 2};
  const std::vector<float> weights = {1, 3, 2};
  std::vector<float> out(6, -1.0f);
  EXPECT_EQ(embedding_lookup_sparse(ids.data(), indices.data(), 3, 2, dense_shape.data(), weights.data(),
                                    params.data(), 3, 2, Combiner::mean, out.data(), 3),
            "");
  EXPECT_EQ(out, (std::vector<float>{2.5f, 25, 0, 0, 2, 20}));
  const std::vector<int32_t> bad_ids = {0, 3, 1};
  EXPECT_NE(embedding_lookup_sparse(bad_ids.data(), indices.data(), 3, 2, dense_shape.data(), weights.data(),
                                    params.data(), 3, 2, Combiner::sum, out.data(), 3)
                .find("id 3"),
            std::string::npos);
}

}  // namespace
}  // namespace baton::builtin::testing
