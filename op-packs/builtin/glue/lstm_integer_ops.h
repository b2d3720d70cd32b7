// The full-integer form of LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM (glue/lstm_integer_ops.cc), chosen by
// glue/lstm_ops.cc's prepare for a node with an integer input.
#ifndef BATON_BUILTIN_GLUE_LSTM_INTEGER_OPS_H
#define BATON_BUILTIN_GLUE_LSTM_INTEGER_OPS_H

#include "glue/op_context.h"

namespace baton::builtin {

// Checks the node (20 or 24 inputs, already counted), fills its state and makes invoke run the integer
// kernel. `single_step`: LSTM ([batch, inputs]); else the sequence op.
void lstm_integer_prepare(OpContext& ctx, bool single_step);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_GLUE_LSTM_INTEGER_OPS_H
