// Declarations of the TFLite C API functions that baton's libtensorflowlite_c.so exports beyond the
// pinned 2.9 headers (c_api.h, c_api_types.h, common.h of npm tfjs-tflite-node@0.0.2): those of
// c_api_experimental.h that the 2.9 library exports, the signature-runner functions later TFLite
// versions added to c_api.h, and the XNNPACK delegate's three functions (xnnpack_delegate.h), each with
// the signature TFLite's headers give it. An application written against those headers includes them;
// this header is only for the library's own sources and its tests.
#ifndef BATON_TFLITE_EXTRAS_H
#define BATON_TFLITE_EXTRAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/lite/c/c_api.h"
#include "tensorflow/lite/c/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TfLiteBuiltinOperator (builtin_ops.h) is an enum: an int across the ABI. */
typedef int TfLiteBuiltinOperatorValue;

/* c_api_experimental.h */
TFL_CAPI_EXPORT extern TfLiteStatus TfLiteInterpreterResetVariableTensors(TfLiteInterpreter* interpreter);
TFL_CAPI_EXPORT extern void TfLiteInterpreterOptionsAddBuiltinOp(TfLiteInterpreterOptions* options,
                                                                 TfLiteBuiltinOperatorValue op,
                                                                 const TfLiteRegistration* registration,
                                                                 int32_t min_version, int32_t max_version);
TFL_CAPI_EXPORT extern void TfLiteInterpreterOptionsAddCustomOp(TfLiteInterpreterOptions* options, const char* name,
                                                                const TfLiteRegistration* registration,
                                                                int32_t min_version, int32_t max_version);
TFL_CAPI_EXPORT extern void TfLiteInterpreterOptionsSetOpResolver(
    TfLiteInterpreterOptions* options,
    const TfLiteRegistration* (*find_builtin_op)(void* user_data, TfLiteBuiltinOperatorValue op, int version),
    const TfLiteRegistration* (*find_custom_op)(void* user_data, const char* custom_op, int version),
    void* op_resolver_user_data);
TFL_CAPI_EXPORT extern TfLiteInterpreter* TfLiteInterpreterCreateWithSelectedOps(
    const TfLiteModel* model, const TfLiteInterpreterOptions* options);
TFL_CAPI_EXPORT extern void TfLiteInterpreterOptionsSetUseNNAPI(TfLiteInterpreterOptions* options, bool enable);
TFL_CAPI_EXPORT extern void TfLiteInterpreterOptionsSetEnableDelegateFallback(TfLiteInterpreterOptions* options,
                                                                              bool enable);
TFL_CAPI_EXPORT extern void TfLiteSetAllowBufferHandleOutput(const TfLiteInterpreter* interpreter,
                                                             bool allow_buffer_handle_output);
TFL_CAPI_EXPORT extern TfLiteStatus TfLiteInterpreterModifyGraphWithDelegate(const TfLiteInterpreter* interpreter,
                                                                             TfLiteDelegate* delegate);
TFL_CAPI_EXPORT extern int32_t TfLiteInterpreterGetInputTensorIndex(const TfLiteInterpreter* interpreter,
                                                                    int32_t input_index);
TFL_CAPI_EXPORT extern int32_t TfLiteInterpreterGetOutputTensorIndex(const TfLiteInterpreter* interpreter,
                                                                     int32_t output_index);

/* c_api_experimental.h of later TFLite versions. */
TFL_CAPI_EXPORT extern TfLiteStatus TfLiteInterpreterCancel(const TfLiteInterpreter* interpreter);

/* Signature runners (c_api.h of later TFLite versions). */
typedef struct TfLiteSignatureRunner TfLiteSignatureRunner;
TFL_CAPI_EXPORT extern int32_t TfLiteInterpreterGetSignatureCount(const TfLiteInterpreter* interpreter);
TFL_CAPI_EXPORT extern const char* TfLiteInterpreterGetSignatureKey(const TfLiteInterpreter* interpreter,
                                                                    int32_t signature_index);
TFL_CAPI_EXPORT extern TfLiteSignatureRunner* TfLiteInterpreterGetSignatureRunner(const TfLiteInterpreter* interpreter,
                                                                                  const char* signature_key);
TFL_CAPI_EXPORT extern size_t TfLiteSignatureRunnerGetInputCount(const TfLiteSignatureRunner* signature_runner);
TFL_CAPI_EXPORT extern const char* TfLiteSignatureRunnerGetInputName(const TfLiteSignatureRunner* signature_runner,
                                                                     int32_t input_index);
TFL_CAPI_EXPORT extern TfLiteStatus TfLiteSignatureRunnerResizeInputTensor(TfLiteSignatureRunner* signature_runner,
                                                                           const char* input_name,
                                                                           const int* input_dims,
                                                                           int32_t input_dims_size);
TFL_CAPI_EXPORT extern TfLiteStatus TfLiteSignatureRunnerAllocateTensors(TfLiteSignatureRunner* signature_runner);
TFL_CAPI_EXPORT extern TfLiteTensor* TfLiteSignatureRunnerGetInputTensor(TfLiteSignatureRunner* signature_runner,
                                                                         const char* input_name);
TFL_CAPI_EXPORT extern TfLiteStatus TfLiteSignatureRunnerInvoke(TfLiteSignatureRunner* signature_runner);
TFL_CAPI_EXPORT extern size_t TfLiteSignatureRunnerGetOutputCount(const TfLiteSignatureRunner* signature_runner);
TFL_CAPI_EXPORT extern const char* TfLiteSignatureRunnerGetOutputName(const TfLiteSignatureRunner* signature_runner,
                                                                      int32_t output_index);
TFL_CAPI_EXPORT extern const TfLiteTensor* TfLiteSignatureRunnerGetOutputTensor(
    const TfLiteSignatureRunner* signature_runner, const char* output_name);
TFL_CAPI_EXPORT extern void TfLiteSignatureRunnerDelete(TfLiteSignatureRunner* signature_runner);

/* xnnpack_delegate.h of TFLite 2.9 */
typedef struct {
  int32_t num_threads; /* 0 or less: the interpreter's thread count */
  uint32_t flags;      /* TFLITE_XNNPACK_DELEGATE_FLAG_QS8 = 1, _QU8 = 2 */
} TfLiteXNNPackDelegateOptions;
TFL_CAPI_EXPORT extern TfLiteXNNPackDelegateOptions TfLiteXNNPackDelegateOptionsDefault(void);
TFL_CAPI_EXPORT extern TfLiteDelegate* TfLiteXNNPackDelegateCreate(const TfLiteXNNPackDelegateOptions* options);
TFL_CAPI_EXPORT extern void TfLiteXNNPackDelegateDelete(TfLiteDelegate* delegate);
TFL_CAPI_EXPORT extern void* TfLiteXNNPackDelegateGetThreadPool(TfLiteDelegate* delegate);

#ifdef __cplusplus
}
#endif

#endif  // BATON_TFLITE_EXTRAS_H
