// What one step of a cpu partition runs: a pattern of the model's nodes read once (weights packed at
// partition init), sized at prepare for the input's shape (which also says how much working memory it
// needs), and run on one float32 tensor into another without allocating: its working memory is the
// partition's, in the scratch the host gives it, alive only while the step runs. A pattern that ends in
// a 1x1 convolution may also take the residual ADD after it (out = clamp(conv + residual), each block of
// rows while it is still in cache): the ADD's other input then comes to run() as `residual`, of the
// output's shape, or as the source of a shortcut (see Shortcut) that makes it.
#ifndef BATON_CPU_CPU_OP_H
#define BATON_CPU_CPU_OP_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels.h"

namespace baton::cpu {

// The shortcut a residual ADD's other input may be made by, nodes the converter wrote between a block's
// input and the ADD (BlazeNet's: a 2x2 MAX_POOL_2D of stride 2 beside a stride-2 block, a PAD that appends
// zero channels where a block widens, or both). The step computes it from the source pixels while its
// output block is in cache, so the shortcut's tensors never exist.
struct Shortcut {
  bool pool = false;       // a 2x2 max pool of stride 2
  bool pool_same = false;  // its padding SAME (an odd side's last window then has one row or column)
  int pad_channels = 0;    // zero channels appended after the source's
  bool any() const { return pool || pad_channels > 0; }
};

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
  void add_residual(Clamp after, Shortcut shortcut = {}) {
    residual_ = true;
    residual_clamp_ = after;
    shortcut_ = shortcut;
  }
  bool has_residual() const { return residual_; }
  // At prepare, after prepare(): the dims of what run() gets as `residual` and of the output. False when
  // the residual (through the shortcut) does not have the output's shape.
  bool prepare_residual(const std::vector<int32_t>& source, const std::vector<int32_t>& out);

 protected:
  // Adds the residual to `pixels` output pixels from pixel `first` (counted over all images, row by row;
  // a pixel is the last dim's values), then the ADD's clamp; `out` points at pixel `first`.
  void add_residual_to(const Kernels& kernels, float* out, const float* residual, long first, long pixels) const;

  bool residual_ = false;
  Clamp residual_clamp_{};
  Shortcut shortcut_{};

 private:
  // From prepare_residual: the output's pixels per image, width and channels; the source's height, width
  // and channels.
  long out_pixels_ = 0;
  int out_w_ = 0, out_channels_ = 0, source_h_ = 0, source_w_ = 0, source_channels_ = 0;
};

}  // namespace baton::cpu

#endif  // BATON_CPU_CPU_OP_H
