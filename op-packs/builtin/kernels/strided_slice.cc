#include "kernels/strided_slice.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/element_copy.h"

namespace baton::builtin {

std::string plan_strided_slice(const int32_t* in_dims, int rank, const StridedSliceSpec& spec,
                               StridedSlicePlan& plan) {
  if (rank > kMaxSliceRank) return "input rank " + std::to_string(rank) + " exceeds " + std::to_string(kMaxSliceRank);
  const int sparse_count = static_cast<int>(spec.begin.size());
  if (sparse_count > 31) return "too many slice entries";
  plan = StridedSlicePlan{};
  plan.rank = rank;
  for (int d = 0; d < rank; ++d) plan.in_dims[d] = in_dims[d];

  // Without an ellipsis the spec behaves as if one followed its last entry.
  int32_t ellipsis_mask = spec.ellipsis_mask & ((1 << sparse_count) - 1);
  int sparse_dims = sparse_count;
  if (ellipsis_mask == 0) {
    ellipsis_mask = 1 << sparse_count;
    ++sparse_dims;
  } else if ((ellipsis_mask & (ellipsis_mask - 1)) != 0) {
    return "more than one ellipsis in ellipsis_mask";
  }
  int new_axes_after_ellipsis = 0;
  bool after_ellipsis = false;
  for (int i = 0; i < sparse_count; ++i) {
    if ((ellipsis_mask >> i) & 1) after_ellipsis = true;
    else if (after_ellipsis && ((spec.new_axis_mask >> i) & 1)) ++new_axes_after_ellipsis;
  }

  int full = 0;
  auto full_dimension = [&](int d) {
    plan.start[d] = 0;
    plan.stride[d] = 1;
    plan.size[d] = plan.in_dims[d];
    plan.out_shape.push_back(static_cast<int32_t>(plan.in_dims[d]));
  };
  for (int i = 0; i < sparse_dims; ++i) {
    const int32_t bit = 1 << i;
    if (ellipsis_mask & bit) {
      const int next = std::min(rank - (sparse_dims - i) + 1 + new_axes_after_ellipsis, rank);
      for (; full < next; ++full) full_dimension(full);
      continue;
    }
    if (spec.new_axis_mask & bit) {
      plan.out_shape.push_back(1);
      continue;
    }
    if (full >= rank) return "the slice has more entries than the input has dimensions (" + std::to_string(rank) + ")";
    const int64_t dim = plan.in_dims[full];
    const int64_t stride = spec.strides[i];
    if (stride == 0) return "stride " + std::to_string(i) + " is 0";
    int64_t begin = spec.begin[i];
    int64_t end = spec.offset ? spec.begin[i] + spec.end[i] : spec.end[i];
    if (spec.shrink_axis_mask & bit) {
      if (begin < 0) begin += dim;
      if (begin < 0 || begin >= dim) {
        return "index " + std::to_string(spec.begin[i]) + " out of range for dimension " + std::to_string(full) +
               " of size " + std::to_string(dim);
      }
      plan.start[full] = begin;
      plan.stride[full] = 1;
      plan.size[full] = 1;
      ++full;
      continue;
    }
    auto canonical = [&](int64_t x, bool masked, bool is_begin) -> int64_t {
      if (masked) return stride > 0 ? (is_begin ? 0 : dim) : (is_begin ? dim - 1 : -1);
      if (x < 0) x += dim;
      return stride > 0 ? std::clamp<int64_t>(x, 0, dim) : std::clamp<int64_t>(x, -1, dim - 1);
    };
    begin = canonical(begin, spec.begin_mask & bit, true);
    end = canonical(end, spec.end_mask & bit, false);
    int64_t size = 0;
    if (stride > 0 && end > begin) size = (end - begin + stride - 1) / stride;
    if (stride < 0 && begin > end) size = (begin - end + (-stride) - 1) / (-stride);
    plan.start[full] = begin;
    plan.stride[full] = stride;
    plan.size[full] = size;
    plan.out_shape.push_back(static_cast<int32_t>(size));
    ++full;
  }
  for (; full < rank; ++full) full_dimension(full);
  return {};
}

void strided_slice(const StridedSlicePlan& plan, const void* in, void* out, size_t element_size) {
  if (plan.rank == 0) {
    std::memcpy(out, in, element_size);
    return;
  }
  int64_t count = 1;
  for (int d = 0; d < plan.rank; ++d) count *= plan.size[d];
  if (count == 0) return;
  // Trailing dimensions taken whole are one contiguous block in both tensors (a pixel's channels when a
  // detector's space-to-depth slice steps over rows and columns): they are copied as one block of `b`
  // elements, so the loops below run over the remaining dimensions only.
  int rank = plan.rank;
  int64_t b = 1;
  while (rank > 1 && plan.start[rank - 1] == 0 && plan.stride[rank - 1] == 1 &&
         plan.size[rank - 1] == plan.in_dims[rank - 1]) {
    b *= plan.in_dims[rank - 1];
    --rank;
  }
  int64_t in_strides[kMaxSliceRank] = {};  // in blocks
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    in_strides[d] = s;
    s *= plan.in_dims[d];
  }
  int64_t step[kMaxSliceRank] = {};  // input offset change per output step of each dimension
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) {
    step[d] = plan.stride[d] * in_strides[d];
    offset += plan.start[d] * in_strides[d];
  }
  const int last = rank - 1;
  const int64_t n = plan.size[last];
  int64_t rows = 1;
  for (int d = 0; d < last; ++d) rows *= plan.size[d];
  auto walk = [&](auto copy_row) {
    int64_t index[kMaxSliceRank] = {};
    for (int64_t r = 0; r < rows; ++r) {
      copy_row(r * n, offset);
      for (int d = last - 1; d >= 0; --d) {
        offset += step[d];
        if (++index[d] < plan.size[d]) break;
        offset -= step[d] * plan.size[d];
        index[d] = 0;
      }
    }
  };
  with_element_type(element_size, [&](auto zero) {
    using T = decltype(zero);
    const T* src = static_cast<const T*>(in);
    T* dst = static_cast<T*>(out);
    if (b == 1) {
      walk([&](int64_t o, int64_t at) {
        const T* row = src + at;
        for (int64_t j = 0; j < n; ++j) dst[o + j] = row[j * step[last]];
      });
    } else if (step[last] == 1) {
      walk([&](int64_t o, int64_t at) { std::memcpy(dst + o * b, src + at * b, sizeof(T) * n * b); });  // one run
    } else {
      // Blocks stepped over: a block of 2 to 4 elements (an image's channels) is copied with its size known
      // to the compiler, as a few moves, not a loop.
      auto blocks = [&](auto size) {
        constexpr int64_t kSize = decltype(size)::value;  // 0: b at run time
        const int64_t bb = kSize > 0 ? kSize : b;
        walk([&](int64_t o, int64_t at) {
          T* to = dst + o * bb;
          const T* from = src + at * bb;
          const int64_t from_step = step[last] * bb;
          for (int64_t j = 0; j < n; ++j, to += bb, from += from_step) {
            for (int64_t e = 0; e < bb; ++e) to[e] = from[e];
          }
        });
      };
      switch (b) {
        case 2: blocks(std::integral_constant<int64_t, 2>{}); break;
        case 3: blocks(std::integral_constant<int64_t, 3>{}); break;
        case 4: blocks(std::integral_constant<int64_t, 4>{}); break;
        default: blocks(std::integral_constant<int64_t, 0>{}); break;
      }
    }
  });
}

}  // namespace baton::builtin
