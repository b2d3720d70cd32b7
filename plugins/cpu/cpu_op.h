// What one step of a cpu partition runs: a pattern of the model's nodes read once (weights packed at
// partition init), sized at prepare for the input's shape (which also sizes its buffers), and run on
// one float32 tensor into another without allocating.
#ifndef BATON_CPU_CPU_OP_H
#define BATON_CPU_CPU_OP_H

#include <cstdint>
#include <vector>

namespace baton::cpu {

class CpuOp {
 public:
  virtual ~CpuOp() = default;
  // For an input of these dims: the output's. Throws kit::Refusal for a shape the op cannot take.
  virtual std::vector<int32_t> prepare(const int32_t* in_dims, int32_t rank) = 0;
  virtual void run(const float* in, float* out) = 0;
};

}  // namespace baton::cpu

#endif  // BATON_CPU_CPU_OP_H
