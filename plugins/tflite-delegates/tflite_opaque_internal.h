// The loader's side of TFLite's opaque API (tflite_opaque_api.h): what the opaque handles are, for the
// code that hands them out (tflite_opaque.cc, tflite_graph.cc, tflite_kernel.cc). A stable delegate never
// sees these definitions.
#pragma once

#include "tflite_opaque_api.h"

// A kernel registration made through TfLiteRegistrationExternalCreate (ours: TFLite's own is private
// too). The loader owns the ones handed to ReplaceNodeSubsetsWithDelegateKernels, as TFLite does, and
// those it makes for GetNodeAndRegistration.
struct TfLiteRegistrationExternal {
  TfLiteBuiltinOperatorCode builtin_code = 0;
  const char* custom_name = nullptr;  // borrowed, as TFLite borrows it
  int version = 1;
  void* (*init)(TfLiteOpaqueContext* context, const char* buffer, size_t length) = nullptr;
  void (*free)(TfLiteOpaqueContext* context, void* data) = nullptr;
  TfLiteStatus (*prepare)(TfLiteOpaqueContext* context, TfLiteOpaqueNode* node) = nullptr;
  TfLiteStatus (*invoke)(TfLiteOpaqueContext* context, TfLiteOpaqueNode* node) = nullptr;
};

namespace tflite_delegates {

// A delegate made by TfLiteOpaqueDelegateCreate: a TfLiteDelegate of TFLite 2.9's layout followed by
// the field later TFLite versions appended (opaque_delegate_builder), then our copy of the builder. Its
// Prepare and buffer-handle functions forward to the builder's, so the rest of the loader hosts it
// like any TfLiteDelegate.
struct OpaqueDelegate {
  TfLiteDelegate base;
  TfLiteOpaqueDelegateBuilder* opaque_delegate_builder;
  TfLiteOpaqueDelegateBuilder builder;
};

inline TfLiteContext* context_of(TfLiteOpaqueContext* c) { return reinterpret_cast<TfLiteContext*>(c); }
inline const TfLiteContext* context_of(const TfLiteOpaqueContext* c) { return reinterpret_cast<const TfLiteContext*>(c); }
inline TfLiteOpaqueContext* opaque(TfLiteContext* c) { return reinterpret_cast<TfLiteOpaqueContext*>(c); }
inline TfLiteNode* node_of(TfLiteOpaqueNode* n) { return reinterpret_cast<TfLiteNode*>(n); }
inline const TfLiteNode* node_of(const TfLiteOpaqueNode* n) { return reinterpret_cast<const TfLiteNode*>(n); }
inline TfLiteOpaqueNode* opaque(TfLiteNode* n) { return reinterpret_cast<TfLiteOpaqueNode*>(n); }
inline TfLiteTensor* tensor_of(TfLiteOpaqueTensor* t) { return reinterpret_cast<TfLiteTensor*>(t); }
inline const TfLiteTensor* tensor_of(const TfLiteOpaqueTensor* t) { return reinterpret_cast<const TfLiteTensor*>(t); }
inline TfLiteOpaqueTensor* opaque(TfLiteTensor* t) { return reinterpret_cast<TfLiteOpaqueTensor*>(t); }
inline TfLiteOpaqueDelegate* opaque(TfLiteDelegate* d) { return reinterpret_cast<TfLiteOpaqueDelegate*>(d); }

}  // namespace tflite_delegates
