#pragma once
/// \file
/// One case on an algorithm's device: its tensors uploaded, its output and workspace
/// poisoned, the result downloaded. Shared by convbench and the tests so that both exercise
/// an algorithm the same way.

#include <cstddef>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/algorithm.hpp"
#include "convlab/device.hpp"

namespace convlab {

class CaseBuffers {
 public:
  /// Allocates x, w, y and the workspace on `context`'s device and uploads `host` (whose
  /// output role make_inputs() filled with NaN). The workspace is filled with 0xFF bytes, a
  /// NaN pattern, so a plan that reads scratch it did not write shows it.
  CaseBuffers(DeviceContext& context, const ConvProblem& problem, const HostTensors& host,
              std::size_t workspace_bytes);
  Tensors tensors() const;
  Workspace workspace() const;
  /// Copies the output of `pass` back to the host.
  std::vector<float> download_output(Pass pass) const;
  /// Uploads the output role again from `host` (re-poisons it between runs).
  void reset_output(Pass pass, const HostTensors& host);
  /// Bytes held on the device: the three tensors and the workspace.
  std::size_t device_bytes() const;

 private:
  DeviceContext* context_;
  DeviceBuffer x_, w_, y_, workspace_;
};

}  // namespace convlab
