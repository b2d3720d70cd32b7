// The int64 arrays a node's builtin options borrow from the model (STABLEHLO_PAD's paddings and
// STABLEHLO_REDUCE_WINDOW's window, ABI 1.9; STABLEHLO_GATHER's and STABLEHLO_SCATTER's dimensions, ABI
// 1.12), which cannot cross into an isolated plugin's process as pointers: they travel after the options,
// one after another, each element as two int32 words, and the child points the options at its copy.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "baton/plugin_api.h"

namespace baton::isolation {

// The options' int64 arrays in order: where each pointer lies and its count.
inline std::vector<std::pair<const int64_t**, int32_t>> int64_option_arrays(baton_builtin_options& o) {
  if (o.kind == BATON_OPTIONS_2_KIND + 10) {  // StablehloPadOptions
    auto& p = o.u.stablehlo_pad;
    return {{&p.edge_padding_low, p.edge_padding_low_count}, {&p.edge_padding_high, p.edge_padding_high_count},
            {&p.interior_padding, p.interior_padding_count}};
  }
  if (o.kind == BATON_OPTIONS_2_KIND + 13) {  // StablehloReduceWindowOptions
    auto& p = o.u.stablehlo_reduce_window;
    return {{&p.window_dimensions, p.window_dimensions_count}, {&p.window_strides, p.window_strides_count},
            {&p.base_dilations, p.base_dilations_count}, {&p.window_dilations, p.window_dilations_count},
            {&p.padding, p.padding_count}};
  }
  if (o.kind == BATON_OPTIONS_2_KIND + 7) {  // StablehloScatterOptions
    auto& p = o.u.stablehlo_scatter;
    return {{&p.update_window_dims, p.update_window_dims_count}, {&p.inserted_window_dims, p.inserted_window_dims_count},
            {&p.scatter_dims_to_operand_dims, p.scatter_dims_to_operand_dims_count}};
  }
  if (o.kind == BATON_OPTIONS_2_KIND + 16) {  // StablehloGatherOptions
    auto& p = o.u.stablehlo_gather;
    return {{&p.offset_dims, p.offset_dims_count}, {&p.collapsed_slice_dims, p.collapsed_slice_dims_count},
            {&p.start_index_map, p.start_index_map_count}, {&p.slice_sizes, p.slice_sizes_count}};
  }
  return {};
}

// Parent side: the arrays' words.
inline std::vector<int32_t> pack_int64_option_arrays(const baton_builtin_options& options) {
  baton_builtin_options o = options;
  std::vector<int32_t> words;
  for (auto [where, count] : int64_option_arrays(o)) {
    if (count <= 0 || !*where) continue;
    const size_t at = words.size();
    words.resize(at + 2 * static_cast<size_t>(count));
    std::memcpy(words.data() + at, *where, static_cast<size_t>(count) * sizeof(int64_t));
  }
  return words;
}

// Child side: points the options' arrays into `words` (kept alive by the caller, 8-byte aligned), or, when
// the words do not hold what the counts say, empties them.
inline void unpack_int64_option_arrays(baton_builtin_options& o, const std::vector<int32_t>& words) {
  auto arrays = int64_option_arrays(o);
  size_t total = 0;
  for (auto [where, count] : arrays) total += count > 0 ? 2 * static_cast<size_t>(count) : 0;
  size_t at = 0;
  for (auto [where, count] : arrays) {
    if (total != words.size() || count <= 0) {
      *where = nullptr;
      continue;
    }
    *where = reinterpret_cast<const int64_t*>(words.data() + at);
    at += 2 * static_cast<size_t>(count);
  }
  if (total != words.size()) o.kind = 0;  // malformed: read as absent options, which the kernel refuses
}

}  // namespace baton::isolation
