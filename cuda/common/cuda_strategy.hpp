#pragma once
// What the cuda.* strategies share as algorithms: they implement every valid problem on the
// device the registered algorithms use (device.hpp: default_device_index), so whether they
// can run is whether that device can, and a plan needs it ready. CUDA-free header.

#include <string>

#include "convlab/algorithm.hpp"
#include "convlab/error.hpp"
#include "device.hpp"

namespace convlab::cuda {

class CudaStrategy : public Algorithm {
 public:
  Support available() const override { return device_support(default_device_index()); }
  Support supports(const ConvProblem& problem, Pass) const override {
    problem.validate();
    return available();
  }
  DeviceContext& context() const override { return device_context(default_device_index()); }

 protected:
  /// The context to plan `problem` on. Throws Error{invalid_problem} for an invalid problem
  /// and Error{unavailable}, naming the algorithm and the device's reason, when the device
  /// cannot be used.
  CudaContext& ready_context(const ConvProblem& problem) const {
    problem.validate();
    const Support ready = available();
    if (!ready) throw Error(ErrorCode::unavailable, name() + ": " + ready.reason);
    return device_context(default_device_index());
  }
};

}  // namespace convlab::cuda
