/* tflite-invokes.c - run a model several times in one TFLite interpreter and keep every invoke's outputs:
 * the expected outputs of ops whose results change from one invoke to the next (the random ops draw on
 * from where the last invoke left their generator). A developer tool of tools/make-op-cases.sh, built
 * there against TFLite 2.9's C headers and library (tools/fetch-tflite-c.sh).
 *
 *   tflite-invokes MODEL.tflite INVOKES OUT_DIR [IN_0.npy ...]
 *
 * Builtin kernels only, one thread. The inputs (.npy, version 1, the input's type and byte size; none for a
 * model without inputs) are copied in once; invoke K (1-based) writes OUT_DIR/out_I.invoke_K.npy for each
 * output I, in the output's shape after that invoke. Exits 1 on any failure, with the reason on stderr. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/lite/c/c_api.h"

static void die(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("tflite-invokes: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  exit(1);
}

static const char *npy_descr(TfLiteType type) {
  switch (type) {
    case kTfLiteFloat32: return "<f4";
    case kTfLiteInt32: return "<i4";
    case kTfLiteInt64: return "<i8";
    case kTfLiteUInt8: return "|u1";
    case kTfLiteInt8: return "|i1";
    case kTfLiteInt16: return "<i2";
    case kTfLiteBool: return "|b1";
    default: return NULL;
  }
}

/* The data of a version 1 .npy file: its bytes after the header. */
static void *read_npy(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open %s", path);
  unsigned char head[10];
  if (fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0 || head[6] != 1) die("%s: not a version 1 .npy", path);
  const long header = head[8] | (head[9] << 8);
  if (fseek(f, 0, SEEK_END) != 0) die("%s: cannot seek", path);
  const long total = ftell(f);
  if (total < 10 + header) die("%s: truncated", path);
  *size = (size_t)(total - 10 - header);
  void *data = malloc(*size ? *size : 1);
  if (!data || fseek(f, 10 + header, SEEK_SET) != 0 || fread(data, 1, *size, f) != *size) die("%s: cannot read", path);
  fclose(f);
  return data;
}

static void write_npy(const char *path, const TfLiteTensor *t) {
  const char *descr = npy_descr(TfLiteTensorType(t));
  if (!descr) die("output type %d has no .npy type here", (int)TfLiteTensorType(t));
  char shape[256] = "";
  const int rank = TfLiteTensorNumDims(t);
  for (int d = 0; d < rank; d++) {
    char dim[32];
    snprintf(dim, sizeof dim, d ? ", %d" : "%d", TfLiteTensorDim(t, d));
    strncat(shape, dim, sizeof shape - strlen(shape) - 1);
  }
  if (rank == 1) strncat(shape, ",", sizeof shape - strlen(shape) - 1);
  char header[512];
  int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
  while ((10 + n + 1) % 64 != 0) header[n++] = ' ';
  header[n++] = '\n';
  FILE *f = fopen(path, "wb");
  if (!f) die("cannot write %s", path);
  const unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff), (unsigned char)(n >> 8)};
  const size_t bytes = TfLiteTensorByteSize(t);
  if (fwrite(head, 1, 10, f) != 10 || fwrite(header, 1, (size_t)n, f) != (size_t)n ||
      (bytes && fwrite(TfLiteTensorData(t), 1, bytes, f) != bytes) || fclose(f) != 0) {
    die("cannot write %s", path);
  }
}

int main(int argc, char **argv) {
  if (argc < 4) die("usage: tflite-invokes MODEL.tflite INVOKES OUT_DIR [IN_0.npy ...]");
  const int invokes = atoi(argv[2]);
  if (invokes < 1) die("INVOKES must be at least 1");
  TfLiteModel *model = TfLiteModelCreateFromFile(argv[1]);
  if (!model) die("cannot load %s", argv[1]);
  TfLiteInterpreterOptions *options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetNumThreads(options, 1);
  TfLiteInterpreter *interpreter = TfLiteInterpreterCreate(model, options);
  if (!interpreter) die("cannot create an interpreter for %s", argv[1]);
  if (TfLiteInterpreterAllocateTensors(interpreter) != kTfLiteOk) die("AllocateTensors failed");
  const int inputs = TfLiteInterpreterGetInputTensorCount(interpreter);
  if (argc - 4 != inputs) die("the model has %d inputs, %d files given", inputs, argc - 4);
  for (int i = 0; i < inputs; i++) {
    size_t size = 0;
    void *data = read_npy(argv[4 + i], &size);
    TfLiteTensor *t = TfLiteInterpreterGetInputTensor(interpreter, i);
    if (size != TfLiteTensorByteSize(t)) die("%s: %zu bytes for an input of %zu", argv[4 + i], size, TfLiteTensorByteSize(t));
    if (TfLiteTensorCopyFromBuffer(t, data, size) != kTfLiteOk) die("cannot set input %d", i);
    free(data);
  }
  for (int k = 1; k <= invokes; k++) {
    if (TfLiteInterpreterInvoke(interpreter) != kTfLiteOk) die("invoke %d failed", k);
    for (int o = 0; o < TfLiteInterpreterGetOutputTensorCount(interpreter); o++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/out_%d.invoke_%d.npy", argv[3], o, k);
      write_npy(path, TfLiteInterpreterGetOutputTensor(interpreter, o));
    }
  }
  TfLiteInterpreterDelete(interpreter);
  TfLiteInterpreterOptionsDelete(options);
  TfLiteModelDelete(model);
  return 0;
}
