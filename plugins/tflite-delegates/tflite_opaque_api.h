// TFLite's stable delegate ABI and the part of its opaque API that delegates call, declared by us from
// TFLite's public headers (the pinned 2.9 headers have neither): the TfLiteStableDelegate a stable
// delegate exports as TFL_TheStableDelegate (acceleration/configuration/c/stable_delegate.h and
// delegate_plugin.h, TFLite 2.12 and later), TfLiteOpaqueDelegateBuilder and TfLiteOpaqueDelegateParams
// (common.h, 2.11 and later), and the accessors of c_api_opaque.h and the TfLiteRegistrationExternal
// functions (2.11 to 2.15; TFLite 2.16 renamed them TfLiteOperator*, same signatures).
//
// The tflite-delegates loader defines these functions (tflite_opaque.cc) over its emulated TfLiteContext;
// test delegates of ours include this header as a stable delegate would include TFLite's. The opaque
// types are what TFLite's are underneath: a TfLiteOpaqueContext is a TfLiteContext, a TfLiteOpaqueNode
// a TfLiteNode, a TfLiteOpaqueTensor a TfLiteTensor, a TfLiteOpaqueDelegate a TfLiteDelegate; only the
// loader looks inside them.
#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/lite/c/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TfLiteOpaqueContext TfLiteOpaqueContext;
typedef struct TfLiteOpaqueNode TfLiteOpaqueNode;
typedef struct TfLiteOpaqueTensor TfLiteOpaqueTensor;
typedef struct TfLiteOpaqueDelegateStruct TfLiteOpaqueDelegate;
typedef struct TfLiteRegistrationExternal TfLiteRegistrationExternal;
typedef int TfLiteBuiltinOperatorCode;  // TfLiteBuiltinOperator (builtin_ops.h): kTfLiteBuiltinAdd = 0, ...

// common.h (2.11+). Fields in TFLite's order; TFLite only appends.
typedef struct TfLiteOpaqueDelegateBuilder {
  void* data;
  TfLiteStatus (*Prepare)(TfLiteOpaqueContext* context, TfLiteOpaqueDelegate* delegate, void* data);
  TfLiteStatus (*CopyFromBufferHandle)(TfLiteOpaqueContext* context, TfLiteOpaqueDelegate* delegate, void* data,
                                       TfLiteBufferHandle buffer_handle, TfLiteOpaqueTensor* tensor);
  TfLiteStatus (*CopyToBufferHandle)(TfLiteOpaqueContext* context, TfLiteOpaqueDelegate* delegate, void* data,
                                     TfLiteBufferHandle buffer_handle, TfLiteOpaqueTensor* tensor);
  void (*FreeBufferHandle)(TfLiteOpaqueContext* context, TfLiteOpaqueDelegate* delegate, void* data,
                           TfLiteBufferHandle* handle);
  int64_t flags;
} TfLiteOpaqueDelegateBuilder;

// What a delegate kernel's init receives (and its node's builtin data) for an opaque delegate.
typedef struct TfLiteOpaqueDelegateParams {
  TfLiteOpaqueDelegate* delegate;
  void* delegate_data;  // the builder's `data`
  TfLiteIntArray* nodes_to_replace;
  TfLiteIntArray* input_tensors;
  TfLiteIntArray* output_tensors;
} TfLiteOpaqueDelegateParams;

// delegate_plugin.h and stable_delegate.h (2.12+).
typedef TfLiteOpaqueDelegate* TfLiteOpaqueDelegatePluginCreateFunc(const void* tflite_settings);
typedef void TfLiteOpaqueDelegatePluginDestroyFunc(TfLiteOpaqueDelegate* delegate);
typedef int TfLiteOpaqueDelegatePluginGetDelegateErrnoFunc(TfLiteOpaqueDelegate* delegate);

typedef struct TfLiteOpaqueDelegatePlugin {
  TfLiteOpaqueDelegatePluginCreateFunc* create;
  TfLiteOpaqueDelegatePluginDestroyFunc* destroy;
  TfLiteOpaqueDelegatePluginGetDelegateErrnoFunc* get_delegate_errno;
} TfLiteOpaqueDelegatePlugin;

#define TFL_STABLE_DELEGATE_ABI_VERSION "1.0.0"
#define TFL_STABLE_DELEGATE_SYMBOL "TFL_TheStableDelegate"

typedef struct TfLiteStableDelegate {
  const char* delegate_abi_version;  // semver; major 1 is the only one there is
  const char* delegate_name;
  const char* delegate_version;
  const TfLiteOpaqueDelegatePlugin* delegate_plugin;
} TfLiteStableDelegate;

#if defined(BATON_TFLITE_OPAQUE_IMPLEMENTATION)
#define BATON_TFLITE_OPAQUE_API __attribute__((visibility("default")))
#else
#define BATON_TFLITE_OPAQUE_API
#endif

// ---- delegates ----
BATON_TFLITE_OPAQUE_API TfLiteOpaqueDelegate* TfLiteOpaqueDelegateCreate(const TfLiteOpaqueDelegateBuilder* builder);
BATON_TFLITE_OPAQUE_API void TfLiteOpaqueDelegateDelete(TfLiteOpaqueDelegate* delegate);
BATON_TFLITE_OPAQUE_API void* TfLiteOpaqueDelegateGetData(const TfLiteOpaqueDelegate* delegate);

// ---- kernel registrations (TfLiteRegistrationExternal, 2.11-2.15) ----
BATON_TFLITE_OPAQUE_API TfLiteRegistrationExternal* TfLiteRegistrationExternalCreate(
    TfLiteBuiltinOperatorCode builtin_code, const char* custom_name, int version);
BATON_TFLITE_OPAQUE_API void TfLiteRegistrationExternalDelete(TfLiteRegistrationExternal* registration);
BATON_TFLITE_OPAQUE_API TfLiteBuiltinOperatorCode
TfLiteRegistrationExternalGetBuiltInCode(const TfLiteRegistrationExternal* registration);
BATON_TFLITE_OPAQUE_API const char* TfLiteRegistrationExternalGetCustomName(
    const TfLiteRegistrationExternal* registration);
BATON_TFLITE_OPAQUE_API int TfLiteRegistrationExternalGetVersion(const TfLiteRegistrationExternal* registration);
BATON_TFLITE_OPAQUE_API void TfLiteRegistrationExternalSetInit(
    TfLiteRegistrationExternal* registration,
    void* (*init)(TfLiteOpaqueContext* context, const char* buffer, size_t length));
BATON_TFLITE_OPAQUE_API void TfLiteRegistrationExternalSetFree(TfLiteRegistrationExternal* registration,
                                                               void (*free)(TfLiteOpaqueContext* context, void* data));
BATON_TFLITE_OPAQUE_API void TfLiteRegistrationExternalSetPrepare(
    TfLiteRegistrationExternal* registration, TfLiteStatus (*prepare)(TfLiteOpaqueContext* context, TfLiteOpaqueNode* node));
BATON_TFLITE_OPAQUE_API void TfLiteRegistrationExternalSetInvoke(
    TfLiteRegistrationExternal* registration, TfLiteStatus (*invoke)(TfLiteOpaqueContext* context, TfLiteOpaqueNode* node));

// The same functions under TFLite 2.16's names (TfLiteOperator is what TfLiteRegistrationExternal became).
typedef TfLiteRegistrationExternal TfLiteOperator;
BATON_TFLITE_OPAQUE_API TfLiteOperator* TfLiteOperatorCreate(TfLiteBuiltinOperatorCode builtin_code,
                                                             const char* custom_name, int version);
BATON_TFLITE_OPAQUE_API void TfLiteOperatorDelete(TfLiteOperator* registration);
BATON_TFLITE_OPAQUE_API TfLiteBuiltinOperatorCode TfLiteOperatorGetBuiltInCode(const TfLiteOperator* registration);
BATON_TFLITE_OPAQUE_API const char* TfLiteOperatorGetCustomName(const TfLiteOperator* registration);
BATON_TFLITE_OPAQUE_API int TfLiteOperatorGetVersion(const TfLiteOperator* registration);
BATON_TFLITE_OPAQUE_API void TfLiteOperatorSetInit(TfLiteOperator* registration,
                                                   void* (*init)(TfLiteOpaqueContext* context, const char* buffer,
                                                                 size_t length));
BATON_TFLITE_OPAQUE_API void TfLiteOperatorSetFree(TfLiteOperator* registration,
                                                   void (*free)(TfLiteOpaqueContext* context, void* data));
BATON_TFLITE_OPAQUE_API void TfLiteOperatorSetPrepare(TfLiteOperator* registration,
                                                      TfLiteStatus (*prepare)(TfLiteOpaqueContext* context,
                                                                              TfLiteOpaqueNode* node));
BATON_TFLITE_OPAQUE_API void TfLiteOperatorSetInvoke(TfLiteOperator* registration,
                                                     TfLiteStatus (*invoke)(TfLiteOpaqueContext* context,
                                                                            TfLiteOpaqueNode* node));

// ---- tensors ----
BATON_TFLITE_OPAQUE_API TfLiteType TfLiteOpaqueTensorType(const TfLiteOpaqueTensor* tensor);
BATON_TFLITE_OPAQUE_API int32_t TfLiteOpaqueTensorNumDims(const TfLiteOpaqueTensor* tensor);
BATON_TFLITE_OPAQUE_API int32_t TfLiteOpaqueTensorDim(const TfLiteOpaqueTensor* tensor, int32_t dim_index);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueTensorGetNumDimsSignature(const TfLiteOpaqueTensor* tensor,
                                                                           int32_t* num_dims);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueTensorGetDimSignature(const TfLiteOpaqueTensor* tensor,
                                                                       int32_t dim_index, int32_t* dim_length);
BATON_TFLITE_OPAQUE_API int TfLiteOpaqueTensorIsVariable(const TfLiteOpaqueTensor* tensor);
BATON_TFLITE_OPAQUE_API size_t TfLiteOpaqueTensorByteSize(const TfLiteOpaqueTensor* tensor);
BATON_TFLITE_OPAQUE_API void* TfLiteOpaqueTensorData(const TfLiteOpaqueTensor* tensor);
BATON_TFLITE_OPAQUE_API TfLiteAllocationType TfLiteOpaqueTensorGetAllocationType(const TfLiteOpaqueTensor* tensor);
BATON_TFLITE_OPAQUE_API const char* TfLiteOpaqueTensorName(const TfLiteOpaqueTensor* tensor);
BATON_TFLITE_OPAQUE_API TfLiteQuantization TfLiteOpaqueTensorGetQuantization(const TfLiteOpaqueTensor* tensor);
BATON_TFLITE_OPAQUE_API TfLiteQuantizationParams
TfLiteOpaqueTensorGetQuantizationParams(const TfLiteOpaqueTensor* tensor);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueTensorCopyFromBuffer(TfLiteOpaqueTensor* tensor, const void* input_data,
                                                                      size_t input_data_size);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueTensorCopyToBuffer(const TfLiteOpaqueTensor* tensor, void* output_data,
                                                                    size_t output_data_size);

// ---- nodes ----
BATON_TFLITE_OPAQUE_API const TfLiteOpaqueTensor* TfLiteOpaqueNodeGetInput(const TfLiteOpaqueContext* context,
                                                                           const TfLiteOpaqueNode* node, int index);
BATON_TFLITE_OPAQUE_API TfLiteOpaqueTensor* TfLiteOpaqueNodeGetOutput(TfLiteOpaqueContext* context,
                                                                      const TfLiteOpaqueNode* node, int index);
BATON_TFLITE_OPAQUE_API int TfLiteOpaqueNodeNumberOfInputs(const TfLiteOpaqueNode* node);
BATON_TFLITE_OPAQUE_API int TfLiteOpaqueNodeNumberOfOutputs(const TfLiteOpaqueNode* node);
BATON_TFLITE_OPAQUE_API void* TfLiteOpaqueNodeGetUserData(const TfLiteOpaqueNode* node);
BATON_TFLITE_OPAQUE_API void* TfLiteOpaqueNodeGetBuiltinData(const TfLiteOpaqueNode* node);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueNodeGetCustomInitialData(const TfLiteOpaqueNode* node,
                                                                          const void** init_data, int* size);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueNodeInputs(const TfLiteOpaqueNode* node, const int** inputs,
                                                            int* num_inputs);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueNodeOutputs(const TfLiteOpaqueNode* node, const int** outputs,
                                                             int* num_outputs);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueNodeTemporaries(const TfLiteOpaqueNode* node, const int** temporaries,
                                                                 int* num_temporaries);
BATON_TFLITE_OPAQUE_API int TfLiteOpaqueNodeGetInputTensorIndex(const TfLiteOpaqueNode* node, int index_of_input);
BATON_TFLITE_OPAQUE_API int TfLiteOpaqueNodeGetOutputTensorIndex(const TfLiteOpaqueNode* node, int index_of_output);

// ---- contexts ----
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueContextGetExecutionPlan(TfLiteOpaqueContext* context,
                                                                         TfLiteIntArray** execution_plan);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueContextGetNodeAndRegistration(
    TfLiteOpaqueContext* context, int node_index, TfLiteOpaqueNode** node, TfLiteRegistrationExternal** registration);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueContextReplaceNodeSubsetsWithDelegateKernels(
    TfLiteOpaqueContext* context, TfLiteRegistrationExternal* registration, const TfLiteIntArray* nodes_to_replace,
    TfLiteOpaqueDelegate* delegate);
BATON_TFLITE_OPAQUE_API TfLiteOpaqueTensor* TfLiteOpaqueContextGetOpaqueTensor(const TfLiteOpaqueContext* context,
                                                                               int index);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueContextGetInputs(const TfLiteOpaqueContext* context,
                                                                  const int** inputs, int* num_inputs);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueContextGetOutputs(const TfLiteOpaqueContext* context,
                                                                   const int** outputs, int* num_outputs);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueContextGetVariables(const TfLiteOpaqueContext* context,
                                                                     const int** variables, int* num_variables);
BATON_TFLITE_OPAQUE_API size_t TfLiteOpaqueContextGetNumNodes(const TfLiteOpaqueContext* context);
BATON_TFLITE_OPAQUE_API size_t TfLiteOpaqueContextGetNumTensors(const TfLiteOpaqueContext* context);
BATON_TFLITE_OPAQUE_API const char* TfLiteOpaqueContextGetName(const TfLiteOpaqueContext* context);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueContextResizeTensor(TfLiteOpaqueContext* context,
                                                                     TfLiteOpaqueTensor* tensor, TfLiteIntArray* new_size);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueContextAcquireSubgraphContext(TfLiteOpaqueContext* context,
                                                                               int subgraph_index,
                                                                               TfLiteOpaqueContext** acquired);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueContextReleaseSubgraphContext(TfLiteOpaqueContext* context,
                                                                               int subgraph_index);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueContextMarkSubgraphAsDelegationSkippable(TfLiteOpaqueContext* context,
                                                                                          int subgraph_index);
BATON_TFLITE_OPAQUE_API TfLiteStatus TfLiteOpaqueContextGetSizeOfType(TfLiteOpaqueContext* context, TfLiteType type,
                                                                      size_t* bytes);
BATON_TFLITE_OPAQUE_API void TfLiteOpaqueContextReportError(TfLiteOpaqueContext* context, const char* format, ...);
BATON_TFLITE_OPAQUE_API void TfLiteOpaqueContextReportErrorVa(TfLiteOpaqueContext* context, const char* format,
                                                              va_list args);

#ifdef __cplusplus
}  // extern "C"
#endif
