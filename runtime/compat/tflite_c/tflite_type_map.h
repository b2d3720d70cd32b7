// baton's element types (the model's TensorType values) as TFLite's C API numbers them (TfLiteType, of
// tensorflow/lite/c/c_api_types.h): shared by the TFLite-compatible library and the tflite-delegates
// loader, the two places that hand baton tensors to code written for TFLite.
#pragma once

#include "baton/plugin_api.h"
#include "tensorflow/lite/c/c_api_types.h"

inline TfLiteType tflite_type(baton_tensor_type t) {
  switch (t) {
    case BATON_TYPE_FLOAT32: return kTfLiteFloat32;
    case BATON_TYPE_FLOAT16: return kTfLiteFloat16;
    case BATON_TYPE_INT32: return kTfLiteInt32;
    case BATON_TYPE_UINT8: return kTfLiteUInt8;
    case BATON_TYPE_INT64: return kTfLiteInt64;
    case BATON_TYPE_STRING: return kTfLiteString;
    case BATON_TYPE_BOOL: return kTfLiteBool;
    case BATON_TYPE_INT16: return kTfLiteInt16;
    case BATON_TYPE_COMPLEX64: return kTfLiteComplex64;
    case BATON_TYPE_INT8: return kTfLiteInt8;
    case BATON_TYPE_FLOAT64: return kTfLiteFloat64;
    case BATON_TYPE_COMPLEX128: return kTfLiteComplex128;
    case BATON_TYPE_UINT64: return kTfLiteUInt64;
    case BATON_TYPE_RESOURCE: return kTfLiteResource;
    case BATON_TYPE_VARIANT: return kTfLiteVariant;
    case BATON_TYPE_UINT32: return kTfLiteUInt32;
    default: return kTfLiteNoType;  // types TFLite 2.9 does not have
  }
}
