#include "convlab/harness.hpp"

namespace convlab {

namespace {
DeviceBuffer upload(DeviceContext& context, const std::vector<float>& host) {
  DeviceBuffer buffer(context, host.size() * sizeof(float));
  context.copy_to_device(buffer.data(), host.data(), buffer.bytes());
  return buffer;
}
}  // namespace

CaseBuffers::CaseBuffers(DeviceContext& context, const ConvProblem&, const HostTensors& host,
                         std::size_t workspace_bytes)
    : context_(&context),
      x_(upload(context, host.x)),
      w_(upload(context, host.w)),
      y_(upload(context, host.y)),
      workspace_(context, workspace_bytes) {
  context.fill_bytes(workspace_.data(), 0xFF, workspace_bytes);
  context.synchronize();
}

Tensors CaseBuffers::tensors() const { return {x_.floats(), w_.floats(), y_.floats()}; }

Workspace CaseBuffers::workspace() const { return {workspace_.data(), workspace_.bytes()}; }

static const DeviceBuffer& role(Pass pass, const DeviceBuffer& x, const DeviceBuffer& w,
                                const DeviceBuffer& y) {
  return pass == Pass::forward ? y : pass == Pass::backward_data ? x : w;
}

std::vector<float> CaseBuffers::download_output(Pass pass) const {
  const DeviceBuffer& out = role(pass, x_, w_, y_);
  std::vector<float> host(out.bytes() / sizeof(float));
  context_->synchronize();
  context_->copy_to_host(host.data(), out.data(), out.bytes());
  return host;
}

void CaseBuffers::reset_output(Pass pass, const HostTensors& host) {
  const DeviceBuffer& out = role(pass, x_, w_, y_);
  context_->copy_to_device(out.data(), host.output(pass).data(), out.bytes());
  context_->synchronize();
}

std::size_t CaseBuffers::device_bytes() const {
  return x_.bytes() + w_.bytes() + y_.bytes() + workspace_.bytes();
}

}  // namespace convlab
