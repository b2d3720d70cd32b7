// A 1x1 CONV_2D on its own (stride 1): one matrix product of the pixels by the filter, with the weights
// packed once at partition init and the rows split over the host's shared thread pool. The product is
// the cpu delegate's own register-tiled kernel; Debian's XNNPACK build runs its AVX2 GEMM with one
// accumulator spilled to the stack (a load and a store in every step of its inner loop).
// A HARD_SWISH node that alone reads the convolution joins it: each block of output rows gets it while
// it is still in cache, instead of another pass over memory.
#ifndef BATON_CPU_POINTWISE_H
#define BATON_CPU_POINTWISE_H

#include <pthreadpool.h>

#include <cstdint>
#include <vector>

#include "baton/plugin_api.h"
#include "cpu_op.h"
#include "kernels.h"

namespace baton::cpu {

struct PointwiseSpec {
  // Smaller products are left to the next delegate: not worth a step (and a partition) of their own.
  static constexpr int kMinOutputPixels = 64;
  static constexpr int64_t kMinMultiplyAdds = 64 * 1024;

  int channels = 0, out_channels = 0;
  Clamp clamp{};
  bool hard_swish = false;         // a HARD_SWISH node after it
  // A FULLY_CONNECTED's: an input of any rank whose rows are all its dimensions but the last (the
  // weights' depth); the output keeps its leading dimensions (keep_num_dims) or is [rows, out_channels].
  bool fully_connected = false, keep_num_dims = false;
  const float* weights = nullptr;  // [out_channels][channels], the model's
  const float* bias = nullptr;     // [out_channels] or null

  // `conv` must be a CONV_2D; `hard_swish`, when given, a HARD_SWISH node that reads its output (the
  // convolution then without a fused activation). Throws kit::Refusal naming what does not fit (the
  // product's size included, from the model's shapes).
  static PointwiseSpec read(const baton_host_api* api, const baton_node* conv,
                            const baton_node* hard_swish = nullptr);
  // The same product from a FULLY_CONNECTED with constant float32 weights ([out_channels][channels], the
  // default format) over the last dimension of its input, at least kMinOutputPixels rows of it.
  static PointwiseSpec read_fully_connected(const baton_host_api* api, const baton_node* fc);
};

class Pointwise : public CpuOp {
 public:
  Pointwise(const PointwiseSpec& spec, const Kernels& kernels, pthreadpool_t pool);
  std::vector<int32_t> prepare(const int32_t* in_dims, int32_t rank) override;
  void run(const float* in, const float* residual, float* out, float* work) override;
  bool takes_residual() const override { return !spec_.hard_swish; }

 private:
  static void run_share(void* context, size_t share);
  void run_rows(const float* in, const float* residual, float* out, long first, long end) const;

  PointwiseSpec spec_;
  const Kernels& kernels_;
  pthreadpool_t pool_;
  int shares_ = 1;
  PackedGemm product_;
  std::vector<int32_t> out_dims_;
  long rows_ = 0;  // pixels of all images
  const float* run_in_ = nullptr;
  const float* run_residual_ = nullptr;
  float* run_out_ = nullptr;
  int run_shares_ = 1;
};

// A node of a pattern on its own: a HARD_SWISH, a residual ADD or an activation node that select took
// with its 1x1 convolution, when the host's partitioning (or a model output in between) keeps them from
// being one step. out = hard_swish(in), or clamp(in + residual), or clamp(in).
class Elementwise : public CpuOp {
 public:
  enum class Kind { kHardSwish, kAdd, kClamp };
  Elementwise(Kind kind, Clamp clamp, const Kernels& kernels) : kind_(kind), clamp_(clamp), kernels_(kernels) {
    if (kind == Kind::kAdd) add_residual(clamp);
  }
  std::vector<int32_t> prepare(const int32_t* in_dims, int32_t rank) override;
  void run(const float* in, const float* residual, float* out, float* work) override;

 private:
  Kind kind_;
  Clamp clamp_;
  const Kernels& kernels_;
  long size_ = 0, channels_ = 1;  // all values, and those of the last dim (a pixel, for add_residual_to)
};

// A shortcut's nodes (see Shortcut) that select took for a residual ADD the host put in another partition:
// out = the shortcut of in, as a step of its own.
class ShortcutStep : public CpuOp {
 public:
  ShortcutStep(Shortcut shortcut, const Kernels& kernels) : kernels_(kernels) {
    shortcut_ = shortcut;
    residual_clamp_ = Clamp{-kShortcutInf, kShortcutInf};
  }
  std::vector<int32_t> prepare(const int32_t* in_dims, int32_t rank) override;
  void run(const float* in, const float* residual, float* out, float* work) override;

 private:
  static constexpr float kShortcutInf = __builtin_inff();
  const Kernels& kernels_;
  long pixels_ = 0, size_ = 0;
};

}  // namespace baton::cpu

#endif  // BATON_CPU_POINTWISE_H
