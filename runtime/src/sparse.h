// Sparse constants (TFLite's SparsityParameters) expanded to dense bytes. DENSIFY only ever reads a
// constant, so the runtime expands it once at load instead of asking an op pack to.
#pragma once

#include <cstdint>
#include <vector>

#include "model.h"
#include "status.h"

namespace baton {

// Expands `tensor` (constant, with sparsity) into `out`: dense, row-major, of tensor.shape. Checks every
// index and segment against the shape and the stored values, so a malformed model fails here.
Status densify(const TensorInfo& tensor, std::vector<uint8_t>& out);

}  // namespace baton
