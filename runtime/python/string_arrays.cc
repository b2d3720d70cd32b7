// String tensors in NumPy (see string_arrays.h).
#include "string_arrays.h"

#include "baton/plugin_kit.hpp"
#include "baton/string_tensor.hpp"

namespace py = pybind11;

namespace baton::python {

py::array strings_to_numpy(const uint8_t* packed, const std::vector<int32_t>& shape) {
  const strings::PackedStrings source(packed);
  py::list items;
  for (int32_t i = 0; i < source.count(); ++i) {
    const std::string_view s = source.at(i);
    items.append(py::bytes(s.data(), s.size()));
  }
  py::array flat = py::module_::import("numpy").attr("array")(items, py::arg("dtype") = "object");
  if (source.count() == 0) flat = py::module_::import("numpy").attr("empty")(0, py::arg("dtype") = "object");
  return flat.attr("reshape")(py::tuple(py::cast(shape)));
}

std::vector<uint8_t> numpy_to_strings(py::handle value, const std::vector<int32_t>& shape, const std::string& label) {
  py::object numpy = py::module_::import("numpy");
  py::array a = numpy.attr("asarray")(value);
  const char kind = a.dtype().kind();
  if (kind != 'S' && kind != 'U' && kind != 'O') {
    throw py::value_error(label + " expects strings (bytes or str), got " + py::str(a.dtype()).cast<std::string>() +
                          " values");
  }
  std::vector<int32_t> got(a.shape(), a.shape() + a.ndim());
  if (got != shape) {
    throw py::value_error(label + " has shape " + kit::dims_text(shape) + ", got " + kit::dims_text(got) +
                          " (resize_tensor_input changes an input's shape)");
  }
  strings::PackedWriter writer;
  for (py::handle item : a.attr("ravel")().attr("tolist")()) {
    if (py::isinstance<py::bytes>(item)) {
      writer.add(item.cast<std::string>());
    } else if (py::isinstance<py::str>(item)) {
      writer.add(item.cast<std::string>());  // UTF-8
    } else {
      throw py::value_error(label + " expects bytes or str items, got " +
                            py::str(py::type::of(item)).cast<std::string>());
    }
  }
  return writer.packed();
}

}  // namespace baton::python
