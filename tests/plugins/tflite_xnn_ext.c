/* A TFLite external delegate of ours for the tests: tflite_plugin_create_delegate returns Google's
 * XNNPACK delegate, TfLiteXNNPackDelegateCreate of the pinned TFLite 2.9 C library (npm
 * tfjs-tflite-node@0.0.2). The library's path comes from the option `library` or the environment
 * variable BATON_TEST_TFLITE_LIB; the option `threads` sets XNNPACK's thread count. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct TfLiteDelegate TfLiteDelegate;

/* TFLite 2.9's TfLiteXNNPackDelegateOptions starts with num_threads and flags; later fields are zero
 * (absent), so a larger zeroed block is read the same by every 2.x version. */
typedef struct {
  int32_t num_threads;
  uint32_t flags;
  unsigned char later_fields[56];
} XnnOptions;

static void* library;
static TfLiteDelegate* (*xnn_create)(const XnnOptions*);
static void (*xnn_delete)(TfLiteDelegate*);

EXPORT TfLiteDelegate* tflite_plugin_create_delegate(char** keys, char** values, size_t count,
                                                     void (*report_error)(const char*)) {
  const char* path = getenv("BATON_TEST_TFLITE_LIB");
  int threads = 1;
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(keys[i], "library") == 0) path = values[i];
    if (strcmp(keys[i], "threads") == 0) threads = atoi(values[i]);
  }
  if (!path || !*path) {
    report_error("no TFLite C library given (option `library` or BATON_TEST_TFLITE_LIB)");
    return NULL;
  }
  if (!library) {
    library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      report_error(dlerror());
      return NULL;
    }
    xnn_create = (TfLiteDelegate * (*)(const XnnOptions*)) dlsym(library, "TfLiteXNNPackDelegateCreate");
    xnn_delete = (void (*)(TfLiteDelegate*))dlsym(library, "TfLiteXNNPackDelegateDelete");
  }
  if (!xnn_create || !xnn_delete) {
    report_error("the TFLite C library has no TfLiteXNNPackDelegateCreate");
    return NULL;
  }
  XnnOptions options;
  memset(&options, 0, sizeof(options));
  options.num_threads = threads > 1 ? threads : 0; /* as TFLite itself asks for one thread */
  return xnn_create(&options);
}

EXPORT void tflite_plugin_destroy_delegate(TfLiteDelegate* delegate) {
  if (xnn_delete) xnn_delete(delegate);
}
