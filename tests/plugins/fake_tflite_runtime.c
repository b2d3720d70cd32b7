/* Stands in for another TFLite runtime with the opaque API in the process (a program linked against
 * TFLite 2.11+): preloaded, it answers first for the opaque API's names, and the tflite-delegates loader
 * must refuse to open stable delegates that would bind to it. Never called. */
#define EXPORT __attribute__((visibility("default")))

EXPORT int TfLiteOpaqueContextReplaceNodeSubsetsWithDelegateKernels(void* context, void* registration,
                                                                     const void* nodes, void* delegate) {
  (void)context;
  (void)registration;
  (void)nodes;
  (void)delegate;
  return 1; /* kTfLiteError */
}
