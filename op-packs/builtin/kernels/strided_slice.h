// STRIDED_SLICE with TensorFlow's semantics: begin/end/strides given for a "sparse" spec that may hold
// one ellipsis (standing for as many full dimensions as needed), new axes (size-1 output dimensions)
// and shrunk axes (one index, dimension dropped). Planning turns that into a dense spec with one
// (start, stride, size) per input dimension and the output shape; the copy then ignores the masks.
#ifndef BATON_BUILTIN_KERNELS_STRIDED_SLICE_H
#define BATON_BUILTIN_KERNELS_STRIDED_SLICE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace baton::builtin {

inline constexpr int kMaxSliceRank = 8;

struct StridedSliceSpec {
  std::vector<int64_t> begin, end, strides;  // the same length
  int32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
  bool offset = false;  // end is relative to begin
};

struct StridedSlicePlan {
  int rank = 0;  // the input's
  int64_t in_dims[kMaxSliceRank] = {};
  int64_t start[kMaxSliceRank] = {};
  int64_t stride[kMaxSliceRank] = {};
  int64_t size[kMaxSliceRank] = {};
  std::vector<int32_t> out_shape;
};

// Returns an empty string on success, else what is wrong with the spec.
std::string plan_strided_slice(const int32_t* in_dims, int rank, const StridedSliceSpec& spec,
                               StridedSlicePlan& plan);

void strided_slice(const StridedSlicePlan& plan, const void* in, void* out, size_t element_size);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_STRIDED_SLICE_H
