// Builtin options (the schema's BuiltinOptions union) as the plugin ABI gives them to kernels.
#pragma once

#include <cstdint>

#include "baton/plugin_api.h"

namespace baton {
namespace tflite {
struct Model;
struct Operator;
}

// Reads the options of `op` into `o` (arrays point into the model's bytes); absent options leave o.kind 0.
void read_builtin_options(const tflite::Operator* op, baton_builtin_options& o);
// Reads the options of TFLite's second union (Operator.builtin_options_2) that kernels take (ABI 1.9) into
// `o`, kind BATON_OPTIONS_2_KIND + its type; a body subgraph of `model` is read for the reduction it computes.
// Leaves `o` alone when `op` has none of them.
void read_builtin_options_2(const tflite::Model* model, const tflite::Operator* op, baton_builtin_options& o);
// Options that the model leaves out read as TFLite's schema defaults, except where a kernel would divide
// by them: those get the value TFLite's own parser substitutes.
void default_builtin_options(int32_t op_code, baton_builtin_options& o);

}  // namespace baton
