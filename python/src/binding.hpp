#pragma once
// What the files of the Python module share: each binds one part of the API onto the module.

#include <pybind11/pybind11.h>

#include <string>

namespace convlab::python {

namespace py = pybind11;

/// convlab.Error and the translation of convlab::Error (and its code) into it.
void bind_errors(py::module_& m);
/// Problem, AlgorithmInfo, KnobSpec, PlanInfo, Support; the registry functions.
void bind_info(py::module_& m);
/// Algorithm, Plan and Plan.run on NumPy arrays and CUDA arrays.
void bind_run(py::module_& m);

/// Throws convlab::Error{invalid_argument} with `message` (so Python sees convlab.Error).
[[noreturn]] void invalid_argument(const std::string& message);

/// The Python type name of `object`, e.g. "torch.Tensor", for messages.
std::string type_name(const py::handle& object);

}  // namespace convlab::python
