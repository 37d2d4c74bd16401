// Algorithm, Plan and Plan.run: the registry's lifecycle (supports -> plan -> workspace ->
// run) as Python sees it. Arrays are checked at the boundary (arrays.cpp) and shared, never
// copied; the GIL is released while a plan is made or run.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "arrays.hpp"
#include "binding.hpp"
#include "convlab/algorithm.hpp"
#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"

namespace convlab::python {
namespace {

/// A plan with what made it: Plan.run checks arrays against the problem and the device.
struct BoundPlan {
  const Algorithm* algorithm;
  ConvProblem problem;
  Pass pass;
  std::unique_ptr<Plan> plan;
  /// A plan's run is not made to be entered twice at once (it may keep per-run state), and
  /// run releases the GIL: two Python threads sharing one plan take turns.
  std::unique_ptr<std::mutex> running = std::make_unique<std::mutex>();
};

KnobValues knob_values(const std::optional<py::dict>& knobs) {
  KnobValues values;
  if (!knobs) return values;
  for (const auto& [key, value] : *knobs) {
    if (!py::isinstance<py::str>(key)) {
      invalid_argument("knob names are strings, got " + type_name(key));
    }
    // 16 and True read as the command line's "16" and "true"; the schema validates them.
    values[key.cast<std::string>()] = py::isinstance<py::bool_>(value)
                                          ? (value.cast<bool>() ? "true" : "false")
                                          : py::str(value).cast<std::string>();
  }
  return values;
}

std::vector<int64_t> dims(const ConvProblem& p, char role) {
  if (role == 'x') return {p.n, p.c, p.h, p.w};
  if (role == 'w') return {p.k, p.c_per_group(), p.r, p.s};
  return {p.n, p.k, p.out_h(), p.out_w()};
}

char output_role(Pass pass) {
  return pass == Pass::forward ? 'y' : pass == Pass::backward_data ? 'x' : 'w';
}

const char* role_meaning(Pass pass, char role) {
  if (role == 'w') return pass == Pass::backward_filter ? "the filter gradient dw" : "the filter";
  if (role == 'x') return pass == Pass::backward_data ? "the input gradient dx" : "the input";
  return pass == Pass::forward ? "the output" : "the output gradient dy";
}

bool overlaps(const ArrayView& a, const ArrayView& b) {
  const auto* a0 = static_cast<const char*>(a.data);
  const auto* b0 = static_cast<const char*>(b.data);
  return a0 < b0 + b.bytes && b0 < a0 + a.bytes;
}

py::object run_plan(BoundPlan& bound, py::object x, py::object w, py::object y,
                    py::object workspace, std::optional<std::uintptr_t> stream) {
  const AlgorithmInfo& info = bound.algorithm->info();
  const Memory memory = info.device == Device::gpu ? Memory::cuda : Memory::host;
  const ConvProblem& p = bound.problem;
  const char out = output_role(bound.pass);
  py::object* args[3] = {&x, &w, &y};
  const char roles[3] = {'x', 'w', 'y'};
  ArrayView views[3];
  for (int i = 0; i < 3; ++i) {
    const char role = roles[i];
    py::object& arg = *args[i];
    const std::string name(1, role);
    if (arg.is_none()) {
      if (role != out) {
        invalid_argument(info.name + " " + to_string(bound.pass) + " reads " + name + " (" +
                         role_meaning(bound.pass, role) + "): pass " + name + "=");
      }
      if (memory == Memory::cuda) {
        invalid_argument(info.name + " " + to_string(bound.pass) + ": pass the output " + name +
                         " (" + role_meaning(bound.pass, role) +
                         ") as a CUDA array; convlab allocates no CUDA memory for outputs");
      }
      arg = py::array_t<float>(dims(p, role));
    }
    views[i] =
        check_array(arg, {name, info.name, p.descriptor(), dims(p, role), {}, role == out, memory});
  }
  const int o = out == 'x' ? 0 : out == 'w' ? 1 : 2;
  for (int i = 0; i < 3; ++i) {
    if (i != o && overlaps(views[i], views[o])) {
      invalid_argument(std::string(1, roles[o]) + " (" + info.name + "): the output overlaps " +
                       roles[i] + " in memory; pass a separate array");
    }
  }
  const std::size_t needed = bound.plan->workspace_bytes();
  DeviceBuffer owned;
  Workspace ws;
  std::optional<std::uintptr_t> producer_stream = views[o].stream;
  if (workspace.is_none()) {
    owned = DeviceBuffer(bound.algorithm->context(), needed);
    ws = {owned.data(), needed};
  } else {
    const ArrayView v =
        check_array(workspace, {"workspace", info.name, p.descriptor(), {}, needed, true, memory});
    for (int i = 0; i < 3; ++i) {
      if (overlaps(v, views[i])) {
        invalid_argument(std::string("workspace (") + info.name + "): it overlaps " + roles[i] +
                         " in memory; pass a separate array");
      }
    }
    ws = {v.data, v.bytes};
  }
  if (!stream) stream = producer_stream;
  {
    py::gil_scoped_release unlocked;
    const std::lock_guard<std::mutex> one_at_a_time(*bound.running);
    bound.plan->run({static_cast<float*>(views[0].data), static_cast<float*>(views[1].data),
                     static_cast<float*>(views[2].data)},
                    ws, Stream{stream ? reinterpret_cast<void*>(*stream) : nullptr});
    // On the caller's stream the work is ordered like any other work queued there; on the
    // algorithm's own stream (or with a workspace freed on return) it must be done before
    // the caller sees the output.
    if (!stream || owned.data()) bound.algorithm->context().synchronize();
  }
  return *args[o];
}

void bind_algorithm(py::module_& m) {
  py::class_<Algorithm, std::unique_ptr<Algorithm, py::nodelete>>(
      m, "Algorithm", "A convolution strategy of the registry (convlab.algorithm(name)).")
      .def_property_readonly("name", &Algorithm::name)
      .def_property_readonly("info", &Algorithm::info, py::return_value_policy::reference_internal,
                             "family, backend, device, determinism, math mode, knobs")
      .def("available", &Algorithm::available,
           "Whether it can run on this machine (e.g. a CUDA device is present), and why not.")
      .def(
          "supports",
          [](const Algorithm& a, const ConvProblem& p, const std::string& pass) {
            return a.supports(p, parse_pass(pass));
          },
          py::arg("problem"), py::arg("pass_") = "fwd",
          "Whether it implements the problem and pass ('fwd', 'bwd_data', 'bwd_filter').")
      .def(
          "error_bound",
          [](const Algorithm& a, const ConvProblem& p, const std::string& pass) {
            return a.error_bound(p, parse_pass(pass));
          },
          py::arg("problem"), py::arg("pass_") = "fwd")
      .def(
          "plan",
          [](const Algorithm& a, const ConvProblem& p, const std::string& pass,
             const std::optional<py::dict>& knobs) {
            const Pass parsed = parse_pass(pass);
            const KnobValues values = knob_values(knobs);
            std::unique_ptr<Plan> plan;
            {
              py::gil_scoped_release unlocked;
              plan = a.plan(p, parsed, values);
            }
            return BoundPlan{&a, p, parsed, std::move(plan), std::make_unique<std::mutex>()};
          },
          py::arg("problem"), py::arg("pass_") = "fwd", py::arg("knobs") = py::none(),
          "Prepares the pass with knobs (a dict; the rest default). Raises convlab.Error "
          "with code 'unsupported' and the reason when supports() says no.")
      .def("__repr__", [](const Algorithm& a) { return "convlab.algorithm('" + a.name() + "')"; });

  py::class_<BoundPlan>(m, "Plan", "A problem and pass made ready to run.")
      .def_property_readonly(
          "workspace_bytes", [](const BoundPlan& b) { return b.plan->workspace_bytes(); },
          "The exact scratch bytes run() needs.")
      .def_property_readonly(
          "info", [](const BoundPlan& b) -> const PlanInfo& { return b.plan->info(); },
          py::return_value_policy::reference_internal)
      .def_property_readonly(
          "error_bound", [](const BoundPlan& b) { return b.plan->error_bound(); },
          "The bound this plan's outputs keep (the algorithm's, as its knobs make it).")
      .def_property_readonly(
          "algorithm", [](const BoundPlan& b) { return b.algorithm; },
          py::return_value_policy::reference)
      .def_property_readonly("problem", [](const BoundPlan& b) { return b.problem; })
      .def_property_readonly("pass_", [](const BoundPlan& b) { return to_string(b.pass); })
      .def("run", &run_plan, py::kw_only(), py::arg("x") = py::none(), py::arg("w") = py::none(),
           py::arg("y") = py::none(), py::arg("workspace") = py::none(),
           py::arg("stream") = py::none(),
           "Computes the pass and returns its output. fwd reads x, w and writes y; bwd_data "
           "reads y (dy), w and writes x (dx); bwd_filter reads x, y (dy) and writes w (dw). "
           "CPU algorithms take C-contiguous float32 numpy arrays and allocate the output if "
           "it is not given; GPU algorithms take CUDA arrays (__cuda_array_interface__), the "
           "output included, and run on `stream` (a cudaStream_t as an int), else on the "
           "stream the output names, else on their own and wait for it. The workspace (any "
           "dtype, at least workspace_bytes) is allocated for the call when not given.")
      .def("__repr__", [](const BoundPlan& b) {
        return "convlab.Plan(" + b.algorithm->name() + " " + to_string(b.pass) + " " +
               b.problem.descriptor() + ": " + b.plan->notes() + ")";
      });
}

}  // namespace

void bind_run(py::module_& m) {
  bind_algorithm(m);
  m.def(
      "algorithms",
      [](const std::string& globs) {
        return globs.empty() ? registry().all() : registry().match(globs);
      },
      py::arg("globs") = "", py::return_value_policy::reference,
      "The algorithms compiled in (all, or those matching comma-separated globs such as "
      "'cpu.*'), in registry order.");
  m.def(
      "algorithm", [](const std::string& name) { return &registry().get(name); }, py::arg("name"),
      py::return_value_policy::reference,
      "The algorithm of that name; convlab.Error (invalid_argument) lists the known ones.");
  m.def(
      "missing",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const MissingAlgorithm& a : registry().missing()) out.emplace_back(a.name, a.reason);
        return out;
      },
      "What this build knows of but cannot offer: (name or glob, reason) pairs.");
}

}  // namespace convlab::python
