// Determinism of every CPU algorithm in the registry: with a fixed thread count, repeated runs
// of one plan, and a second plan made the same way, give bitwise identical outputs for the
// same inputs, for every algorithm that says deterministic() (docs/strategy-onednn.md lists
// which do). An algorithm that says it is not is run too and its differences are printed.
// The problems reduce over many terms in every pass (backward-filter over the batch, where
// a threaded reduction would show an order that varies) and include oneDNN's Winograd path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "convlab/descriptor.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"

namespace convlab {
namespace {

std::vector<float> run_once(const Algorithm& a, Plan& plan, const ConvProblem& p, Pass pass,
                            const HostTensors& host) {
  CaseBuffers buffers(a.context(), p, host, plan.workspace_bytes());  // poisoned workspace
  plan.run(buffers.tensors(), buffers.workspace());
  return buffers.download_output(pass);
}

TEST(Determinism, RepeatedRunsAreBitwiseIdentical) {
  const char* const problems[] = {"mb8ic12ih20oc10kh5ph2", "g2mb6ic8ih17oc8kh3sh2dh1ph1",
                                  "mb16ic64ih14oc64kh3ph1"};
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const Algorithm* a : registry().all()) {
      if (a->device() != Device::cpu || !a->available()) continue;
      for (const char* descriptor : problems) {
        const ConvProblem p = parse_descriptor(descriptor).problem;
        for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
          if (!a->supports(p, pass)) continue;
          const std::string where = a->name() + " " + to_string(pass) + " " + descriptor + ", " +
                                    std::to_string(threads) + " threads";
          const HostTensors host = make_inputs(p, pass, 99);
          auto plan = a->plan(p, pass);
          const auto first = run_once(*a, *plan, p, pass, host);
          const auto second = run_once(*a, *plan, p, pass, host);
          auto other_plan = a->plan(p, pass);
          const auto third = run_once(*a, *other_plan, p, pass, host);
          const std::size_t bytes = first.size() * sizeof(float);
          const bool same = std::memcmp(first.data(), second.data(), bytes) == 0 &&
                            std::memcmp(first.data(), third.data(), bytes) == 0;
          bool finite = true;
          for (float v : first) finite = finite && std::isfinite(v);
          EXPECT_TRUE(finite) << where << ": non-finite output (unwritten?)";
          if (a->deterministic()) {
            EXPECT_TRUE(same) << where << ": outputs differ between runs";
          } else if (!same) {
            std::cout << where << ": differs between runs (declared nondeterministic)\n";
          }
          if (pass == Pass::forward && descriptor == problems[0] && threads == 1) {
            std::cout << a->name() << ": deterministic() = " << a->deterministic() << "\n";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace convlab
