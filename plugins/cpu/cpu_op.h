// What one step of a cpu partition runs: a pattern of the model's nodes read once (weights packed at
// partition init), sized at prepare for the input's shape (which also says how much working memory it
// needs), and run on one float32 tensor into another without allocating: its working memory is the
// partition's, in the scratch the host gives it, alive only while the step runs. A pattern that ends in
// a 1x1 convolution may also take the residual ADD after it (out = clamp(conv + residual), each block of
// rows while it is still in cache): the ADD's other input then comes to run() as `residual`, of the
// output's shape.
#ifndef BATON_CPU_CPU_OP_H
#define BATON_CPU_CPU_OP_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels.h"

namespace baton::cpu {

class CpuOp {
 public:
  virtual ~CpuOp() = default;
  // For an input of these dims: the output's. Throws kit::Refusal for a shape the op cannot take.
  virtual std::vector<int32_t> prepare(const int32_t* in_dims, int32_t rank) = 0;
  // Bytes of working memory run() needs for the shape prepare() took (0 for none).
  virtual size_t work_bytes() const { return 0; }
  // `residual` is null unless add_residual() was called; `work` is work_bytes() long, 64-byte aligned
  // (null when that is 0), and holds nothing from one run to the next.
  virtual void run(const float* in, const float* residual, float* out, float* work) = 0;

  // Whether the op can end in a residual ADD, and the ADD's clamp (its fused activation, or an
  // activation node after it).
  virtual bool takes_residual() const { return false; }
  void add_residual(Clamp after) {
    residual_ = true;
    residual_clamp_ = after;
  }
  bool has_residual() const { return residual_; }

 protected:
  bool residual_ = false;
  Clamp residual_clamp_{};
};

}  // namespace baton::cpu

#endif  // BATON_CPU_CPU_OP_H
