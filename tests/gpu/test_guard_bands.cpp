// The guard bands of the GPU memory test (guard_bands.hpp), on the host: the same code over
// host_context(), with out-of-bounds writes injected by hand. An off-by-one write past the
// end or before the start of any buffer must be reported, naming the buffer and band; writes
// inside the payloads must not be.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "gpu/guard_bands.hpp"

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

}  // namespace
}  // namespace convlab
