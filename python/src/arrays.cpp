// NumPy arrays are read through pybind11's array type; CUDA arrays through the
// __cuda_array_interface__ dictionary (version 2/3: shape, typestr, data, strides, stream),
// which torch, CuPy and Numba export without copying.
#include "arrays.hpp"

#include <pybind11/numpy.h>

#include <cctype>
#include <sstream>

#include "binding.hpp"

namespace convlab::python {

std::string format_shape(const std::vector<int64_t>& shape) {
  std::ostringstream out;
  out << "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << (shape.size() == 1 ? ",)" : ")");
  return out.str();
}

namespace {

std::string whose(const ArraySpec& spec) { return spec.name + " (" + spec.algorithm + ")"; }

// C order, ignoring the strides of extent-1 dimensions (NumPy's and torch's own rule:
// those strides never address memory).
bool c_contiguous(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                  int64_t item) {
  int64_t expected = item;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

void check_shape(const ArraySpec& spec, const std::vector<int64_t>& shape) {
  if (spec.shape.empty() || shape == spec.shape) return;
  invalid_argument(whose(spec) + ": shape " + format_shape(shape) + ", expected " +
                   format_shape(spec.shape) + " for " + spec.problem);
}

ArrayView check_numpy(const py::array& array, const ArraySpec& spec) {
  const std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  const std::vector<int64_t> strides(array.strides(), array.strides() + array.ndim());
  const std::string dtype = py::str(array.dtype());
  const bool is_float32 = array.dtype().is(py::dtype::of<float>());
  if (!spec.shape.empty() && !is_float32) {
    invalid_argument(whose(spec) + ": dtype " + dtype +
                     ", expected float32 (numpy.float32, native byte order); convert with " +
                     spec.name + ".astype(numpy.float32)");
  }
  check_shape(spec, shape);
  if (!c_contiguous(shape, strides, array.itemsize())) {
    invalid_argument(whose(spec) + ": not C-contiguous (strides " + format_shape(strides) +
                     " bytes for shape " + format_shape(shape) +
                     "); pass numpy.ascontiguousarray(" + spec.name + ")");
  }
  if (spec.writable && !array.writeable()) {
    invalid_argument(whose(spec) + ": the array is read-only, and convlab writes it");
  }
  ArrayView view;
  view.data = const_cast<void*>(array.data());
  view.bytes = static_cast<std::size_t>(array.nbytes());
  if (reinterpret_cast<std::uintptr_t>(view.data) % alignof(float) != 0) {
    invalid_argument(whose(spec) + ": the data is not aligned to " +
                     std::to_string(alignof(float)) + " bytes");
  }
  if (spec.shape.empty() && view.bytes < spec.min_bytes) {
    invalid_argument(whose(spec) + ": " + std::to_string(view.bytes) + " bytes, the plan needs " +
                     std::to_string(spec.min_bytes));
  }
  return view;
}

std::vector<int64_t> int_tuple(const py::handle& value, const ArraySpec& spec, const char* key) {
  std::vector<int64_t> out;
  try {
    for (const py::handle& e : value) out.push_back(e.cast<int64_t>());
  } catch (const py::cast_error&) {
    invalid_argument(whose(spec) + ": __cuda_array_interface__['" + key +
                     "'] is not a tuple of integers");
  }
  return out;
}

ArrayView check_cuda_interface(const py::handle& object, const ArraySpec& spec) {
  const py::object interface = object.attr("__cuda_array_interface__");
  if (!py::isinstance<py::dict>(interface)) {
    invalid_argument(whose(spec) + ": __cuda_array_interface__ is not a dict");
  }
  const py::dict cai = interface;
  for (const char* key : {"shape", "typestr", "data"}) {
    if (!cai.contains(key)) {
      invalid_argument(whose(spec) + ": __cuda_array_interface__ has no '" + key + "'");
    }
  }
  const std::vector<int64_t> shape = int_tuple(cai["shape"], spec, "shape");
  const std::string typestr = py::str(cai["typestr"]);
  // "<f4": byte order, kind, item size in bytes.
  int64_t item = 0;
  for (std::size_t i = 2;
       i < typestr.size() && std::isdigit(static_cast<unsigned char>(typestr[i])) && item < 1024;
       ++i) {
    item = item * 10 + (typestr[i] - '0');
  }
  if (item == 0) invalid_argument(whose(spec) + ": typestr '" + typestr + "' has no item size");
  if (!spec.shape.empty() && typestr != "<f4" && typestr != "=f4") {
    invalid_argument(whose(spec) + ": typestr '" + typestr + "', expected '<f4' (float32)");
  }
  check_shape(spec, shape);
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    const std::vector<int64_t> strides = int_tuple(cai["strides"], spec, "strides");
    if (strides.size() != shape.size() || !c_contiguous(shape, strides, item)) {
      invalid_argument(whose(spec) + ": not C-contiguous (strides " + format_shape(strides) +
                       " bytes for shape " + format_shape(shape) + "); pass " + spec.name +
                       ".contiguous()");
    }
  }
  if (cai.contains("mask") && !cai["mask"].is_none()) {
    invalid_argument(whose(spec) + ": masked CUDA arrays are not supported");
  }
  const py::tuple data = cai["data"].cast<py::tuple>();
  if (data.size() != 2)
    invalid_argument(whose(spec) +
                     ": __cuda_array_interface__['data'] "
                     "is not (pointer, read_only)");
  ArrayView view;
  view.data = reinterpret_cast<void*>(data[0].cast<std::uintptr_t>());
  view.bytes = static_cast<std::size_t>(element_count(shape) * item);
  if (spec.writable && data[1].cast<bool>()) {
    invalid_argument(whose(spec) + ": the CUDA array is read-only, and convlab writes it");
  }
  if (view.data == nullptr && view.bytes > 0) {
    invalid_argument(whose(spec) + ": the CUDA array's data pointer is null");
  }
  if (spec.shape.empty() && view.bytes < spec.min_bytes) {
    invalid_argument(whose(spec) + ": " + std::to_string(view.bytes) + " bytes, the plan needs " +
                     std::to_string(spec.min_bytes));
  }
  if (cai.contains("stream") && !cai["stream"].is_none()) {
    view.stream = cai["stream"].cast<std::uintptr_t>();
  }
  return view;
}

}  // namespace

ArrayView check_array(const py::handle& object, const ArraySpec& spec) {
  const bool is_cuda = py::hasattr(object, "__cuda_array_interface__");
  if (spec.memory == Memory::cuda) {
    if (!is_cuda) {
      invalid_argument(whose(spec) + ": got " + type_name(object) + ", but " + spec.algorithm +
                       " runs on the GPU: pass a CUDA array (a torch CUDA tensor or another "
                       "object with __cuda_array_interface__)");
    }
    return check_cuda_interface(object, spec);
  }
  if (is_cuda) {
    invalid_argument(whose(spec) + ": got a CUDA array (" + type_name(object) + "), but " +
                     spec.algorithm + " runs on the CPU: pass a numpy.ndarray");
  }
  if (!py::isinstance<py::array>(object)) {
    invalid_argument(whose(spec) + ": got " + type_name(object) + ", expected a numpy.ndarray" +
                     (spec.shape.empty() ? "" : " of float32") +
                     " (a torch CPU tensor: pass tensor.numpy(), which shares its memory)");
  }
  return check_numpy(py::reinterpret_borrow<py::array>(object), spec);
}

}  // namespace convlab::python
