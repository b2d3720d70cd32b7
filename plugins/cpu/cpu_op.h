// What one step of a cpu partition runs: a pattern of the model's nodes read once (weights packed at
// partition init), sized at prepare for the input's shape (which also sizes its buffers), and run on
// one float32 tensor into another without allocating. A pattern that ends in a 1x1 convolution may also
// take the residual ADD after it (out = clamp(conv + residual), each block of rows while it is still in
// cache): the ADD's other input then comes to run() as `residual`, of the output's shape.
#ifndef BATON_CPU_CPU_OP_H
#define BATON_CPU_CPU_OP_H

#include <cstdint>
#include <vector>

#include "kernels.h"

namespace baton::cpu {

class CpuOp {
 public:
  virtual ~CpuOp() = default;
  // For an input of these dims: the output's. Throws kit::Refusal for a shape the op cannot take.
  virtual std::vector<int32_t> prepare(const int32_t* in_dims, int32_t rank) = 0;
  // `residual` is null unless add_residual() was called.
  virtual void run(const float* in, const float* residual, float* out) = 0;

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
