// What a model contains, for people and scripts (`baton inspect`, baton_model_report), read without any
// plugin: its inputs and outputs with their quantization, subgraphs and who runs them, signatures, op
// counts, tensor types, constants, what load folds or drops, metadata.
//
// JSON (stable; fields are only ever added):
//   {"model", "file_bytes", "schema_version", "description", "min_runtime_version",
//    "inputs", "outputs": [{"index", "tensor", "name", "type", "shape",
//                           "quantization": {"scales", "zero_points", "quantized_dimension",
//                                            "block_size", "block_scales_tensor", "block_scale_type"
//                                            (blockwise only)} (quantized only)}],
//    "subgraphs": [{"name", "nodes", "tensors", "run_by": [TEXT], "ops": [{"op", "version", "count"}]}],
//    "signatures": [{"key", "subgraph", "inputs": {NAME: TENSOR}, "outputs": {NAME: TENSOR}}],
//    "ops": [{"op", "version", "count"}] (the entry subgraph's), "tensors_by_type": {TYPE: COUNT},
//    "quantized_tensors", "per_channel_tensors", "blockwise_tensors", "constant_bytes",
//    "folded_at_load", "dropped_at_load", "folded_by_op": {OP: COUNT},
//    "metadata": [{"name", "bytes", "text" (printable ASCII only)}]}
#pragma once

#include <string>

#include "model.h"

namespace baton {

std::string model_text(const Model& model);
std::string model_json(const Model& model);

}  // namespace baton
