#include "tiny_model.h"

#include "tflite_generated.h"

namespace baton::test {

namespace fb = baton::tflite;

std::vector<uint8_t> TinyModel::build() const {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  buffers.push_back(fb::CreateBuffer(b));  // buffer 0: the empty sentinel
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (const TinyTensor& t : this->tensors) {
    uint32_t buffer = 0;
    if (!t.data.empty() || t.buffer_offset) {
      b.ForceVectorAlignment(t.data.size(), 1, 16);
      auto data = t.data.empty() ? 0 : b.CreateVector(t.data);
      buffers.push_back(fb::CreateBuffer(b, data, t.buffer_offset, t.buffer_size));
      buffer = static_cast<uint32_t>(buffers.size() - 1);
    }
    flatbuffers::Offset<fb::QuantizationParameters> quant = 0;
    if (t.blockwise_scales >= 0) {
      auto details = fb::CreateBlockwiseQuantization(b, t.blockwise_scales, -1, t.blockwise_block).Union();
      quant = fb::CreateQuantizationParametersDirect(b, nullptr, nullptr, nullptr, nullptr,
                                                     fb::QuantizationDetails_BlockwiseQuantization, details, 0);
    } else if (!t.scales.empty()) {
      quant = fb::CreateQuantizationParametersDirect(b, nullptr, nullptr, &t.scales, &t.zero_points,
                                                     fb::QuantizationDetails_NONE, 0, t.quantized_dimension);
    }
    tensors.push_back(fb::CreateTensorDirect(b, &t.shape, static_cast<fb::TensorType>(t.type), buffer,
                                             t.name.c_str(), quant, t.is_variable, 0,
                                             t.shape_signature.empty() ? nullptr : &t.shape_signature));
  }
  std::vector<flatbuffers::Offset<fb::OperatorCode>> codes;
  std::vector<flatbuffers::Offset<fb::Operator>> ops;
  for (const TinyOp& op : this->ops) {
    auto custom = op.custom.empty() ? 0 : b.CreateString(op.custom);
    const int8_t deprecated = static_cast<int8_t>(op.code < 127 ? op.code : 127);
    codes.push_back(fb::CreateOperatorCode(b, deprecated, custom, op.version,
                                           op.only_deprecated_code ? fb::BuiltinOperator_ADD
                                                                   : static_cast<fb::BuiltinOperator>(op.code)));
    flatbuffers::Offset<void> options = 0;
    fb::BuiltinOptions options_type = fb::BuiltinOptions_NONE;
    if (op.activation >= 0) {
      options = fb::CreateAddOptions(b, static_cast<fb::ActivationFunctionType>(op.activation)).Union();
      options_type = fb::BuiltinOptions_AddOptions;
    }
    ops.push_back(fb::CreateOperatorDirect(b, static_cast<uint32_t>(codes.size() - 1), &op.inputs, &op.outputs,
                                           options_type, options));
  }
  std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs = {
      fb::CreateSubGraphDirect(b, &tensors, &inputs, &outputs, &ops, "main")};
  for (int32_t i = 0; i < extra_subgraphs; ++i) {
    subgraphs.push_back(fb::CreateSubGraphDirect(b, &tensors, &inputs, &outputs, &ops, "copy"));
  }
  std::vector<flatbuffers::Offset<fb::SignatureDef>> sigs;
  for (const TinySignature& s : signatures) {
    std::vector<flatbuffers::Offset<fb::TensorMap>> in, out;
    for (const auto& [name, t] : s.inputs) in.push_back(fb::CreateTensorMapDirect(b, name.c_str(), t));
    for (const auto& [name, t] : s.outputs) out.push_back(fb::CreateTensorMapDirect(b, name.c_str(), t));
    sigs.push_back(fb::CreateSignatureDefDirect(b, &in, &out, s.key.c_str(), s.subgraph));
  }
  std::vector<flatbuffers::Offset<fb::Metadata>> metas;
  for (const auto& [name, bytes] : metadata) {
    buffers.push_back(fb::CreateBuffer(b, b.CreateVector(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())));
    metas.push_back(fb::CreateMetadataDirect(b, name.c_str(), static_cast<uint32_t>(buffers.size() - 1)));
  }
  auto model = fb::CreateModelDirect(b, 3, &codes, &subgraphs, description.c_str(), &buffers, nullptr,
                                     metas.empty() ? nullptr : &metas, sigs.empty() ? nullptr : &sigs);
  fb::FinishModelBuffer(b, model);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

TinyModel add_then_double() {
  TinyModel m;
  m.tensors = {
      {{2, 3}, 0, {}, "a"},
      {{2, 3}, 0, {}, "b"},
      {{2, 3}, 0, {}, "c"},
      {{2, 3}, 0, {}, "d"},
  };
  m.ops = {
      {0, "", 1, {0, 1}, {2}, 1 /* RELU */},
      {32, "TimesTwo", 1, {2}, {3}},
  };
  m.inputs = {0, 1};
  m.outputs = {3};
  return m;
}

TinyModel times_three() {
  TinyModel m;
  m.tensors = {{{2, 3}, 0, {}, "x"}, {{2, 3}, 0, {}, "y"}};
  m.ops = {{32, "TimesThree", 1, {0}, {1}}};
  m.inputs = {0};
  m.outputs = {1};
  return m;
}

}  // namespace baton::test
