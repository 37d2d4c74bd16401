// The value types: Problem (from a benchdnn descriptor or named fields), Support, KnobSpec,
// AlgorithmInfo and PlanInfo, read-only, with enums as the spellings convbench's rows use.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "binding.hpp"
#include "convlab/algorithm.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/error.hpp"
#include "convlab/problem.hpp"

namespace convlab::python {
namespace {

py::tuple shape(int64_t a, int64_t b, int64_t c, int64_t d) { return py::make_tuple(a, b, c, d); }

ConvProblem problem_from_fields(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r,
                                int64_t s, int64_t pad_h, int64_t pad_w, int64_t stride_h,
                                int64_t stride_w, int64_t dilation_h, int64_t dilation_w,
                                int64_t groups) {
  ConvProblem p;
  p.n = n, p.c = c, p.h = h, p.w = w, p.k = k, p.r = r, p.s = s;
  p.pad_h = pad_h, p.pad_w = pad_w, p.stride_h = stride_h, p.stride_w = stride_w;
  p.dilation_h = dilation_h, p.dilation_w = dilation_w, p.groups = groups;
  p.validate();
  return p;
}

void bind_problem(py::module_& m) {
  py::class_<ConvProblem>(m, "Problem",
                          "One 2-D convolution layer: NCHW activations, KCRS filters, "
                          "cross-correlation, dilation 1 = dense (PyTorch's meaning).")
      .def(py::init(
               [](const std::string& descriptor) { return parse_descriptor(descriptor).problem; }),
           py::arg("descriptor"),
           "From a oneDNN benchdnn descriptor, e.g. 'mb32ic64ih56oc64kh3ph1' (dilation 0 = "
           "dense there, as in benchdnn).")
      .def(py::init(&problem_from_fields), py::kw_only(), py::arg("n"), py::arg("c"), py::arg("h"),
           py::arg("w"), py::arg("k"), py::arg("r"), py::arg("s"), py::arg("pad_h") = 0,
           py::arg("pad_w") = 0, py::arg("stride_h") = 1, py::arg("stride_w") = 1,
           py::arg("dilation_h") = 1, py::arg("dilation_w") = 1, py::arg("groups") = 1,
           "From named fields, as torch.nn.functional.conv2d takes them (dilation 1 = dense).")
      .def_readonly("n", &ConvProblem::n)
      .def_readonly("c", &ConvProblem::c)
      .def_readonly("h", &ConvProblem::h)
      .def_readonly("w", &ConvProblem::w)
      .def_readonly("k", &ConvProblem::k)
      .def_readonly("r", &ConvProblem::r)
      .def_readonly("s", &ConvProblem::s)
      .def_readonly("pad_h", &ConvProblem::pad_h)
      .def_readonly("pad_w", &ConvProblem::pad_w)
      .def_property_readonly("pad_h_end", &ConvProblem::end_pad_h)
      .def_property_readonly("pad_w_end", &ConvProblem::end_pad_w)
      .def_readonly("stride_h", &ConvProblem::stride_h)
      .def_readonly("stride_w", &ConvProblem::stride_w)
      .def_readonly("dilation_h", &ConvProblem::dilation_h)
      .def_readonly("dilation_w", &ConvProblem::dilation_w)
      .def_readonly("groups", &ConvProblem::groups)
      .def_property_readonly("out_h", &ConvProblem::out_h)
      .def_property_readonly("out_w", &ConvProblem::out_w)
      .def_property_readonly(
          "x_shape", [](const ConvProblem& p) { return shape(p.n, p.c, p.h, p.w); },
          "(n, c, h, w): the input activations (dx for bwd_data)")
      .def_property_readonly(
          "w_shape", [](const ConvProblem& p) { return shape(p.k, p.c_per_group(), p.r, p.s); },
          "(k, c / groups, r, s): the filter (dw for bwd_filter)")
      .def_property_readonly(
          "y_shape", [](const ConvProblem& p) { return shape(p.n, p.k, p.out_h(), p.out_w()); },
          "(n, k, out_h, out_w): the output activations (dy for the backward passes)")
      .def_property_readonly("descriptor", &ConvProblem::descriptor)
      .def(
          "flops",
          [](const ConvProblem& p, const std::string& pass) { return p.flops(parse_pass(pass)); },
          py::arg("pass_") = "fwd", "Direct-convolution flops of the pass (2 per multiply-add).")
      .def("__eq__", [](const ConvProblem& a, const ConvProblem& b) { return a == b; })
      .def("__hash__", [](const ConvProblem& p) { return py::hash(py::str(p.descriptor())); })
      .def("__repr__",
           [](const ConvProblem& p) { return "convlab.Problem('" + p.descriptor() + "')"; });
  py::implicitly_convertible<std::string, ConvProblem>();
}

void bind_descriptions(py::module_& m) {
  py::class_<Support>(m, "Support", "Whether something can be done; when not, why.")
      .def_readonly("ok", &Support::ok)
      .def_readonly("reason", &Support::reason)
      .def("__bool__", [](const Support& s) { return s.ok; })
      .def("__repr__", [](const Support& s) {
        return s.ok ? std::string("convlab.Support(ok)") : "convlab.Support(no: " + s.reason + ")";
      });

  py::class_<KnobSpec>(m, "KnobSpec", "One knob an algorithm's plan() accepts.")
      .def_readonly("name", &KnobSpec::name)
      .def_property_readonly("type", [](const KnobSpec& k) { return to_string(k.type); })
      .def_readonly("default", &KnobSpec::default_value)
      .def_readonly("choices", &KnobSpec::choices)
      .def_readonly("min", &KnobSpec::min)
      .def_readonly("max", &KnobSpec::max)
      .def_readonly("allow_auto", &KnobSpec::allow_auto)
      .def_readonly("environment_default", &KnobSpec::environment_default)
      .def_readonly("description", &KnobSpec::description)
      .def("__repr__", [](const KnobSpec& k) {
        return "convlab.KnobSpec(" + k.name + ": " + to_string(k.type) + " = " + k.default_value +
               ")";
      });

  py::class_<AlgorithmInfo>(m, "AlgorithmInfo", "What an algorithm is, for any problem.")
      .def_readonly("name", &AlgorithmInfo::name)
      .def_property_readonly("device", [](const AlgorithmInfo& i) { return to_string(i.device); })
      .def_property_readonly("family", [](const AlgorithmInfo& i) { return to_string(i.family); })
      .def_readonly("backend", &AlgorithmInfo::backend)
      .def_readonly("description", &AlgorithmInfo::description)
      .def_readonly("deterministic", &AlgorithmInfo::deterministic)
      .def_property_readonly("math_mode",
                             [](const AlgorithmInfo& i) { return to_string(i.math_mode); })
      .def_readonly("knobs", &AlgorithmInfo::knobs)
      .def("__repr__", [](const AlgorithmInfo& i) {
        return "convlab.AlgorithmInfo(" + i.name + ": " + to_string(i.family) + ", " +
               to_string(i.device) + ", " + i.backend + ")";
      });

  py::class_<PlanInfo>(m, "PlanInfo", "What planning chose for one problem and pass.")
      .def_readonly("kernel", &PlanInfo::kernel)
      .def_readonly("transform", &PlanInfo::transform)
      .def_readonly("tile", &PlanInfo::tile)
      .def_property_readonly("math_mode", [](const PlanInfo& i) { return to_string(i.math_mode); })
      .def_readonly("workspace_split", &PlanInfo::workspace_split)
      .def_readonly("knobs", &PlanInfo::knobs)
      .def_readonly("details", &PlanInfo::details)
      .def("describe", &PlanInfo::describe)
      .def("__repr__", [](const PlanInfo& i) { return "convlab.PlanInfo(" + i.describe() + ")"; });

  py::class_<ErrorBound>(m, "ErrorBound",
                         "The bound an algorithm's outputs keep against exact arithmetic: "
                         "elementwise |e_i| <= factor eps sum|a||b|, or normwise per output "
                         "plane ||e||_2 <= factor eps log2_size sum ||a||_2 ||b||_2 "
                         "(eps = 2^-24).")
      .def_property_readonly("kind",
                             [](const ErrorBound& b) {
                               return b.kind == ErrorBound::Kind::elementwise ? "elementwise"
                                                                              : "normwise";
                             })
      .def_readonly("factor", &ErrorBound::factor)
      .def_readonly("log2_size", &ErrorBound::log2_size)
      .def("describe", &ErrorBound::describe);
}

}  // namespace

void bind_info(py::module_& m) {
  bind_problem(m);
  bind_descriptions(m);
  m.def(
      "passes", [] { return py::make_tuple("fwd", "bwd_data", "bwd_filter"); },
      "The pass spellings plan() accepts.");
}

}  // namespace convlab::python
