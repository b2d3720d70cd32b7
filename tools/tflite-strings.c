/* tflite-strings.c - run a model with string tensors in TFLite 2.9 and keep its outputs: the expected
 * outputs of the string cases (tools/make-string-cases.sh, which builds this against TFLite 2.9's C
 * headers and library from tools/fetch-tflite-c.sh). tflite-peer has no string tensors.
 *
 *   tflite-strings MODEL.tflite OUT_DIR [IN_0 ...]
 *
 * Builtin kernels only, one thread. An input file IN.str holds a string input's value as TFLite's packed
 * buffer (int32 count, count + 1 int32 offsets, the bytes); IN.npy (version 1) a numeric input's bytes.
 * Each output I is written to OUT_DIR/out_I.str (a string output, its packed buffer as TFLite left it)
 * or OUT_DIR/out_I.npy, in the output's shape after invoke. The model is then invoked again with the
 * same inputs; an output that comes out different (state kept between invokes, as a hash table's) is
 * written again as OUT_DIR/out_I.second.str or .npy. A string input gets its value the way
 * TFLite's own string writer gives one (TfLiteTensorRealloc on the tensor, then the bytes): its C API
 * copies only into tensors of a fixed size. Exits 1 on any failure, with the reason on stderr. Loading,
 * inputs and outputs are tools/testgen/tflite-run.h's. */
#define TOOL_NAME "tflite-strings"
#include "testgen/tflite-run.h"

int main(int argc, char **argv) {
  if (argc < 3) die("usage: tflite-strings MODEL.tflite OUT_DIR [IN_0 ...]");
  TfliteRun run = tflite_run_open(argv[1]);
  tflite_run_set_inputs(&run, argv + 3, argc - 3);
  TfLiteInterpreter *interpreter = run.interpreter;
  if (TfLiteInterpreterInvoke(interpreter) != kTfLiteOk) die("invoke failed");
  const int outputs = TfLiteInterpreterGetOutputTensorCount(interpreter);
  void **first = calloc((size_t)outputs, sizeof *first);
  size_t *first_bytes = calloc((size_t)outputs, sizeof *first_bytes);
  if (!first || !first_bytes) die("out of memory");
  for (int o = 0; o < outputs; o++) {
    const TfLiteTensor *t = TfLiteInterpreterGetOutputTensor(interpreter, o);
    write_output(argv[2], o, "", t);
    first_bytes[o] = TfLiteTensorByteSize(t);
    first[o] = malloc(first_bytes[o] ? first_bytes[o] : 1);
    if (!first[o]) die("out of memory");
    memcpy(first[o], TfLiteTensorData(t), first_bytes[o]);
  }
  if (TfLiteInterpreterInvoke(interpreter) != kTfLiteOk) die("the second invoke failed");
  for (int o = 0; o < outputs; o++) {
    const TfLiteTensor *t = TfLiteInterpreterGetOutputTensor(interpreter, o);
    if (TfLiteTensorByteSize(t) != first_bytes[o] || memcmp(TfLiteTensorData(t), first[o], first_bytes[o]) != 0) {
      write_output(argv[2], o, ".second", t);
    }
    free(first[o]);
  }
  free(first);
  free(first_bytes);
  tflite_run_close(&run);
  return 0;
}
