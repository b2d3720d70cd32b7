// TFLite's opaque API (tflite_opaque_api.h) over the loader's emulated TfLiteContext, for stable
// delegates. Every opaque handle is the TfLite struct TFLite itself has underneath (a TfLiteOpaqueContext
// is the TfliteGraph's TfLiteContext, a node a TfLiteNode, a tensor an entry of context->tensors), so
// each function is the TfLiteContext call or field a delegate of the TfLiteContext API would use, and the
// checks of the emulation (ReplaceNodeSubsetsWithDelegateKernels' refusals, ResizeTensor's limits) hold
// for both kinds of delegate.
//
// How a stable delegate finds these functions: it is built with them undefined, to be resolved against
// the TFLite runtime of the process. The loader exports them (default visibility; everything else of
// it is hidden) and, before it opens the first stable delegate, adds itself to the process's global
// symbol scope (stable_delegates.cc), so the stable delegate's references bind here.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "tflite_graph.h"
#include "tflite_opaque_internal.h"

using tflite_delegates::context_of;
using tflite_delegates::node_of;
using tflite_delegates::OpaqueDelegate;
using tflite_delegates::opaque;
using tflite_delegates::tensor_of;
using tflite_delegates::TfliteGraph;

namespace {

// The TfLiteDelegate functions of a delegate made by TfLiteOpaqueDelegateCreate forward to its builder.
TfLiteStatus forward_prepare(TfLiteContext* context, TfLiteDelegate* delegate) {
  const TfLiteOpaqueDelegateBuilder* b = reinterpret_cast<OpaqueDelegate*>(delegate)->opaque_delegate_builder;
  return b->Prepare ? b->Prepare(opaque(context), opaque(delegate), b->data) : kTfLiteOk;
}

TfLiteStatus forward_copy_from(TfLiteContext* context, TfLiteDelegate* delegate, TfLiteBufferHandle handle,
                               TfLiteTensor* tensor) {
  const TfLiteOpaqueDelegateBuilder* b = reinterpret_cast<OpaqueDelegate*>(delegate)->opaque_delegate_builder;
  return b->CopyFromBufferHandle(opaque(context), opaque(delegate), b->data, handle, opaque(tensor));
}

TfLiteStatus forward_copy_to(TfLiteContext* context, TfLiteDelegate* delegate, TfLiteBufferHandle handle,
                             TfLiteTensor* tensor) {
  const TfLiteOpaqueDelegateBuilder* b = reinterpret_cast<OpaqueDelegate*>(delegate)->opaque_delegate_builder;
  return b->CopyToBufferHandle(opaque(context), opaque(delegate), b->data, handle, opaque(tensor));
}

void forward_free_handle(TfLiteContext* context, TfLiteDelegate* delegate, TfLiteBufferHandle* handle) {
  const TfLiteOpaqueDelegateBuilder* b = reinterpret_cast<OpaqueDelegate*>(delegate)->opaque_delegate_builder;
  b->FreeBufferHandle(opaque(context), opaque(delegate), b->data, handle);
}

// Stands in the TfLiteRegistration of an opaque kernel so the emulation's checks see an invoke; the
// kernel (TfliteKernel) calls the opaque registration's functions instead, never this.
TfLiteStatus opaque_kernel_stand_in(TfLiteContext*, TfLiteNode*) { return kTfLiteError; }

const TfLiteTensor* tensor_at(const TfLiteContext* c, int index) {
  return c && index >= 0 && static_cast<size_t>(index) < c->tensors_size ? &c->tensors[index] : nullptr;
}

}  // namespace

extern "C" {

// A marker the loader looks for beside the opaque functions the process resolved, to know they are a
// baton loader's (stable_delegates.cc).
__attribute__((visibility("default"))) extern const char baton_tflite_opaque_api[];
const char baton_tflite_opaque_api[] = "baton tflite-delegates opaque API";

// ---- delegates ----

TfLiteOpaqueDelegate* TfLiteOpaqueDelegateCreate(const TfLiteOpaqueDelegateBuilder* builder) {
  if (!builder) return nullptr;
  auto* d = new (std::nothrow) OpaqueDelegate{};
  if (!d) return nullptr;
  d->builder = *builder;
  d->opaque_delegate_builder = &d->builder;
  d->base.data_ = nullptr;
  d->base.Prepare = forward_prepare;
  d->base.CopyFromBufferHandle = builder->CopyFromBufferHandle ? forward_copy_from : nullptr;
  d->base.CopyToBufferHandle = builder->CopyToBufferHandle ? forward_copy_to : nullptr;
  d->base.FreeBufferHandle = builder->FreeBufferHandle ? forward_free_handle : nullptr;
  d->base.flags = builder->flags;
  return opaque(&d->base);
}

void TfLiteOpaqueDelegateDelete(TfLiteOpaqueDelegate* delegate) { delete reinterpret_cast<OpaqueDelegate*>(delegate); }

// As TFLite: the builder's data for a delegate made from a builder, else the TfLiteDelegate's data_.
void* TfLiteOpaqueDelegateGetData(const TfLiteOpaqueDelegate* delegate) {
  if (!delegate) return nullptr;
  const auto* d = reinterpret_cast<const OpaqueDelegate*>(delegate);
  return d->opaque_delegate_builder ? d->opaque_delegate_builder->data : d->base.data_;
}

// ---- kernel registrations ----

TfLiteRegistrationExternal* TfLiteRegistrationExternalCreate(TfLiteBuiltinOperatorCode builtin_code,
                                                             const char* custom_name, int version) {
  auto* r = new (std::nothrow) TfLiteRegistrationExternal{};
  if (r) {
    r->builtin_code = builtin_code;
    r->custom_name = custom_name;
    r->version = version;
  }
  return r;
}

void TfLiteRegistrationExternalDelete(TfLiteRegistrationExternal* registration) { delete registration; }

TfLiteBuiltinOperatorCode TfLiteRegistrationExternalGetBuiltInCode(const TfLiteRegistrationExternal* registration) {
  return registration ? registration->builtin_code : -1;
}

const char* TfLiteRegistrationExternalGetCustomName(const TfLiteRegistrationExternal* registration) {
  return registration ? registration->custom_name : nullptr;
}

int TfLiteRegistrationExternalGetVersion(const TfLiteRegistrationExternal* registration) {
  return registration ? registration->version : -1;
}

void TfLiteRegistrationExternalSetInit(TfLiteRegistrationExternal* registration,
                                       void* (*init)(TfLiteOpaqueContext*, const char*, size_t)) {
  if (registration) registration->init = init;
}

void TfLiteRegistrationExternalSetFree(TfLiteRegistrationExternal* registration,
                                       void (*free)(TfLiteOpaqueContext*, void*)) {
  if (registration) registration->free = free;
}

void TfLiteRegistrationExternalSetPrepare(TfLiteRegistrationExternal* registration,
                                          TfLiteStatus (*prepare)(TfLiteOpaqueContext*, TfLiteOpaqueNode*)) {
  if (registration) registration->prepare = prepare;
}

void TfLiteRegistrationExternalSetInvoke(TfLiteRegistrationExternal* registration,
                                         TfLiteStatus (*invoke)(TfLiteOpaqueContext*, TfLiteOpaqueNode*)) {
  if (registration) registration->invoke = invoke;
}

// ---- tensors ----

TfLiteType TfLiteOpaqueTensorType(const TfLiteOpaqueTensor* t) { return t ? tensor_of(t)->type : kTfLiteNoType; }

int32_t TfLiteOpaqueTensorNumDims(const TfLiteOpaqueTensor* t) {
  return t && tensor_of(t)->dims ? tensor_of(t)->dims->size : -1;
}

int32_t TfLiteOpaqueTensorDim(const TfLiteOpaqueTensor* t, int32_t i) {
  const TfLiteIntArray* dims = t ? tensor_of(t)->dims : nullptr;
  return dims && i >= 0 && i < dims->size ? dims->data[i] : -1;
}

TfLiteStatus TfLiteOpaqueTensorGetNumDimsSignature(const TfLiteOpaqueTensor* t, int32_t* num_dims) {
  if (!t || !num_dims) return kTfLiteError;
  const TfLiteIntArray* s = tensor_of(t)->dims_signature;
  *num_dims = s ? s->size : -1;
  return kTfLiteOk;
}

TfLiteStatus TfLiteOpaqueTensorGetDimSignature(const TfLiteOpaqueTensor* t, int32_t i, int32_t* length) {
  if (!t || !length) return kTfLiteError;
  const TfLiteIntArray* s = tensor_of(t)->dims_signature;
  if (!s || i < 0 || i >= s->size) return kTfLiteError;
  *length = s->data[i];
  return kTfLiteOk;
}

int TfLiteOpaqueTensorIsVariable(const TfLiteOpaqueTensor* t) { return t && tensor_of(t)->is_variable ? 1 : 0; }
size_t TfLiteOpaqueTensorByteSize(const TfLiteOpaqueTensor* t) { return t ? tensor_of(t)->bytes : 0; }
void* TfLiteOpaqueTensorData(const TfLiteOpaqueTensor* t) { return t ? tensor_of(t)->data.data : nullptr; }

TfLiteAllocationType TfLiteOpaqueTensorGetAllocationType(const TfLiteOpaqueTensor* t) {
  return t ? tensor_of(t)->allocation_type : kTfLiteMemNone;
}

const char* TfLiteOpaqueTensorName(const TfLiteOpaqueTensor* t) { return t ? tensor_of(t)->name : nullptr; }

TfLiteQuantization TfLiteOpaqueTensorGetQuantization(const TfLiteOpaqueTensor* t) {
  return t ? tensor_of(t)->quantization : TfLiteQuantization{kTfLiteNoQuantization, nullptr};
}

TfLiteQuantizationParams TfLiteOpaqueTensorGetQuantizationParams(const TfLiteOpaqueTensor* t) {
  return t ? tensor_of(t)->params : TfLiteQuantizationParams{0.0f, 0};
}

TfLiteStatus TfLiteOpaqueTensorCopyFromBuffer(TfLiteOpaqueTensor* t, const void* data, size_t bytes) {
  TfLiteTensor* tensor = t ? tensor_of(t) : nullptr;
  if (!tensor || !tensor->data.raw || bytes != tensor->bytes || (bytes && !data)) return kTfLiteError;
  if (bytes) std::memcpy(tensor->data.raw, data, bytes);
  return kTfLiteOk;
}

TfLiteStatus TfLiteOpaqueTensorCopyToBuffer(const TfLiteOpaqueTensor* t, void* data, size_t bytes) {
  const TfLiteTensor* tensor = t ? tensor_of(t) : nullptr;
  if (!tensor || !tensor->data.raw_const || bytes != tensor->bytes || (bytes && !data)) return kTfLiteError;
  if (bytes) std::memcpy(data, tensor->data.raw_const, bytes);
  return kTfLiteOk;
}

// ---- nodes ----

const TfLiteOpaqueTensor* TfLiteOpaqueNodeGetInput(const TfLiteOpaqueContext* c, const TfLiteOpaqueNode* n, int i) {
  const TfLiteIntArray* in = n ? node_of(n)->inputs : nullptr;
  if (!in || i < 0 || i >= in->size) return nullptr;
  const TfLiteTensor* t = tensor_at(context_of(c), in->data[i]);
  return reinterpret_cast<const TfLiteOpaqueTensor*>(t);
}

TfLiteOpaqueTensor* TfLiteOpaqueNodeGetOutput(TfLiteOpaqueContext* c, const TfLiteOpaqueNode* n, int i) {
  const TfLiteIntArray* out = n ? node_of(n)->outputs : nullptr;
  if (!out || i < 0 || i >= out->size) return nullptr;
  return reinterpret_cast<TfLiteOpaqueTensor*>(const_cast<TfLiteTensor*>(tensor_at(context_of(c), out->data[i])));
}

int TfLiteOpaqueNodeNumberOfInputs(const TfLiteOpaqueNode* n) {
  return n && node_of(n)->inputs ? node_of(n)->inputs->size : -1;
}

int TfLiteOpaqueNodeNumberOfOutputs(const TfLiteOpaqueNode* n) {
  return n && node_of(n)->outputs ? node_of(n)->outputs->size : -1;
}

void* TfLiteOpaqueNodeGetUserData(const TfLiteOpaqueNode* n) { return n ? node_of(n)->user_data : nullptr; }
void* TfLiteOpaqueNodeGetBuiltinData(const TfLiteOpaqueNode* n) { return n ? node_of(n)->builtin_data : nullptr; }

TfLiteStatus TfLiteOpaqueNodeGetCustomInitialData(const TfLiteOpaqueNode* n, const void** data, int* size) {
  if (!n || !data || !size) return kTfLiteError;
  *data = node_of(n)->custom_initial_data;
  *size = node_of(n)->custom_initial_data_size;
  return kTfLiteOk;
}

namespace {
TfLiteStatus int_array_out(const TfLiteIntArray* a, const int** data, int* count) {
  if (!a || !data || !count) return kTfLiteError;
  *data = a->data;
  *count = a->size;
  return kTfLiteOk;
}
}  // namespace

TfLiteStatus TfLiteOpaqueNodeInputs(const TfLiteOpaqueNode* n, const int** inputs, int* count) {
  return n ? int_array_out(node_of(n)->inputs, inputs, count) : kTfLiteError;
}

TfLiteStatus TfLiteOpaqueNodeOutputs(const TfLiteOpaqueNode* n, const int** outputs, int* count) {
  return n ? int_array_out(node_of(n)->outputs, outputs, count) : kTfLiteError;
}

TfLiteStatus TfLiteOpaqueNodeTemporaries(const TfLiteOpaqueNode* n, const int** temporaries, int* count) {
  return n ? int_array_out(node_of(n)->temporaries, temporaries, count) : kTfLiteError;
}

int TfLiteOpaqueNodeGetInputTensorIndex(const TfLiteOpaqueNode* n, int i) {
  const TfLiteIntArray* in = n ? node_of(n)->inputs : nullptr;
  return in && i >= 0 && i < in->size ? in->data[i] : -1;
}

int TfLiteOpaqueNodeGetOutputTensorIndex(const TfLiteOpaqueNode* n, int i) {
  const TfLiteIntArray* out = n ? node_of(n)->outputs : nullptr;
  return out && i >= 0 && i < out->size ? out->data[i] : -1;
}

// ---- contexts ----

TfLiteStatus TfLiteOpaqueContextGetExecutionPlan(TfLiteOpaqueContext* c, TfLiteIntArray** plan) {
  if (!c || !plan) return kTfLiteError;
  return context_of(c)->GetExecutionPlan(context_of(c), plan);
}

TfLiteStatus TfLiteOpaqueContextGetNodeAndRegistration(TfLiteOpaqueContext* c, int index, TfLiteOpaqueNode** node,
                                                       TfLiteRegistrationExternal** registration) {
  if (!c || !node || !registration) return kTfLiteError;
  TfLiteNode* n = nullptr;
  TfLiteRegistration* r = nullptr;
  if (context_of(c)->GetNodeAndRegistration(context_of(c), index, &n, &r) != kTfLiteOk) return kTfLiteError;
  *node = opaque(n);
  *registration = TfliteGraph::of(context_of(c))->node_registration(index);
  return *registration ? kTfLiteOk : kTfLiteError;
}

// TFLite takes ownership of `registration` here, also when the call fails.
TfLiteStatus TfLiteOpaqueContextReplaceNodeSubsetsWithDelegateKernels(TfLiteOpaqueContext* c,
                                                                      TfLiteRegistrationExternal* registration,
                                                                      const TfLiteIntArray* nodes,
                                                                      TfLiteOpaqueDelegate* delegate) {
  std::unique_ptr<TfLiteRegistrationExternal> owned(registration);
  if (!c) return kTfLiteError;
  TfLiteContext* context = context_of(c);
  TfliteGraph* g = TfliteGraph::of(context);
  if (!registration) {
    g->refuse("ReplaceNodeSubsetsWithDelegateKernels: no kernel registration (NULL)");
    return kTfLiteError;
  }
  TfLiteRegistration stand_in{};
  stand_in.invoke = registration->invoke ? opaque_kernel_stand_in : nullptr;
  stand_in.builtin_code = registration->builtin_code;
  stand_in.custom_name = registration->custom_name;
  stand_in.version = registration->version;
  const TfLiteStatus st = context->ReplaceNodeSubsetsWithDelegateKernels(
      context, stand_in, nodes, reinterpret_cast<TfLiteDelegate*>(delegate));
  if (st == kTfLiteOk) g->adopt_opaque_kernel(owned.release());
  return st;
}

TfLiteOpaqueTensor* TfLiteOpaqueContextGetOpaqueTensor(const TfLiteOpaqueContext* c, int index) {
  return reinterpret_cast<TfLiteOpaqueTensor*>(const_cast<TfLiteTensor*>(tensor_at(context_of(c), index)));
}

// The plugin ABI does not say which tensors are the model's inputs, outputs and variables; a delegate
// that needs them is told so.
TfLiteStatus TfLiteOpaqueContextGetInputs(const TfLiteOpaqueContext* c, const int**, int*) {
  if (c) TfLiteOpaqueContextReportError(const_cast<TfLiteOpaqueContext*>(c), "TfLiteOpaqueContextGetInputs: not "
                                        "available when baton hosts the delegate");
  return kTfLiteError;
}

TfLiteStatus TfLiteOpaqueContextGetOutputs(const TfLiteOpaqueContext* c, const int**, int*) {
  if (c) TfLiteOpaqueContextReportError(const_cast<TfLiteOpaqueContext*>(c), "TfLiteOpaqueContextGetOutputs: not "
                                        "available when baton hosts the delegate");
  return kTfLiteError;
}

TfLiteStatus TfLiteOpaqueContextGetVariables(const TfLiteOpaqueContext* c, const int**, int*) {
  if (c) TfLiteOpaqueContextReportError(const_cast<TfLiteOpaqueContext*>(c), "TfLiteOpaqueContextGetVariables: not "
                                        "available when baton hosts the delegate");
  return kTfLiteError;
}

size_t TfLiteOpaqueContextGetNumNodes(const TfLiteOpaqueContext* c) {
  return c ? TfliteGraph::of(context_of(c))->node_count() : 0;
}

size_t TfLiteOpaqueContextGetNumTensors(const TfLiteOpaqueContext* c) { return c ? context_of(c)->tensors_size : 0; }

const char* TfLiteOpaqueContextGetName(const TfLiteOpaqueContext*) { return ""; }

TfLiteStatus TfLiteOpaqueContextResizeTensor(TfLiteOpaqueContext* c, TfLiteOpaqueTensor* t, TfLiteIntArray* dims) {
  if (!c || !t) {
    std::free(dims);  // the runtime owns `dims`, even when it fails
    return kTfLiteError;
  }
  return context_of(c)->ResizeTensor(context_of(c), tensor_of(t), dims);
}

// Control flow stays with baton's runtime (delegates never see WHILE or IF nodes), so there are no other
// subgraphs to hand a delegate.
TfLiteStatus TfLiteOpaqueContextAcquireSubgraphContext(TfLiteOpaqueContext* c, int index, TfLiteOpaqueContext**) {
  if (c) TfLiteOpaqueContextReportError(c, "AcquireSubgraphContext(%d): baton runs control flow itself and gives "
                                        "delegates no other subgraph", index);
  return kTfLiteError;
}

TfLiteStatus TfLiteOpaqueContextReleaseSubgraphContext(TfLiteOpaqueContext*, int) { return kTfLiteError; }

TfLiteStatus TfLiteOpaqueContextMarkSubgraphAsDelegationSkippable(TfLiteOpaqueContext* c, int index) {
  if (c) TfLiteOpaqueContextReportError(c, "MarkSubgraphAsDelegationSkippable(%d): baton runs control flow itself",
                                        index);
  return kTfLiteError;
}

TfLiteStatus TfLiteOpaqueContextGetSizeOfType(TfLiteOpaqueContext*, TfLiteType type, size_t* bytes) {
  if (!bytes) return kTfLiteError;
  switch (type) {
    case kTfLiteFloat32: case kTfLiteInt32: case kTfLiteUInt32: *bytes = 4; return kTfLiteOk;
    case kTfLiteInt16: case kTfLiteFloat16: *bytes = 2; return kTfLiteOk;
    case kTfLiteUInt8: case kTfLiteInt8: case kTfLiteBool: *bytes = 1; return kTfLiteOk;
    case kTfLiteInt64: case kTfLiteUInt64: case kTfLiteFloat64: case kTfLiteComplex64: *bytes = 8; return kTfLiteOk;
    case kTfLiteComplex128: *bytes = 16; return kTfLiteOk;
    default: return kTfLiteError;
  }
}

void TfLiteOpaqueContextReportErrorVa(TfLiteOpaqueContext* c, const char* format, va_list args) {
  if (!c) return;
  char buffer[1024];
  std::vsnprintf(buffer, sizeof buffer, format ? format : "", args);
  context_of(c)->ReportError(context_of(c), "%s", buffer);
}

void TfLiteOpaqueContextReportError(TfLiteOpaqueContext* c, const char* format, ...) {
  va_list args;
  va_start(args, format);
  TfLiteOpaqueContextReportErrorVa(c, format, args);
  va_end(args);
}

// TFLite 2.16 renamed TfLiteRegistrationExternal to TfLiteOperator, with the same signatures: a stable
// delegate built against a later TFLite finds these names.
TfLiteOperator* TfLiteOperatorCreate(TfLiteBuiltinOperatorCode code, const char* name, int version) {
  return TfLiteRegistrationExternalCreate(code, name, version);
}
void TfLiteOperatorDelete(TfLiteOperator* r) { delete r; }
TfLiteBuiltinOperatorCode TfLiteOperatorGetBuiltInCode(const TfLiteOperator* r) {
  return TfLiteRegistrationExternalGetBuiltInCode(r);
}
const char* TfLiteOperatorGetCustomName(const TfLiteOperator* r) { return TfLiteRegistrationExternalGetCustomName(r); }
int TfLiteOperatorGetVersion(const TfLiteOperator* r) { return TfLiteRegistrationExternalGetVersion(r); }
void TfLiteOperatorSetInit(TfLiteOperator* r, void* (*init)(TfLiteOpaqueContext*, const char*, size_t)) {
  TfLiteRegistrationExternalSetInit(r, init);
}
void TfLiteOperatorSetFree(TfLiteOperator* r, void (*free)(TfLiteOpaqueContext*, void*)) {
  TfLiteRegistrationExternalSetFree(r, free);
}
void TfLiteOperatorSetPrepare(TfLiteOperator* r, TfLiteStatus (*prepare)(TfLiteOpaqueContext*, TfLiteOpaqueNode*)) {
  TfLiteRegistrationExternalSetPrepare(r, prepare);
}
void TfLiteOperatorSetInvoke(TfLiteOperator* r, TfLiteStatus (*invoke)(TfLiteOpaqueContext*, TfLiteOpaqueNode*)) {
  TfLiteRegistrationExternalSetInvoke(r, invoke);
}

}  // extern "C"
