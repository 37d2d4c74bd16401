#pragma once
// What the cuda.* strategies share as algorithms: they implement every valid problem their
// math covers (a Winograd strategy refuses other shapes, device or not) on the device the
// registered algorithms use (device.hpp: default_device_index), so whether they can run is
// whether that device can; a plan runs on the device its `device` knob names. CUDA-free header.

#include <string>

#include "convlab/algorithm.hpp"
#include "convlab/error.hpp"
#include "device.hpp"
#include "settings.hpp"

namespace convlab::cuda {

class CudaStrategy : public Algorithm {
 public:
  Support available() const override { return device_support(default_device_index()); }
  Support supports(const ConvProblem& problem, Pass) const override {
    problem.validate();
    return available();
  }
  DeviceContext& context() const override { return device_context(default_device_index()); }

  /// The device a plan made with `knobs` runs on (the `device` knob, settings.hpp).
  DeviceContext& plan_context(const KnobValues& knobs) const override {
    return device_context(device_of(info(), knobs));
  }

 protected:
  /// What a strategy that can refuse a problem checks before planning, in this order: the
  /// problem is valid (Error{invalid_problem}), the device of `settings` is usable
  /// (Error{unavailable}), supports() says yes (Error{unsupported} with its reason, which
  /// names the algorithm). Returns that device's context.
  CudaContext& supported_plan_device(const ConvProblem& problem, Pass pass,
                                     const GpuSettings& settings) const {
    problem.validate();
    CudaContext& context = plan_device(info().name, settings.device);
    const Support support = supports(problem, pass);
    if (!support) throw Error(ErrorCode::unsupported, support.reason);
    return context;
  }
};

}  // namespace convlab::cuda
