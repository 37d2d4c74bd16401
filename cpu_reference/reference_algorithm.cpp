// Registers the reference behind the common interface. It needs no workspace: every sum is
// a local double accumulator.
#include <memory>

#include "convlab/algorithm.hpp"
#include "convlab/device.hpp"
#include "register_reference.hpp"
#include "reference.hpp"

namespace convlab {
namespace {

class ReferencePlan final : public Plan {
 public:
  ReferencePlan(const ConvProblem& problem, Pass pass) : problem_(problem), pass_(pass) {
    info_.kernel = "direct loops, double accumulation";
  }
  std::size_t workspace_bytes() const override { return 0; }
  void execute(const Tensors& t, const Workspace& workspace, Stream) override {
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
  const AlgorithmInfo& info() const override {
    static const AlgorithmInfo kInfo{
        "reference", Device::cpu, Family::reference,
        "plain loops",
        "direct loops, double accumulation, one thread (the correctness reference)",
        /*deterministic=*/true, MathMode::fp32, /*knobs=*/{}};
    return kInfo;
  }
  Support supports(const ConvProblem& problem, Pass) const override {
    problem.validate();
    return Support::yes();
  }
  DeviceContext& context() const override { return host_context(); }

 protected:
  std::unique_ptr<Plan> make_plan(const ConvProblem& problem, Pass pass,
                                  const KnobValues&) const override {
    problem.validate();
    return std::make_unique<ReferencePlan>(problem, pass);
  }
};

}  // namespace

void register_reference(Registry& registry) {
  registry.add(std::make_unique<ReferenceAlgorithm>());
}

}  // namespace convlab
