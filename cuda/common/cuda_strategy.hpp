#pragma once
// What the cuda.* strategies share as algorithms: they implement every valid problem on the
// device the registered algorithms use (device.hpp: default_device_index), so whether they
// can run is whether that device can; a plan runs on the device its `device` knob names. CUDA-free header.

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
};

}  // namespace convlab::cuda
