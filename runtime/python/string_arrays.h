// String tensors in NumPy, as tf.lite.Interpreter shows them: a string tensor reads as an array of
// dtype object holding bytes, and takes an array of bytes (dtype S), of str (dtype U, written as UTF-8)
// or of objects that are each bytes or str. In between, TFLite's packed buffer (baton/string_tensor.hpp).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace baton::python {

// The strings of a packed buffer (checked by the runtime) as an object array of bytes of `shape`.
pybind11::array strings_to_numpy(const uint8_t* packed, const std::vector<int32_t>& shape);

// The packed buffer of `value`'s strings in row-major order; throws ValueError naming `label` when it is
// not an array of bytes or str, or its shape is not `shape`.
std::vector<uint8_t> numpy_to_strings(pybind11::handle value, const std::vector<int32_t>& shape, const std::string& label);

}  // namespace baton::python
