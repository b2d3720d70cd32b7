// A depthwise convolution and the 1x1 convolution that reads it, run as one step: block by block of
// output rows, the depthwise rows go into a small per-thread buffer that stays in cache, and the matrix
// product of the 1x1 convolution reads them from there. The depthwise output never reaches memory.
// With an expansion (MobileNetV2's inverted residual: a 1x1 convolution whose output only the depthwise
// reads), the input rows each block needs are expanded into another per-thread buffer first, so the
// expanded tensor (the largest of the three, often four to six times the input) never exists whole
// either; the rows that two neighbouring blocks share are moved down, not computed twice.
//
// What a pair is made of comes from the model once (PairSpec: checked at selection, weights packed at
// partition init); the geometry follows the input shape at prepare, which also sizes the buffers. The
// buffers are the step's working memory (CpuOp::work_bytes), so run() allocates nothing.
#ifndef BATON_CPU_FUSED_PAIR_H
#define BATON_CPU_FUSED_PAIR_H

#include <pthreadpool.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "cpu_op.h"
#include "kernels.h"
#include "pointwise.h"

namespace baton::cpu {

// The pattern, read from the two nodes. Throws kit::Refusal naming what does not fit.
struct PairSpec {
  int kernel = 3, stride_h = 1, stride_w = 1;
  bool same_padding = true;
  int channels = 0, out_channels = 0;
  Clamp depthwise_clamp{}, conv_clamp{};
  const float* depthwise_weights = nullptr;  // [k][k][channels], the model's (lives as long as it)
  const float* depthwise_bias = nullptr;     // [channels] or null
  const float* conv_weights = nullptr;       // [out_channels][channels]
  const float* conv_bias = nullptr;          // [out_channels] or null

  // `depthwise` must be DEPTHWISE_CONV_2D and `conv` a CONV_2D whose input 0 is the depthwise output, or,
  // when `activation` is given (a RELU, RELU6 or RELU_N1_TO_1 node the converter left unfused), the
  // output of that node, which reads the depthwise output; its clamp then becomes the depthwise one.
  // Without `conv`, the depthwise alone (a Depthwise step; out_channels stays 0).
  static PairSpec read(const baton_host_api* api, const baton_node* depthwise, const baton_node* conv,
                       const baton_node* activation = nullptr);

  // The expansion before the depthwise: none while in_channels is 0.
  int in_channels = 0;
  Clamp expand_clamp{};
  const float* expand_weights = nullptr;  // [channels][in_channels]
  const float* expand_bias = nullptr;     // [channels] or null
  // Takes `expand` (a 1x1 convolution without a HARD_SWISH, whose output the depthwise alone reads) as
  // the expansion. Throws kit::Refusal when its output channels are not the depthwise's.
  void add_expansion(const PointwiseSpec& expand);
  // The channels of the pair's input: the expansion's, or the depthwise's without one.
  int input_channels() const { return in_channels > 0 ? in_channels : channels; }
};

// The output geometry of the spec's depthwise on an in_h x in_w image (TFLite's SAME or VALID). Throws
// kit::Refusal when a VALID window does not fit.
DepthwiseGeometry depthwise_geometry(const PairSpec& spec, int in_h, int in_w);

class FusedPair : public CpuOp {
 public:
  // `pool` (NULL: the caller's thread only) runs the row blocks in as many contiguous shares as it has
  // threads, each share with its own block buffer.
  FusedPair(const PairSpec& spec, const Kernels& kernels, pthreadpool_t pool);

  // For an input of [batch, height, width, channels] (in_channels with an expansion): the output dims;
  // sizes the block buffers. Throws kit::Refusal for a shape the pair cannot take.
  std::vector<int32_t> prepare(const int32_t* in_dims, int32_t rank) override;
  size_t work_bytes() const override {
    return (whole_ ? whole_expanded_floats_ + whole_depthwise_floats_ : share_floats_ * static_cast<size_t>(shares_)) *
           sizeof(float);
  }
  // Reads in ([batch][h][w][channels]), writes out ([batch][oh][ow][out_channels]).
  void run(const float* in, const float* residual, float* out, float* work) override;
  bool takes_residual() const override { return true; }

 private:
  // Output rows [first_row, end_row) of all images (image by image), in blocks.
  void run_rows(const float* in, const float* residual, float* out, long first_row, long end_row, float* work) const;
  static void run_share(void* context, size_t share);
  size_t share_floats_for_rows() const;
  // Whole-image mode (see prepare): one image in three parallel phases, each split evenly over the shares.
  void run_whole_image(const float* in, const float* residual, float* out, float* work);
  static void expand_share(void* context, size_t share);
  static void depthwise_share(void* context, size_t share);
  static void project_share(void* context, size_t share);

  PairSpec spec_;
  const Kernels& kernels_;
  std::vector<float> depthwise_bias_;  // the model's, or zeros
  PackedGemm conv_;                    // the 1x1 convolution after the depthwise
  std::optional<PackedGemm> expand_;   // the 1x1 expansion before it, if the pair has one

  DepthwiseGeometry geometry_;
  int batch_ = 0, rows_per_block_ = 1, blocks_per_image_ = 0;
  pthreadpool_t pool_ = nullptr;
  int shares_ = 1;              // the pool's threads (1 without a pool)
  size_t block_floats_ = 0;  // one block of depthwise rows, at the start of each share's work memory
  size_t share_floats_ = 0;  // that and the expanded input rows one block reads, rounded up to 64 bytes
  const float* run_in_ = nullptr;  // the current run's tensors, for run_share
  const float* run_residual_ = nullptr;
  float* run_out_ = nullptr;
  float* run_work_ = nullptr;
  int run_shares_ = 1;
  int run_image_ = 0;  // whole-image mode: the image under way
  // With several threads and an image of too few row blocks to share out evenly (the small late layers),
  // the pair runs image by image in three phases instead (when its buffers are small; a larger image gets
  // as many blocks as the next multiple of the threads): the expansion of the whole input (pixels split
  // over the shares), the depthwise of the whole image (rows split), the 1x1 convolution (pixels split).
  // No halo rows are expanded twice, and every phase is balanced; the two whole-image buffers are the
  // step's working memory.
  bool whole_ = false;
  size_t whole_expanded_floats_ = 0, whole_depthwise_floats_ = 0;
};

// A depthwise convolution no 1x1 convolution reads, taken when a residual ADD joins it (selfie_segmentation's
// decoder: depthwise, RELU, ADD of the depthwise's input): rows of about 32 KiB at a time get the
// depthwise, its activation and the residual while they are in cache, the rows split over the pool's
// threads. Its spec is a PairSpec without the convolution (its clamp that of the activation node after
// it, when select took one).
class Depthwise : public CpuOp {
 public:
  Depthwise(const PairSpec& spec, const Kernels& kernels, pthreadpool_t pool);
  std::vector<int32_t> prepare(const int32_t* in_dims, int32_t rank) override;
  void run(const float* in, const float* residual, float* out, float* work) override;
  bool takes_residual() const override { return true; }

 private:
  void run_rows(const float* in, const float* residual, float* out, long first, long end) const;
  static void run_share(void* context, size_t share);

  PairSpec spec_;
  const Kernels& kernels_;
  pthreadpool_t pool_;
  int shares_ = 1;
  std::vector<float> bias_;  // the model's, or zeros
  DepthwiseGeometry geometry_;
  int batch_ = 0, chunk_rows_ = 1;
  const float* run_in_ = nullptr;
  const float* run_residual_ = nullptr;
  float* run_out_ = nullptr;
};

}  // namespace baton::cpu

#endif  // BATON_CPU_FUSED_PAIR_H
