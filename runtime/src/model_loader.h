// Load, the checking half: a verified flatbuffer turned into a Model, its meaning checked on the way
// (model_loader.cc). model.cc maps or copies the bytes and owns the Model; this reads them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model.h"
#include "status.h"

namespace baton {

// Verifies `bytes` as a TFLite flatbuffer and fills `model` (subgraphs, tensors, nodes, signatures,
// metadata), checking what the schema cannot say: indices in range, shapes and buffers that agree, op
// codes known, limits kept. The error names the model's source, where (subgraph, tensor or node) and what
// is wrong.
Status read_model(Model& model, const uint8_t* bytes, size_t size, const LoadLimits& limits);

}  // namespace baton
