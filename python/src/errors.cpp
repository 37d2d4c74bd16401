// convlab::Error becomes convlab.Error, a RuntimeError subclass carrying convlab's message and
// its code ("invalid_problem", "unsupported", ...), so Python code can branch on the code.
#include <pybind11/pybind11.h>

#include "binding.hpp"
#include "convlab/error.hpp"

namespace convlab::python {

void invalid_argument(const std::string& message) {
  throw Error(ErrorCode::invalid_argument, message);
}

std::string type_name(const py::handle& object) {
  const py::handle type = py::type::handle_of(object);
  const std::string module = py::str(type.attr("__module__"));
  const std::string name = py::str(type.attr("__qualname__"));
  return module == "builtins" ? name : module + "." + name;
}

void bind_errors(py::module_& m) {
  // Never released: the translator may run until the interpreter's very end.
  static PyObject* error_type = PyErr_NewExceptionWithDoc(
      "convlab.Error",
      "A convlab failure: str(e) is convlab's message (it names the bad value), e.code its "
      "kind: invalid_problem, invalid_argument, unsupported, unavailable, out_of_memory, "
      "over_budget, io or backend.",
      PyExc_RuntimeError, nullptr);
  if (error_type == nullptr) throw py::error_already_set();
  m.add_object("Error", py::handle(error_type));
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) std::rethrow_exception(pointer);
    } catch (const Error& e) {
      py::object error = py::reinterpret_borrow<py::object>(error_type)(e.what());
      error.attr("code") = to_string(e.code());
      PyErr_SetObject(error_type, error.ptr());
    }
  });
}

}  // namespace convlab::python
