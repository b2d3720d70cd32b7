// The helpers of TFLite 2.9's common.h that its C library exports (arrays, tensor memory, type names,
// the empty delegate), as that header documents them. They own nothing of baton's.
#include <cstdlib>
#include <cstring>

#include "tensorflow/lite/c/common.h"

extern "C" {

size_t TfLiteIntArrayGetSizeInBytes(int size) { return sizeof(TfLiteIntArray) + sizeof(int) * static_cast<size_t>(size); }

TfLiteIntArray* TfLiteIntArrayCreate(int size) {
  if (size < 0) return nullptr;
  auto* a = static_cast<TfLiteIntArray*>(std::malloc(TfLiteIntArrayGetSizeInBytes(size)));
  if (a) a->size = size;
  return a;
}

int TfLiteIntArrayEqual(const TfLiteIntArray* a, const TfLiteIntArray* b) {
  if (a == b) return 1;
  if (!a || !b) return 0;
  return TfLiteIntArrayEqualsArray(a, b->size, b->data);
}

int TfLiteIntArrayEqualsArray(const TfLiteIntArray* a, int b_size, const int b_data[]) {
  if (!a) return b_size == 0;
  if (a->size != b_size) return 0;
  for (int i = 0; i < b_size; ++i) {
    if (a->data[i] != b_data[i]) return 0;
  }
  return 1;
}

TfLiteIntArray* TfLiteIntArrayCopy(const TfLiteIntArray* src) {
  if (!src) return nullptr;
  TfLiteIntArray* a = TfLiteIntArrayCreate(src->size);
  if (a && src->size > 0) std::memcpy(a->data, src->data, sizeof(int) * static_cast<size_t>(src->size));
  return a;
}

void TfLiteIntArrayFree(TfLiteIntArray* a) { std::free(a); }

int TfLiteFloatArrayGetSizeInBytes(int size) {
  return static_cast<int>(sizeof(TfLiteFloatArray) + sizeof(float) * static_cast<size_t>(size));
}

TfLiteFloatArray* TfLiteFloatArrayCreate(int size) {
  if (size < 0) return nullptr;
  auto* a = static_cast<TfLiteFloatArray*>(std::malloc(static_cast<size_t>(TfLiteFloatArrayGetSizeInBytes(size))));
  if (a) a->size = size;
  return a;
}

void TfLiteFloatArrayFree(TfLiteFloatArray* a) { std::free(a); }

void TfLiteTensorDataFree(TfLiteTensor* t) {
  if (t->allocation_type == kTfLiteDynamic || t->allocation_type == kTfLiteArenaRwPersistent) {
    std::free(t->data.raw);
  }
  t->data.raw = nullptr;
}

void TfLiteQuantizationFree(TfLiteQuantization* quantization) {
  if (quantization->type == kTfLiteAffineQuantization && quantization->params) {
    auto* q = static_cast<TfLiteAffineQuantization*>(quantization->params);
    TfLiteFloatArrayFree(q->scale);
    TfLiteIntArrayFree(q->zero_point);
    std::free(q);
  }
  quantization->params = nullptr;
  quantization->type = kTfLiteNoQuantization;
}

void TfLiteSparsityFree(TfLiteSparsity* sparsity) {
  if (!sparsity) return;
  TfLiteIntArrayFree(sparsity->traversal_order);
  TfLiteIntArrayFree(sparsity->block_map);
  if (sparsity->dim_metadata) {
    for (int i = 0; i < sparsity->dim_metadata_size; ++i) {
      TfLiteIntArrayFree(sparsity->dim_metadata[i].array_segments);
      TfLiteIntArrayFree(sparsity->dim_metadata[i].array_indices);
    }
    std::free(sparsity->dim_metadata);
  }
  std::free(sparsity);
}

void TfLiteTensorFree(TfLiteTensor* t) {
  TfLiteTensorDataFree(t);
  if (t->dims) TfLiteIntArrayFree(t->dims);
  t->dims = nullptr;
  if (t->dims_signature) TfLiteIntArrayFree(const_cast<TfLiteIntArray*>(t->dims_signature));
  t->dims_signature = nullptr;
  TfLiteQuantizationFree(&t->quantization);
  TfLiteSparsityFree(t->sparsity);
  t->sparsity = nullptr;
}

void TfLiteTensorReset(TfLiteType type, const char* name, TfLiteIntArray* dims, TfLiteQuantizationParams quantization,
                       char* buffer, size_t size, TfLiteAllocationType allocation_type, const void* allocation,
                       bool is_variable, TfLiteTensor* tensor) {
  TfLiteTensorFree(tensor);
  tensor->type = type;
  tensor->name = name;
  tensor->dims = dims;
  tensor->params = quantization;
  tensor->data.raw = buffer;
  tensor->bytes = size;
  tensor->buffer_handle = kTfLiteNullBufferHandle;
  tensor->data_is_stale = false;
  tensor->delegate = nullptr;
  tensor->allocation_type = allocation_type;
  tensor->allocation = allocation;
  tensor->is_variable = is_variable;
  tensor->quantization.type = kTfLiteNoQuantization;
  tensor->quantization.params = nullptr;
}

TfLiteStatus TfLiteTensorCopy(const TfLiteTensor* src, TfLiteTensor* dst) {
  if (!src || !dst) return kTfLiteOk;
  if (src->bytes != dst->bytes) return kTfLiteError;
  if (src == dst) return kTfLiteOk;
  dst->type = src->type;
  if (dst->dims) TfLiteIntArrayFree(dst->dims);
  dst->dims = TfLiteIntArrayCopy(src->dims);
  if (src->bytes) std::memcpy(dst->data.raw, src->data.raw, src->bytes);
  dst->buffer_handle = src->buffer_handle;
  dst->data_is_stale = src->data_is_stale;
  dst->delegate = src->delegate;
  return kTfLiteOk;
}

void TfLiteTensorRealloc(size_t num_bytes, TfLiteTensor* tensor) {
  if (tensor->allocation_type != kTfLiteDynamic) return;
  void* grown = std::realloc(tensor->data.raw, num_bytes ? num_bytes : 1);
  if (!grown) return;  // the old buffer stays valid, as realloc leaves it
  tensor->data.raw = static_cast<char*>(grown);
  tensor->bytes = num_bytes;
}

const char* TfLiteTypeGetName(TfLiteType type) {
  switch (type) {
    case kTfLiteNoType: return "NOTYPE";
    case kTfLiteFloat32: return "FLOAT32";
    case kTfLiteInt16: return "INT16";
    case kTfLiteInt32: return "INT32";
    case kTfLiteUInt32: return "UINT32";
    case kTfLiteUInt8: return "UINT8";
    case kTfLiteInt8: return "INT8";
    case kTfLiteInt64: return "INT64";
    case kTfLiteUInt64: return "UINT64";
    case kTfLiteBool: return "BOOL";
    case kTfLiteComplex64: return "COMPLEX64";
    case kTfLiteComplex128: return "COMPLEX128";
    case kTfLiteString: return "STRING";
    case kTfLiteFloat16: return "FLOAT16";
    case kTfLiteFloat64: return "FLOAT64";
    case kTfLiteResource: return "RESOURCE";
    case kTfLiteVariant: return "VARIANT";
  }
  return "Unknown type";
}

TfLiteDelegate TfLiteDelegateCreate(void) {
  TfLiteDelegate d{};
  d.flags = kTfLiteDelegateFlagsNone;
  return d;
}

}  // extern "C"
