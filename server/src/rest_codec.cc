#include "rest_codec.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "datatype.h"

namespace baton::serve {

using nlohmann::json;

namespace {

Status invalid(std::string message) { return Status::error(Code::kInvalidArgument, std::move(message)); }

template <typename T>
void append(std::string* bytes, T value) {
  bytes->append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <typename T>
T read_at(const std::string& bytes, size_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

uint16_t float_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // NaN stays NaN
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// One JSON element into the input's bytes (or strings); the message names the input and the element.
class ElementDecoder {
 public:
  ElementDecoder(InputTensor* in) : in_(in), type_(in->datatype) {}

  Status add(const json& v) {
    const size_t index = count_++;
    const auto bad = [&](const char* expected) {
      return invalid("input '" + in_->name + "': data element " + std::to_string(index) + " (" + v.dump() +
                     ") is not " + expected);
    };
    if (type_ == "BYTES") {
      if (!v.is_string()) return bad("a string (BYTES)");
      in_->strings.push_back(v.get<std::string>());
    } else if (type_ == "BOOL") {
      if (!v.is_boolean()) return bad("true or false (BOOL)");
      append<uint8_t>(&in_->bytes, v.get<bool>() ? 1 : 0);
    } else if (type_ == "FP32" || type_ == "FP64" || type_ == "FP16" || type_ == "BF16") {
      if (!v.is_number()) return bad(("a number (" + type_ + ")").c_str());
      const double d = v.get<double>();
      if (type_ == "FP32") append<float>(&in_->bytes, static_cast<float>(d));
      if (type_ == "FP64") append<double>(&in_->bytes, d);
      if (type_ == "FP16") append<uint16_t>(&in_->bytes, float_to_half(static_cast<float>(d)));
      if (type_ == "BF16") append<uint16_t>(&in_->bytes, float_to_bf16(static_cast<float>(d)));
    } else if (type_ == "UINT64") {
      if (!v.is_number_unsigned()) return bad("an integer from 0 to 2^64-1 (UINT64)");
      append<uint64_t>(&in_->bytes, v.get<uint64_t>());
    } else {
      // The remaining integer types fit in int64.
      struct Range {
        const char* name;
        int64_t min, max;
        size_t size;
      };
      static const Range kRanges[] = {
          {"INT8", INT8_MIN, INT8_MAX, 1},      {"INT16", INT16_MIN, INT16_MAX, 2}, {"INT32", INT32_MIN, INT32_MAX, 4},
          {"INT64", INT64_MIN, INT64_MAX, 8},   {"UINT8", 0, UINT8_MAX, 1},         {"UINT16", 0, UINT16_MAX, 2},
          {"UINT32", 0, UINT32_MAX, 4},
      };
      const Range* r = nullptr;
      for (const Range& k : kRanges) {
        if (type_ == k.name) r = &k;
      }
      if (!r) return invalid("input '" + in_->name + "': unknown datatype '" + type_ + "'");
      const bool integral = v.is_number_integer() && (v.is_number_unsigned() ? v.get<uint64_t>() <= INT64_MAX : true);
      const int64_t x = integral ? v.get<int64_t>() : 0;
      if (!integral || x < r->min || x > r->max) {
        return bad(("an integer from " + std::to_string(r->min) + " to " + std::to_string(r->max) + " (" + type_ + ")").c_str());
      }
      // Little-endian hosts: the low bytes of the int64 are the narrower integer.
      in_->bytes.append(reinterpret_cast<const char*>(&x), r->size);
    }
    return {};
  }

  // Row-major order: nested arrays are read depth first.
  Status add_all(const json& data, int depth = 0) {
    if (!data.is_array()) return add(data);
    if (depth > 32) return invalid("input '" + in_->name + "': data is nested deeper than 32 arrays");
    for (const json& v : data) {
      Status s = add_all(v, depth + 1);
      if (!s.ok()) return s;
    }
    return {};
  }

 private:
  InputTensor* in_;
  std::string type_;
  size_t count_ = 0;
};

// Reads an int64 parameter; false when absent. Sets `bad` when present but not a non-negative integer.
bool int_parameter(const json& object, const char* key, int64_t* out, bool* bad) {
  if (!object.is_object()) return false;
  const auto params = object.find("parameters");
  if (params == object.end() || !params->is_object()) return false;
  const auto v = params->find(key);
  if (v == params->end()) return false;
  if (!v->is_number_integer() || v->get<int64_t>() < 0) {
    *bad = true;
    return false;
  }
  *out = v->get<int64_t>();
  return true;
}

bool bool_parameter(const json& object, const char* key) {
  if (!object.is_object()) return false;
  const auto params = object.find("parameters");
  if (params == object.end() || !params->is_object()) return false;
  const auto v = params->find(key);
  return v != params->end() && v->is_boolean() && v->get<bool>();
}

json output_data(const OutputTensor& out) {
  json data = json::array();
  const std::string& t = out.datatype;
  const std::string& b = out.bytes;
  if (t == "BYTES") {
    for (const std::string& s : out.strings) data.push_back(s);
    return data;
  }
  const size_t n = b.size() / std::max<size_t>(1, datatype_size(t));
  auto& arr = data.get_ref<json::array_t&>();
  arr.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (t == "FP32") arr.emplace_back(static_cast<double>(read_at<float>(b, i)));
    else if (t == "FP64") arr.emplace_back(read_at<double>(b, i));
    else if (t == "FP16") arr.emplace_back(static_cast<double>(half_to_float(read_at<uint16_t>(b, i))));
    else if (t == "BF16") arr.emplace_back(static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(read_at<uint16_t>(b, i)) << 16)));
    else if (t == "BOOL") arr.emplace_back(read_at<uint8_t>(b, i) != 0);
    else if (t == "INT8") arr.emplace_back(static_cast<int64_t>(read_at<int8_t>(b, i)));
    else if (t == "INT16") arr.emplace_back(static_cast<int64_t>(read_at<int16_t>(b, i)));
    else if (t == "INT32") arr.emplace_back(static_cast<int64_t>(read_at<int32_t>(b, i)));
    else if (t == "INT64") arr.emplace_back(read_at<int64_t>(b, i));
    else if (t == "UINT8") arr.emplace_back(static_cast<uint64_t>(read_at<uint8_t>(b, i)));
    else if (t == "UINT16") arr.emplace_back(static_cast<uint64_t>(read_at<uint16_t>(b, i)));
    else if (t == "UINT32") arr.emplace_back(static_cast<uint64_t>(read_at<uint32_t>(b, i)));
    else if (t == "UINT64") arr.emplace_back(read_at<uint64_t>(b, i));
  }
  return data;
}

json tensor_metadata(const std::vector<TensorSpec>& specs) {
  json list = json::array();
  for (const TensorSpec& s : specs) list.push_back({{"name", s.name}, {"datatype", s.datatype}, {"shape", s.shape}});
  return list;
}

}  // namespace

Status decode_infer_request(std::string_view body, size_t json_size, InferRequest* request, OutputEncoding* encoding) {
  if (json_size > body.size()) {
    return invalid("Inference-Header-Content-Length is " + std::to_string(json_size) + ", but the body has only " +
                   std::to_string(body.size()) + " bytes");
  }
  json doc = json::parse(body.substr(0, json_size), nullptr, false);
  if (doc.is_discarded()) {
    // Parse again for the message: where the JSON breaks.
    try {
      (void)json::parse(body.substr(0, json_size));
    } catch (const json::parse_error& e) {
      return invalid(std::string("the request is not valid JSON: ") + e.what());
    }
    return invalid("the request is not valid JSON");
  }
  if (!doc.is_object()) return invalid("the request must be a JSON object with \"inputs\"");
  if (auto id = doc.find("id"); id != doc.end()) {
    if (!id->is_string()) return invalid("\"id\" must be a string");
    request->id = id->get<std::string>();
  }
  encoding->all_binary = bool_parameter(doc, "binary_data_output");
  const auto inputs = doc.find("inputs");
  if (inputs == doc.end() || !inputs->is_array()) return invalid("the request has no \"inputs\" array");
  size_t binary_at = json_size;
  for (size_t k = 0; k < inputs->size(); ++k) {
    const json& jin = (*inputs)[k];
    const std::string which = "inputs[" + std::to_string(k) + "]";
    if (!jin.is_object()) return invalid(which + " is not an object");
    InputTensor in;
    const auto name = jin.find("name");
    if (name == jin.end() || !name->is_string()) return invalid(which + " has no \"name\" string");
    in.name = name->get<std::string>();
    const auto datatype = jin.find("datatype");
    if (datatype == jin.end() || !datatype->is_string()) return invalid("input '" + in.name + "' has no \"datatype\" string");
    in.datatype = datatype->get<std::string>();
    if (!is_protocol_datatype(in.datatype)) {
      return invalid("input '" + in.name + "': unknown datatype '" + in.datatype +
                     "' (the protocol's: BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, FP32, FP64, BYTES)");
    }
    const auto shape = jin.find("shape");
    if (shape == jin.end() || !shape->is_array()) return invalid("input '" + in.name + "' has no \"shape\" array");
    for (const json& d : *shape) {
      if (!d.is_number_integer() || (d.is_number_unsigned() && d.get<uint64_t>() > INT64_MAX)) {
        return invalid("input '" + in.name + "': shape " + shape->dump() + " holds a dimension that is not an integer");
      }
      in.shape.push_back(d.get<int64_t>());
    }
    const int64_t count = element_count(in.shape);
    if (count < 0) return invalid("input '" + in.name + "': shape " + shape_text(in.shape) + " has a negative dimension or is too large");
    int64_t binary_size = 0;
    bool bad = false;
    if (int_parameter(jin, "binary_data_size", &binary_size, &bad)) {
      if (static_cast<uint64_t>(binary_size) > body.size() - binary_at) {
        return invalid("input '" + in.name + "': binary_data_size is " + std::to_string(binary_size) + ", but only " +
                       std::to_string(body.size() - binary_at) + " bytes of binary data remain after the JSON");
      }
      const char* data = body.data() + binary_at;
      if (in.datatype == "BYTES") {
        Status s = decode_length_prefixed(in.name, data, static_cast<size_t>(binary_size), &in.strings);
        if (!s.ok()) return s;
      } else {
        in.bytes.assign(data, static_cast<size_t>(binary_size));
      }
      binary_at += static_cast<size_t>(binary_size);
    } else if (bad) {
      return invalid("input '" + in.name + "': binary_data_size must be a non-negative integer");
    } else {
      const auto data = jin.find("data");
      if (data == jin.end()) return invalid("input '" + in.name + "' has neither \"data\" nor a binary_data_size parameter");
      const size_t size = datatype_size(in.datatype);
      if (size && static_cast<uint64_t>(count) <= body.size()) in.bytes.reserve(static_cast<size_t>(count) * size);
      ElementDecoder decoder(&in);
      Status s = decoder.add_all(*data);
      if (!s.ok()) return s;
    }
    request->inputs.push_back(std::move(in));
  }
  if (binary_at != body.size()) {
    return invalid(std::to_string(body.size() - binary_at) + " bytes of binary data after the JSON belong to no input "
                   "(each binary input needs its binary_data_size parameter)");
  }
  if (auto outputs = doc.find("outputs"); outputs != doc.end()) {
    if (!outputs->is_array()) return invalid("\"outputs\" must be an array");
    for (const json& jout : *outputs) {
      const auto name = jout.is_object() ? jout.find("name") : jout.end();
      if (!jout.is_object() || name == jout.end() || !name->is_string()) {
        return invalid("each of \"outputs\" must be an object with a \"name\" string");
      }
      const std::string n = name->get<std::string>();
      request->outputs.push_back(n);
      encoding->binary[n] = bool_parameter(jout, "binary_data");
    }
  }
  return {};
}

EncodedResponse encode_infer_response(const InferRequest& request, const InferResult& result,
                                      const OutputEncoding& encoding) {
  json doc = {{"model_name", request.model}, {"model_version", result.model_version}};
  if (!request.id.empty()) doc["id"] = request.id;
  json outputs = json::array();
  std::string binary;
  for (const OutputTensor& out : result.outputs) {
    json o = {{"name", out.name}, {"datatype", out.datatype}, {"shape", out.shape}};
    const auto wanted = encoding.binary.find(out.name);
    if (encoding.all_binary || (wanted != encoding.binary.end() && wanted->second)) {
      const std::string data = out.datatype == "BYTES" ? encode_length_prefixed(out.strings) : out.bytes;
      o["parameters"] = {{"binary_data_size", data.size()}};
      binary += data;
    } else {
      o["data"] = output_data(out);
    }
    outputs.push_back(std::move(o));
  }
  doc["outputs"] = std::move(outputs);
  EncodedResponse r;
  r.body = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  r.json_size = r.body.size();
  r.body += binary;
  return r;
}

std::string encode_error(const std::string& message) {
  return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string encode_server_metadata() {
  return json{{"name", "baton"}, {"version", BATON_VERSION}, {"extensions", {"binary_tensor_data"}}}.dump();
}

std::string encode_model_metadata(const ServedModel& model, const ModelVersion& version) {
  json versions = json::array();
  for (const auto& [v, served] : model.versions) versions.push_back(std::to_string(v));
  return json{{"name", model.name},
              {"versions", versions},
              {"platform", "tensorflow_lite"},
              {"inputs", tensor_metadata(version.inputs())},
              {"outputs", tensor_metadata(version.outputs())}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace baton::serve
