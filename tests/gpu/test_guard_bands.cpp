// The guard bands of the GPU memory test (guard_bands.hpp), on the host: the same code over
// host_context(), with out-of-bounds writes injected by hand. An off-by-one write past the
// end or before the start of any buffer must be reported, naming the buffer and band; writes
// inside the payloads must not be. The last tests drive a real plan exactly as the GPU
// memory test does (run into a GuardedCase, then check), once as it is and once wrapped so
// that its output loop runs one element too far, the bug the bands are there to catch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "convlab/registry.hpp"
#include "gpu/guard_bands.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using testing::GuardedCase;

HostTensors tensors(std::size_t nx, std::size_t nw, std::size_t ny) {
  HostTensors t;
  t.x.assign(nx, 0.5f);
  t.w.assign(nw, -0.25f);
  t.y.assign(ny, std::numeric_limits<float>::quiet_NaN());
  return t;
}

TEST(GuardBands, WritesInsideThePayloadsAreFine) {
  const HostTensors host = tensors(37, 9, 53);
  GuardedCase c(host_context(), host, 100);
  const Tensors t = c.tensors();
  for (std::size_t i = 0; i < host.y.size(); ++i) t.y[i] = float(i);
  for (std::size_t i = 0; i < host.x.size(); ++i) t.x[i] = 0.0f;
  std::memset(c.workspace().data, 0, c.workspace().bytes);
  EXPECT_EQ(c.check(), "");
  EXPECT_EQ(t.x[0], 0.0f);
  EXPECT_EQ(t.w[8], -0.25f);  // uploaded
}

TEST(GuardBands, OffByOnePastTheEndIsCaught) {
  for (float value : {0.0f, 1.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()}) {
    const HostTensors host = tensors(37, 9, 53);
    GuardedCase c(host_context(), host, 100);
    c.tensors().y[host.y.size()] = value;  // the injected bug: one element past y
    const std::string damage = c.check();
    EXPECT_NE(damage.find("y back guard (from byte 212)"), std::string::npos) << damage;
    EXPECT_NE(damage.find("guard byte 0"), std::string::npos) << damage;
    EXPECT_EQ(damage.find("x "), std::string::npos) << damage;
  }
}

TEST(GuardBands, OffByOneBeforeTheStartIsCaught) {
  const HostTensors host = tensors(37, 9, 53);
  GuardedCase c(host_context(), host, 100);
  c.tensors().w[-1] = 0.0f;  // the injected bug: one element before w
  const std::string damage = c.check();
  EXPECT_NE(damage.find("w front guard"), std::string::npos) << damage;
  EXPECT_NE(damage.find("guard byte 252"), std::string::npos) << damage;
}

TEST(GuardBands, OneBytePastTheWorkspaceIsCaught) {
  const HostTensors host = tensors(4, 4, 4);
  GuardedCase c(host_context(), host, 100);
  const Workspace ws = c.workspace();
  static_cast<unsigned char*>(ws.data)[ws.bytes] ^= 0x01;  // a single flipped bit
  const std::string damage = c.check();
  EXPECT_NE(damage.find("workspace back guard"), std::string::npos) << damage;
  EXPECT_NE(damage.find("1 of 256 guard bytes"), std::string::npos) << damage;
}

TEST(GuardBands, ZeroByteWorkspaceIsStillGuarded) {
  const HostTensors host = tensors(4, 4, 4);
  GuardedCase c(host_context(), host, 0);
  EXPECT_EQ(c.workspace().data, nullptr);
  EXPECT_EQ(c.check(), "");
}

TEST(GuardBands, BandsDiffer) {
  // Neighbouring bands differ, so a block copied from one band to the next is still seen.
  EXPECT_NE(testing::guard_pattern(2), testing::guard_pattern(3));
  EXPECT_NE(testing::guard_pattern(2), std::vector<unsigned char>(testing::kGuardBytes, 0));
}

// A plan whose last output element is followed by one more write: the off-by-one of a
// kernel whose bound is `<=` instead of `<`, injected after the real plan has run.
class OffByOneOutput final : public Plan {
 public:
  OffByOneOutput(std::unique_ptr<Plan> inner, const ConvProblem& p, Pass pass)
      : inner_(std::move(inner)), p_(p), pass_(pass) {}
  std::size_t workspace_bytes() const override { return inner_->workspace_bytes(); }

 protected:
  void execute(const Tensors& t, const Workspace& ws, Stream stream) override {
    inner_->run(t, ws, stream);
    switch (pass_) {
      case Pass::forward:
        t.y[p_.y_elems()] = t.y[p_.y_elems() - 1];
        break;
      case Pass::backward_data:
        t.x[p_.x_elems()] = t.x[p_.x_elems() - 1];
        break;
      case Pass::backward_filter:
        t.w[p_.w_elems()] = t.w[p_.w_elems() - 1];
        break;
    }
  }

 private:
  std::unique_ptr<Plan> inner_;
  ConvProblem p_;
  Pass pass_;
};

ConvProblem small_layer() {
  ConvProblem p;
  p.n = 2, p.c = 3, p.h = p.w = 7, p.k = 4, p.r = p.s = 3, p.pad_h = p.pad_w = 1;
  return p;
}

TEST(GuardBands, ARealPlanRunsCleanAndItsOffByOneIsCaught) {
  const Algorithm& algo = registry().get("cpu.im2col");
  const ConvProblem p = small_layer();
  const char* output_band[] = {"y back guard", "x back guard", "w back guard"};
  for (Pass pass : testing::all_passes()) {
    const HostTensors host = make_inputs(p, pass, testing::run_seed());
    {
      auto plan = algo.plan(p, pass);
      GuardedCase c(host_context(), host, plan->workspace_bytes());
      plan->run(c.tensors(), c.workspace());
      EXPECT_EQ(c.check(), "") << to_string(pass) << ": the real plan wrote outside its buffers";
    }
    OffByOneOutput buggy(algo.plan(p, pass), p, pass);
    GuardedCase c(host_context(), host, buggy.workspace_bytes());
    buggy.run(c.tensors(), c.workspace());
    const std::string damage = c.check();
    EXPECT_NE(damage.find(output_band[static_cast<int>(pass)]), std::string::npos)
        << to_string(pass) << ": the injected write past the output was not caught: '" << damage
        << "'";
  }
}

}  // namespace
}  // namespace convlab
