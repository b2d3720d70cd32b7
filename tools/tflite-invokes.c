/* tflite-invokes.c - run a model several times in one TFLite interpreter and keep every invoke's outputs:
 * the expected outputs of ops whose results change from one invoke to the next (the random ops draw on
 * from where the last invoke left their generator). A developer tool of tools/make-op-cases.sh, built
 * there against TFLite 2.9's C headers and library (tools/fetch-tflite-c.sh).
 *
 *   tflite-invokes MODEL.tflite INVOKES OUT_DIR [IN_0.npy ...]
 *
 * Builtin kernels only, one thread. The inputs (.npy, version 1, the input's type and byte size; none for a
 * model without inputs) are copied in once; invoke K (1-based) writes OUT_DIR/out_I.invoke_K.npy for each
 * output I, in the output's shape after that invoke. Exits 1 on any failure, with the reason on stderr.
 * Loading, inputs and outputs are tools/testgen/tflite-run.h's. */
#define TOOL_NAME "tflite-invokes"
#include "testgen/tflite-run.h"

int main(int argc, char **argv) {
  if (argc < 4) die("usage: tflite-invokes MODEL.tflite INVOKES OUT_DIR [IN_0.npy ...]");
  const int invokes = atoi(argv[2]);
  if (invokes < 1) die("INVOKES must be at least 1");
  TfliteRun run = tflite_run_open(argv[1]);
  tflite_run_set_inputs(&run, argv + 4, argc - 4);
  for (int k = 1; k <= invokes; k++) {
    if (TfLiteInterpreterInvoke(run.interpreter) != kTfLiteOk) die("invoke %d failed", k);
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".invoke_%d", k);
    for (int o = 0; o < TfLiteInterpreterGetOutputTensorCount(run.interpreter); o++) {
      write_output(argv[3], o, suffix, TfLiteInterpreterGetOutputTensor(run.interpreter, o));
    }
  }
  tflite_run_close(&run);
  return 0;
}
