// Registers the reference behind the common interface. It needs no workspace: every sum is
// a local double accumulator.
#include <memory>

#include "convlab/algorithm.hpp"
#include "convlab/device.hpp"
#include "lib/src/backends.hpp"
#include "reference.hpp"

namespace convlab {
namespace {

class ReferencePlan final : public Plan {
 public:
  ReferencePlan(const ConvProblem& problem, Pass pass) : problem_(problem), pass_(pass) {}
  std::size_t workspace_bytes() const override { return 0; }
  void run(const Tensors& t, const Workspace& workspace) override {
    check_run_arguments("reference", problem_, pass_, t, workspace, 0);
    switch (pass_) {
      case Pass::forward: reference::forward(problem_, t.x, t.w, t.y); break;
      case Pass::backward_data: reference::backward_data(problem_, t.y, t.w, t.x); break;
      case Pass::backward_filter: reference::backward_filter(problem_, t.x, t.y, t.w); break;
    }
  }

 private:
  ConvProblem problem_;
  Pass pass_;
};

class ReferenceAlgorithm final : public Algorithm {
 public:
  std::string name() const override { return "reference"; }
  Device device() const override { return Device::cpu; }
  std::string description() const override {
    return "direct loops, double accumulation, one thread (the correctness reference)";
  }
  bool deterministic() const override { return true; }
  Support supports(const ConvProblem& problem, Pass) const override {
    problem.validate();
    return Support::yes();
  }
  std::unique_ptr<Plan> plan(const ConvProblem& problem, Pass pass) const override {
    problem.validate();
    return std::make_unique<ReferencePlan>(problem, pass);
  }
  DeviceContext& context() const override { return host_context(); }
};

}  // namespace

void register_reference(Registry& registry) {
  registry.add(std::make_unique<ReferenceAlgorithm>());
}

}  // namespace convlab
