/* tflite-run.h - what the developer tools that run a model in TFLite 2.9 through its C API share
 * (tools/tflite-invokes.c, tools/tflite-strings.c; tools/make-cases.sh builds them against the headers and
 * library of tools/fetch-tflite-c.sh): an interpreter with builtin kernels and one thread, its inputs
 * fed from files, its outputs written to files. Each tool defines TOOL_NAME (the prefix of its error
 * messages) before it includes this; every failure exits 1 with the reason on stderr.
 *
 * An input file IN.npy (version 1) holds a numeric input's bytes, which must be the input's byte size;
 * IN.str a string input's value as TFLite's packed buffer (int32 count, count + 1 int32 offsets, the
 * bytes), given the way TFLite's own string writer gives one (TfLiteTensorRealloc on the tensor, then
 * the bytes): the C API copies only into tensors of a fixed size. An output is written as
 * DIR/out_I{SUFFIX}.npy, in its shape at that moment, or DIR/out_I{SUFFIX}.str (a string output: its
 * packed buffer as TFLite left it). */
#ifndef BATON_TOOLS_TESTGEN_TFLITE_RUN_H
#define BATON_TOOLS_TESTGEN_TFLITE_RUN_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/lite/c/c_api.h"
#include "tensorflow/lite/c/common.h"

#ifndef TOOL_NAME
#error "define TOOL_NAME before including tflite-run.h"
#endif

static void die(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs(TOOL_NAME ": ", stderr);
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

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open %s", path);
  if (fseek(f, 0, SEEK_END) != 0) die("%s: cannot seek", path);
  const long total = ftell(f);
  if (total < 0 || fseek(f, 0, SEEK_SET) != 0) die("%s: cannot seek", path);
  *size = (size_t)total;
  void *data = malloc(*size ? *size : 1);
  if (!data || fread(data, 1, *size, f) != *size) die("%s: cannot read", path);
  fclose(f);
  return data;
}

/* The data of a version 1 .npy file: its bytes after the header (moved to the start of the block). */
static void *read_npy(const char *path, size_t *size) {
  size_t total = 0;
  unsigned char *file = read_file(path, &total);
  if (total < 10 || memcmp(file, "\x93NUMPY", 6) != 0 || file[6] != 1) die("%s: not a version 1 .npy", path);
  const size_t header = file[8] | (file[9] << 8);
  if (total < 10 + header) die("%s: truncated", path);
  *size = total - 10 - header;
  memmove(file, file + 10 + header, *size);
  return file;
}

static int ends_with(const char *s, const char *suffix) {
  const size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void write_bytes(FILE *f, const char *path, const void *data, size_t bytes) {
  if (bytes && fwrite(data, 1, bytes, f) != bytes) die("cannot write %s", path);
}

/* Writes output `o` to DIR/out_O{suffix}.str or .npy. */
static void write_output(const char *dir, int o, const char *suffix, const TfLiteTensor *t) {
  char path[4096];
  const size_t bytes = TfLiteTensorByteSize(t);
  if (TfLiteTensorType(t) == kTfLiteString) {
    snprintf(path, sizeof path, "%s/out_%d%s.str", dir, o, suffix);
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot write %s", path);
    write_bytes(f, path, TfLiteTensorData(t), bytes);
    if (fclose(f) != 0) die("cannot write %s", path);
    return;
  }
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
  snprintf(path, sizeof path, "%s/out_%d%s.npy", dir, o, suffix);
  FILE *f = fopen(path, "wb");
  if (!f) die("cannot write %s", path);
  const unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff), (unsigned char)(n >> 8)};
  write_bytes(f, path, head, 10);
  write_bytes(f, path, header, (size_t)n);
  write_bytes(f, path, TfLiteTensorData(t), bytes);
  if (fclose(f) != 0) die("cannot write %s", path);
}

/* A model in an interpreter: builtin kernels only, one thread, tensors allocated. */
typedef struct {
  TfLiteModel *model;
  TfLiteInterpreterOptions *options;
  TfLiteInterpreter *interpreter;
} TfliteRun;

static TfliteRun tflite_run_open(const char *model_path) {
  TfliteRun run;
  run.model = TfLiteModelCreateFromFile(model_path);
  if (!run.model) die("cannot load %s", model_path);
  run.options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetNumThreads(run.options, 1);
  run.interpreter = TfLiteInterpreterCreate(run.model, run.options);
  if (!run.interpreter) die("cannot create an interpreter for %s", model_path);
  if (TfLiteInterpreterAllocateTensors(run.interpreter) != kTfLiteOk) die("AllocateTensors failed");
  return run;
}

/* Feeds `count` input files, one per model input in order (.str or .npy). */
static void tflite_run_set_inputs(TfliteRun *run, char **files, int count) {
  const int inputs = TfLiteInterpreterGetInputTensorCount(run->interpreter);
  if (count != inputs) die("the model has %d inputs, %d files given", inputs, count);
  for (int i = 0; i < inputs; i++) {
    const char *file = files[i];
    TfLiteTensor *t = TfLiteInterpreterGetInputTensor(run->interpreter, i);
    size_t size = 0;
    if (ends_with(file, ".str")) {
      if (TfLiteTensorType(t) != kTfLiteString) die("%s: input %d is not a string tensor", file, i);
      void *data = read_file(file, &size);
      TfLiteTensorRealloc(size, t);
      memcpy(t->data.raw, data, size);
      free(data);
      continue;
    }
    void *data = read_npy(file, &size);
    if (size != TfLiteTensorByteSize(t)) die("%s: %zu bytes for an input of %zu", file, size, TfLiteTensorByteSize(t));
    if (TfLiteTensorCopyFromBuffer(t, data, size) != kTfLiteOk) die("cannot set input %d", i);
    free(data);
  }
}

static void tflite_run_close(TfliteRun *run) {
  TfLiteInterpreterDelete(run->interpreter);
  TfLiteInterpreterOptionsDelete(run->options);
  TfLiteModelDelete(run->model);
}

#endif
