// The REST side of the Open Inference Protocol: JSON bodies (inference request and response, model and
// server metadata, errors) and the binary tensor data extension (tensors after the JSON, the
// Inference-Header-Content-Length header, binary_data_size / binary_data / binary_data_output).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "inference_request.h"
#include "inference_service.h"

namespace baton::serve {

// How the client wants outputs: as JSON numbers, or as binary data after the JSON.
struct OutputEncoding {
  bool all_binary = false;             // request parameter binary_data_output
  std::map<std::string, bool> binary;  // per requested output: its binary_data parameter
};

// Decodes an infer request body. `json_size` is the Inference-Header-Content-Length (the JSON's bytes;
// binary tensor data follows), or body.size() without the header. The model and version come from the
// URL and are not touched.
Status decode_infer_request(std::string_view body, size_t json_size, InferRequest* request, OutputEncoding* encoding);

struct EncodedResponse {
  std::string body;
  size_t json_size = 0;  // bytes of JSON at the body's start; < body.size() when binary data follows
};
EncodedResponse encode_infer_response(const InferRequest& request, const InferResult& result,
                                      const OutputEncoding& encoding);

std::string encode_error(const std::string& message);  // {"error": "..."}
std::string encode_server_metadata();
std::string encode_model_metadata(const ServedModel& model, const ModelVersion& version);

}  // namespace baton::serve
