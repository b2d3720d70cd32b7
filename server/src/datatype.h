// The tensor datatypes of the Open Inference Protocol (BOOL, UINT8, ..., FP16, FP32, FP64, BYTES) and
// baton's tensor types: which name each type has on the wire and how many bytes one element takes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/c_api.h"
#include "baton/float16.hpp"

namespace baton::serve {

// The protocol's name of a baton type; nullopt for types the protocol cannot carry (complex, int4,
// resource, variant).
std::optional<std::string_view> protocol_datatype(baton_tensor_type type);
// Whether `name` is one of the protocol's datatypes.
bool is_protocol_datatype(std::string_view name);
// Bytes per element of a protocol datatype; 0 for BYTES (variable length) and unknown names.
size_t datatype_size(std::string_view name);

// IEEE 754 half precision (FP16 tensors given as JSON numbers): baton/float16.hpp.
using baton::float_to_half;
using baton::half_to_float;

// "[1,192,192,3]"
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace baton::serve
