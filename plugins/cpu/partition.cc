#include "partition.h"

#include <optional>
#include <unordered_map>

#include "baton/plugin_kit.hpp"
#include "node_reading.h"
#include "patterns.h"

namespace baton::cpu {

using kit::refuse;

// The host's pool for this many threads: the one XNNPACK's delegate runs on too, so the two never keep
// workers spinning on the same cores.
void PluginState::start_pool() {
  if (pool_started) return;
  if (!pool.start(api, host, threads)) kit::refuse("cannot start a pool of " + std::to_string(threads) + " threads");
  pool_started = true;
}

void Partition::build(const baton_partition* partition) {
  plugin_.start_pool();
  const baton_host_api* api = plugin_.api;
  std::unordered_map<int32_t, baton_tensor*> outputs;  // partition outputs by tensor index
  for (int32_t i = 0; i < api->partition_output_count(partition); ++i) {
    baton_tensor* t = api->partition_output(partition, i);
    outputs[api->tensor_index(t)] = t;
  }
  std::unordered_map<int32_t, baton_tensor*> inputs;
  for (int32_t i = 0; i < api->partition_input_count(partition); ++i) {
    baton_tensor* t = api->partition_input(partition, i);
    inputs[api->tensor_index(t)] = t;
  }
  const int32_t count = api->partition_node_count(partition);
  std::vector<bool> used(static_cast<size_t>(count), false);
  // The weights a step packed into memory of its own (1x1 convolutions, FULLY_CONNECTED): the host may
  // give their pages in the model file back once the partition is built.
  std::vector<const baton_tensor*> packed;
  std::unordered_map<int32_t, Place> produced;  // outputs of earlier steps, by tensor index
  // Where tensor `t` is, if it exists before the current step runs: an earlier step's output, or a
  // partition input.
  auto existing = [&](int32_t t, Place& where, const baton_tensor*& host) {
    if (auto p = produced.find(t); p != produced.end()) {
      where = p->second;
      return true;
    }
    if (auto h = inputs.find(t); h != inputs.end()) {
      where.host = h->second;
      host = h->second;
      return true;
    }
    return false;
  };
  // Where a step reads tensor `in` and writes `out` (a partition output, or a buffer of the partition);
  // then the step joins the list.
  auto place = [&](Step& step, int32_t in, int32_t out) {
    if (!existing(in, step.in, step.in_tensor)) {
      refuse("tensor " + std::to_string(in) + " is read before the partition produces it");
    }
    if (auto h = outputs.find(out); h != outputs.end()) {
      step.out.host = h->second;
    } else {
      step.out.buffer = buffers_++;
    }
    produced[out] = step.out;
    steps_.push_back(std::move(step));
  };
  // The residual ADD select took after a step that writes `out` (and the activation node after it): the
  // step takes it, and `out` becomes what the last of them writes.
  std::unordered_map<int32_t, int> reads;  // how often the partition's nodes read each tensor
  std::unordered_map<int32_t, int32_t> made_by;  // tensor -> the partition node that writes it
  for (int32_t n = 0; n < count; ++n) {
    const baton_node* node = api->partition_node(partition, n);
    for (int32_t i = 0; i < api->node_input_count(node); ++i) ++reads[index_of(api, api->node_input(node, i))];
    for (int32_t i = 0; i < api->node_output_count(node); ++i) made_by[index_of(api, api->node_output(node, i))] = n;
  }
  // The shortcut (see Shortcut) that makes a residual ADD's other input `t` here, as select took it: its
  // nodes are marked used, and `t` becomes its source.
  auto take_shortcut = [&](int32_t& t) {
    Shortcut shortcut;
    for (auto m = made_by.find(t); m != made_by.end() && !used[m->second] && !outputs.count(t) && reads[t] == 1;
         m = made_by.find(t)) {
      const baton_node* node = api->partition_node(partition, m->second);
      if (!read_shortcut(api, node, shortcut)) break;
      used[m->second] = true;
      t = index_of(api, api->node_input(node, 0));
    }
    return shortcut;
  };
  auto join_residual = [&](Step& step, int32_t& out, int32_t after) {
    // As select: only an ADD that alone reads the output (which no node outside the partition reads).
    if (!step.op->takes_residual() || outputs.count(out) || reads[out] != 1) return;
    for (int32_t k = after + 1; k < count; ++k) {
      const baton_node* add = api->partition_node(partition, k);
      int32_t other = used[k] ? -1 : residual_of(api, add, out);
      if (other < 0) continue;
      const Shortcut shortcut = take_shortcut(other);
      if (!existing(other, step.residual, step.residual_tensor)) {
        refuse("node " + std::to_string(api->node_index(add)) + ": the residual is made after the convolution");
      }
      const std::optional<Clamp> add_clamp = add_clamp_of(api, add);
      if (!add_clamp) refuse("node " + std::to_string(api->node_index(add)) + ": ADD with an activation other than the RELUs");
      used[k] = true;
      Clamp clamp = *add_clamp;
      out = index_of(api, api->node_output(add, 0));
      for (int32_t j = k + 1; j < count && !outputs.count(out); ++j) {
        const baton_node* act = api->partition_node(partition, j);
        const std::optional<Clamp> c = activation_node_clamp(api->node_builtin_code(act));
        if (!used[j] && c && index_of(api, api->node_input(act, 0)) == out) {
          used[j] = true;
          clamp = *c;
          out = index_of(api, api->node_output(act, 0));
          break;
        }
      }
      step.op->add_residual(clamp, shortcut);
      return;
    }
  };
  // The activation node select took after a convolution without a fused activation that writes `out`
  // (which only that node reads): its clamp becomes the convolution's, and `out` the node's output.
  auto join_activation = [&](Clamp& clamp, int32_t& out, int32_t after) {
    if (clamp.min != -kInf || clamp.max != kInf || outputs.count(out) || reads[out] != 1) return;
    for (int32_t k = after + 1; k < count; ++k) {
      const baton_node* act = api->partition_node(partition, k);
      const std::optional<Clamp> c = activation_node_clamp(api->node_builtin_code(act));
      if (!used[k] && c && api->node_output_count(act) == 1 && index_of(api, api->node_input(act, 0)) == out) {
        used[k] = true;
        clamp = *c;
        out = index_of(api, api->node_output(act, 0));
        return;
      }
    }
  };
  // 1x1 convolutions whose output only a later depthwise of the partition reads: they become that pair's
  // expansion (by output tensor: the spec and the convolution's input).
  std::unordered_map<int32_t, std::pair<PointwiseSpec, int32_t>> expansions;
  auto read_by_depthwise = [&](int32_t t, int32_t after) {
    if (outputs.count(t) || reads[t] != 1) return false;
    for (int32_t k = after + 1; k < count; ++k) {
      const baton_node* node = api->partition_node(partition, k);
      if (!used[k] && api->node_builtin_code(node) == BATON_OP_DEPTHWISE_CONV_2D && index_of(api, api->node_input(node, 0)) == t) {
        return true;
      }
    }
    return false;
  };
  for (int32_t n = 0; n < count; ++n) {
    const baton_node* dw = api->partition_node(partition, n);
    if (used[n]) continue;
    const bool transposed = is_transpose_conv_bias(api, dw);
    if (transposed || api->node_builtin_code(dw) == BATON_OP_CONV_2D) {  // a convolution alone
      used[n] = true;
      Step step;
      int32_t out = index_of(api, api->node_output(dw, 0));
      if (transposed) {
        step.op = std::make_unique<NarrowConv>(NarrowConvSpec::read_transpose_bias(api, dw), *plugin_.kernels,
                                               plugin_.pool.get());
      } else if (auto narrow = narrow_spec(api, dw)) {
        join_activation(narrow->clamp, out, n);
        step.op = std::make_unique<NarrowConv>(*narrow, *plugin_.kernels, plugin_.pool.get());
      } else if (read_by_depthwise(out, n)) {  // the expansion of the pair that reads it
        expansions.emplace(out, std::make_pair(PointwiseSpec::read(api, dw), index_of(api, api->node_input(dw, 0))));
        packed.push_back(api->node_input(dw, 1));
        continue;
      } else {  // a 1x1 convolution, with the HARD_SWISH or activation node that reads it when select took it
        const baton_node* hard_swish = nullptr;
        for (int32_t k = n + 1; k < count && !outputs.count(out); ++k) {
          const baton_node* node = api->partition_node(partition, k);
          if (!used[k] && api->node_builtin_code(node) == BATON_OP_HARD_SWISH && index_of(api, api->node_input(node, 0)) == out) {
            hard_swish = node;
            used[k] = true;
            break;
          }
        }
        PointwiseSpec spec = PointwiseSpec::read(api, dw, hard_swish);
        if (hard_swish) {
          out = index_of(api, api->node_output(hard_swish, 0));
        } else {
          join_activation(spec.clamp, out, n);
        }
        step.op = std::make_unique<Pointwise>(spec, *plugin_.kernels, plugin_.pool.get());
        packed.push_back(api->node_input(dw, 1));
        join_residual(step, out, n);
      }
      place(step, index_of(api, api->node_input(dw, 0)), out);
      continue;
    }
    const int32_t code = api->node_builtin_code(dw);
    if (code == BATON_OP_FULLY_CONNECTED) {  // a product over rows, with the residual ADD select took
      used[n] = true;
      Step step;
      int32_t out = index_of(api, api->node_output(dw, 0));
      step.op = std::make_unique<Pointwise>(PointwiseSpec::read_fully_connected(api, dw), *plugin_.kernels,
                                            plugin_.pool.get());
      packed.push_back(api->node_input(dw, 1));
      join_residual(step, out, n);
      place(step, index_of(api, api->node_input(dw, 0)), out);
      continue;
    }
    // A node select took with a 1x1 convolution that cannot be one step with it here (its convolution's
    // output is read outside this partition): a step of its own.
    if (code == BATON_OP_HARD_SWISH || code == BATON_OP_ADD || activation_node_clamp(code)) {
      used[n] = true;
      Step step;
      if (code == BATON_OP_HARD_SWISH) {
        step.op = std::make_unique<Elementwise>(Elementwise::Kind::kHardSwish, Clamp{-kInf, kInf}, *plugin_.kernels);
      } else if (code == BATON_OP_ADD) {
        // in + residual, the residual the input a shortcut makes when there is one.
        int32_t a = index_of(api, api->node_input(dw, 0));
        int32_t b = residual_of(api, dw, a);
        Shortcut shortcut = take_shortcut(b);
        if (int32_t t = a; !shortcut.any() && (shortcut = take_shortcut(t)).any()) {  // the shortcut's is input 0
          a = b;
          b = t;
        }
        const std::optional<Clamp> clamp = add_clamp_of(api, dw);
        if (a < 0 || b < 0 || !clamp || !existing(b, step.residual, step.residual_tensor)) {
          refuse("node " + std::to_string(api->node_index(dw)) + ": an ADD the cpu delegate cannot run on its own");
        }
        step.op = std::make_unique<Elementwise>(Elementwise::Kind::kAdd, *clamp, *plugin_.kernels);
        step.op->add_residual(*clamp, shortcut);
        place(step, a, index_of(api, api->node_output(dw, 0)));
        continue;
      } else {
        step.op = std::make_unique<Elementwise>(Elementwise::Kind::kClamp, *activation_node_clamp(code), *plugin_.kernels);
      }
      place(step, index_of(api, api->node_input(dw, 0)), index_of(api, api->node_output(dw, 0)));
      continue;
    }
    if (code == BATON_OP_MAX_POOL_2D || code == BATON_OP_PAD) {
      // A shortcut: the residual ADD after it takes it when the ADD is in this partition (through the
      // shortcut's other nodes, each read only by the next); else a step of its own.
      int32_t t = index_of(api, api->node_output(dw, 0));
      bool taken = false;
      for (int32_t k = n + 1; k < count && !taken && !outputs.count(t) && reads[t] == 1; ++k) {
        const baton_node* node = api->partition_node(partition, k);
        const int32_t c = api->node_builtin_code(node);
        if (used[k]) continue;
        if (c == BATON_OP_ADD) {
          taken = residual_of(api, node, t) >= 0;
        } else if ((c == BATON_OP_MAX_POOL_2D || c == BATON_OP_PAD) && index_of(api, api->node_input(node, 0)) == t) {
          t = index_of(api, api->node_output(node, 0));
        }
      }
      if (taken) continue;
      Shortcut shortcut;
      if (!read_shortcut(api, dw, shortcut)) refuse("node " + std::to_string(api->node_index(dw)) + ": not a shortcut");
      used[n] = true;
      Step step;
      step.op = std::make_unique<ShortcutStep>(shortcut, *plugin_.kernels);
      place(step, index_of(api, api->node_input(dw, 0)), index_of(api, api->node_output(dw, 0)));
      continue;
    }
    if (code != BATON_OP_DEPTHWISE_CONV_2D) {
      refuse("node " + std::to_string(api->node_index(dw)) + " is neither a depthwise half of a pair nor a convolution");
    }
    int32_t mid = index_of(api, api->node_output(dw, 0));
    // The node that reads it: the 1x1 convolution, or an activation node the convolution reads.
    auto reader = [&](int32_t tensor, auto&& is_wanted) {
      for (int32_t k = n + 1; k < count; ++k) {
        const baton_node* node = api->partition_node(partition, k);
        if (!used[k] && is_wanted(node) && index_of(api, api->node_input(node, 0)) == tensor) return k;
      }
      return -1;
    };
    const auto is_activation = [&](const baton_node* node) {
      return activation_node_clamp(api->node_builtin_code(node)).has_value();
    };
    const auto is_conv = [&](const baton_node* node) { return api->node_builtin_code(node) == BATON_OP_CONV_2D; };
    const int32_t a0 = outputs.count(mid) ? -1 : reader(mid, is_activation);
    const int32_t after = a0 >= 0 ? index_of(api, api->node_output(api->partition_node(partition, a0), 0)) : mid;
    if (outputs.count(mid) || outputs.count(after) || reader(after, is_conv) < 0) {
      // A depthwise no 1x1 convolution reads: a step of its own, with the activation node and the
      // residual ADD select took after it.
      used[n] = true;
      const int32_t in = index_of(api, api->node_input(dw, 0));
      if (const auto e = expansions.find(in); e != expansions.end()) {  // the 1x1 convolution before it: a step
        Step expand;
        expand.op = std::make_unique<Pointwise>(e->second.first, *plugin_.kernels, plugin_.pool.get());
        place(expand, e->second.second, in);
        expansions.erase(e);
      }
      PairSpec spec = PairSpec::read(api, dw, nullptr);
      int32_t out = mid;
      join_activation(spec.depthwise_clamp, out, n);
      Step step;
      step.op = std::make_unique<Depthwise>(spec, *plugin_.kernels, plugin_.pool.get());
      join_residual(step, out, n);
      place(step, in, out);
      continue;
    }
    const baton_node* activation = nullptr;
    const int32_t a = reader(mid, is_activation);
    if (a >= 0) {
      activation = api->partition_node(partition, a);
      mid = index_of(api, api->node_output(activation, 0));
      if (outputs.count(mid)) refuse("the activation's output is read outside the pair");
      used[a] = true;
    }
    const int32_t c = reader(mid, is_conv);
    if (c < 0) refuse("node " + std::to_string(api->node_index(dw)) + ": no 1x1 convolution reads its output");
    const baton_node* conv = api->partition_node(partition, c);
    used[n] = used[c] = true;
    packed.push_back(api->node_input(conv, 1));

    Step step;
    PairSpec spec = PairSpec::read(api, dw, conv, activation);
    int32_t in = index_of(api, api->node_input(dw, 0));
    if (const auto e = expansions.find(in); e != expansions.end()) {
      spec.add_expansion(e->second.first);
      in = e->second.second;
      expansions.erase(e);
    }
    int32_t out = index_of(api, api->node_output(conv, 0));
    join_activation(spec.conv_clamp, out, c);
    step.op = std::make_unique<FusedPair>(spec, *plugin_.kernels, plugin_.pool.get());
    join_residual(step, out, c);
    place(step, in, out);
  }
  if (!expansions.empty()) refuse("a 1x1 convolution's output is read by no pair's depthwise");
  for (int32_t n = 0; n < count; ++n) {
    if (!used[n]) refuse("node " + std::to_string(api->node_index(api->partition_node(partition, n))) + ": a shortcut no residual ADD of the partition takes");
  }
  for (const baton_tensor* t : packed) kit::release_constant(api, t);
}

baton_status Partition::prepare(const baton_partition* partition, baton_error* error) {
  const baton_host_api* api = plugin_.api;
  const size_t buffers = static_cast<size_t>(buffers_);
  std::vector<std::vector<int32_t>> buffer_dims(buffers);
  std::vector<size_t> sizes(buffers, 0);
  std::vector<int> written(buffers, -1), last_read(buffers, -1);
  int step_index = 0;
  for (Step& s : steps_) {
    std::vector<int32_t> in_dims;
    if (s.in.host) {
      const int32_t* dims = nullptr;
      const int32_t rank = api->tensor_shape(s.in.host, &dims);
      in_dims.assign(dims, dims + rank);
    } else if (s.in.buffer >= 0) {
      in_dims = buffer_dims[static_cast<size_t>(s.in.buffer)];
    }
    s.out_dims = s.op->prepare(in_dims.data(), static_cast<int32_t>(in_dims.size()));
    if (s.op->has_residual()) {
      std::vector<int32_t> r_dims;
      if (s.residual.host) {
        const int32_t* dims = nullptr;
        const int32_t rank = api->tensor_shape(s.residual.host, &dims);
        r_dims.assign(dims, dims + rank);
      } else {
        r_dims = buffer_dims[static_cast<size_t>(s.residual.buffer)];
      }
      if (!s.op->prepare_residual(r_dims, s.out_dims)) {
        api->error_set(error, "the residual ADD's other input (through its shortcut) no longer has the output's shape");
        return BATON_ERROR;
      }
    }
    if (s.out.host) {
      const baton_status st = api->tensor_set_shape(s.out.host, static_cast<int32_t>(s.out_dims.size()), s.out_dims.data(), error);
      if (st != BATON_OK) return st;
    } else {
      size_t n = 1;
      for (int32_t d : s.out_dims) n *= static_cast<size_t>(d);
      sizes[static_cast<size_t>(s.out.buffer)] = n;
      written[static_cast<size_t>(s.out.buffer)] = step_index;
      buffer_dims[static_cast<size_t>(s.out.buffer)] = s.out_dims;
    }
    for (const Place* p : {&s.in, &s.residual}) {
      if (p->buffer >= 0) last_read[static_cast<size_t>(p->buffer)] = step_index;
    }
    ++step_index;
  }
  std::vector<kit::Lifetime> lives;
  for (size_t b = 0; b < buffers; ++b) lives.push_back({sizes[b] * sizeof(float), written[b], std::max(written[b], last_read[b])});
  for (size_t i = 0; i < steps_.size(); ++i) {
    lives.push_back({steps_[i].op->work_bytes(), static_cast<int>(i), static_cast<int>(i)});
  }
  // Host tensors to compute in while they are idle: outputs before the step that writes them, reusable
  // inputs after the last step that reads them.
  std::vector<kit::Region> regions;
  region_tensor_.clear();
  const bool asks_inputs = BATON_STRUCT_HAS(api, baton_host_api, partition_input_reusable) && api->partition_input_reusable;
  const int last_step = static_cast<int>(steps_.size()) - 1;
  for (int i = 0; i <= last_step; ++i) {
    baton_tensor* out = steps_[static_cast<size_t>(i)].out.host;
    if (out && i > 0) {
      regions.push_back({api->tensor_byte_size(out), 0, i - 1});
      region_tensor_.push_back(out);
    }
  }
  for (int32_t k = 0; asks_inputs && k < api->partition_input_count(partition); ++k) {
    baton_tensor* in = api->partition_input(partition, k);
    if (!api->partition_input_reusable(partition, k)) continue;
    int last_read = -1;
    for (int i = 0; i <= last_step; ++i) {
      const Step& s = steps_[static_cast<size_t>(i)];
      if (s.in.host == in || (s.op->has_residual() && s.residual.host == in)) last_read = i;
    }
    if (last_read >= 0 && last_read < last_step) {
      regions.push_back({api->tensor_byte_size(in), last_read + 1, last_step});
      region_tensor_.push_back(in);
    }
  }
  size_t total = 0;
  buffer_place_ = kit::plan_with_regions(lives, regions, 64, &total);
  for (size_t i = 0; i < steps_.size(); ++i) steps_[i].work = buffer_place_[buffers + i];
  buffer_place_.resize(buffers);
  region_base_.assign(region_tensor_.size(), nullptr);
  partition_ = partition;
  scratch_.request(api, partition, total);
  scratch_bytes_ = total;
  return BATON_OK;
}

baton_status Partition::invoke(baton_error* error) {
  const baton_host_api* api = plugin_.api;
  scratch_base_ = scratch_.data(api, partition_);
  for (size_t r = 0; r < region_tensor_.size(); ++r) {
    region_base_[r] = static_cast<uint8_t*>(api->tensor_mutable_data(region_tensor_[r]));
    if (!region_base_[r]) {
      api->error_set(error, "a boundary tensor of the partition has no memory");
      return BATON_ERROR;
    }
  }
  if (scratch_bytes_ > 0 && !scratch_base_) {
    api->error_set(error, "the partition's scratch has no memory");
    return BATON_ERROR;
  }
  for (Step& s : steps_) {
    const float* in = s.in.host ? static_cast<const float*>(api->tensor_data(s.in.host))
                                : buffer(s.in.buffer);
    float* out = s.out.host ? static_cast<float*>(api->tensor_mutable_data(s.out.host))
                            : buffer(s.out.buffer);
    if (!in || !out) {
      api->error_set(error, "a boundary tensor of the partition has no memory");
      return BATON_ERROR;
    }
    const float* residual = nullptr;
    if (s.op->has_residual()) {
      residual = s.residual.host ? static_cast<const float*>(api->tensor_data(s.residual.host))
                                 : buffer(s.residual.buffer);
      if (!residual) {
        api->error_set(error, "the residual ADD's other input has no memory");
        return BATON_ERROR;
      }
    }
    s.op->run(in, residual, out,
              s.op->work_bytes() > 0 ? reinterpret_cast<float*>(at(s.work)) : nullptr);
  }
  return BATON_OK;
}

}  // namespace baton::cpu
