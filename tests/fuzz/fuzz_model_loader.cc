// libFuzzer target: the model loader and verifier on arbitrary bytes. Any input must either load or be
// rejected with a message; AddressSanitizer turns a bad read into a crash the fuzzer reports.
#include <cstddef>
#include <cstdint>

#include "folder.h"
#include "model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  baton::LoadLimits limits;
  limits.max_tensor_bytes = size_t(64) << 20;
  auto model = baton::load_model_buffer({data, size}, "fuzz.tflite", limits);
  if (!model) {
    if (model.error().empty()) __builtin_trap();  // a rejection must say why
    return 0;
  }
  // Walk what later stages read.
  for (const baton::SubgraphInfo& g : model.value()->subgraphs) {
    (void)baton::foldable_nodes(g);
    for (const baton::NodeInfo& n : g.nodes) (void)baton::node_op_name(n);
  }
  return 0;
}
