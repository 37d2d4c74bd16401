// The reference checked on its own: hand-computed cases for each pass, the adjoint
// identities on random problems, and finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "cpu_reference/reference.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

ConvProblem single(int64_t h, int64_t w, int64_t r, int64_t s) {
  ConvProblem p;
  p.n = 1, p.c = 1, p.k = 1, p.h = h, p.w = w, p.r = r, p.s = s;
  return p;
}

std::vector<float> iota(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1.0f);
  return v;
}

TEST(ReferenceForward, HandComputedDense) {
  const ConvProblem p = single(3, 3, 2, 2);
  const std::vector<float> x = iota(9), w = {1, 0, 0, -1};
  std::vector<float> y(4);
  reference::forward(p, x.data(), w.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{-4, -4, -4, -4}));  // x[i][j] - x[i+1][j+1]
}

TEST(ReferenceForward, HandComputedStride2Padding1) {
  ConvProblem p = single(3, 3, 3, 3);
  p.pad_h = p.pad_w = 1, p.stride_h = p.stride_w = 2;
  const std::vector<float> x = iota(9), w(9, 1.0f);
  std::vector<float> y(4);
  reference::forward(p, x.data(), w.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{12, 16, 24, 28}));  // 2x2 corner sums of the 3x3 grid
}

TEST(ReferenceForward, HandComputedDilation2) {
  ConvProblem p = single(5, 5, 2, 2);
  p.dilation_h = p.dilation_w = 2;
  const std::vector<float> x = iota(25), w(4, 1.0f);
  std::vector<float> y(9);
  reference::forward(p, x.data(), w.data(), y.data());
  // x[i][j] + x[i][j+2] + x[i+2][j] + x[i+2][j+2] = 4 x[i][j] + 24
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(y[i * 3 + j], 4 * x[i * 5 + j] + 24);
}

TEST(ReferenceForward, HandComputedGroups2) {
  ConvProblem p = single(2, 2, 1, 1);
  p.c = 2, p.k = 2, p.groups = 2;
  const std::vector<float> x = iota(8), w = {2, 3};
  std::vector<float> y(8);
  reference::forward(p, x.data(), w.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{2, 4, 6, 8, 15, 18, 21, 24}));  // y0 = 2 x0, y1 = 3 x1
}

// benchdnn's mb1ic1ih3oc1oh3kh2: total padding 1, so none at the top/left and 1 at the
// bottom/right. By hand, y[i][j] = sum_ab x[i+a][j+b] w[a][b] with x = 0 past row/column 2.
TEST(ReferenceForward, HandComputedEndPaddingOnly) {
  const ConvProblem p = parse_descriptor("mb1ic1ih3oc1oh3kh2").problem;
  ASSERT_EQ(p.pad_h, 0);
  ASSERT_EQ(p.end_pad_h(), 1);
  ASSERT_EQ(p.end_pad_w(), 1);
  const std::vector<float> x = iota(9), w = {1, 2, 3, 4};
  std::vector<float> y(9);
  reference::forward(p, x.data(), w.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{37, 47, 21, 67, 77, 33, 23, 26, 9}));
}

TEST(ReferenceBackwardData, HandComputedEndPaddingOnly) {
  const ConvProblem p = parse_descriptor("mb1ic1ih3oc1oh3kh2").problem;
  const std::vector<float> dy(9, 1.0f), w = {1, 2, 3, 4};
  std::vector<float> dx(9);
  reference::backward_data(p, dy.data(), w.data(), dx.data());
  // dx[i][j] sums w[a][b] over the taps with 0 <= i-a, j-b < 3: row/column 0 sees a = 0 only.
  EXPECT_EQ(dx, (std::vector<float>{1, 3, 3, 4, 10, 10, 4, 10, 10}));
}

TEST(ReferenceBackwardFilter, HandComputedEndPaddingOnly) {
  const ConvProblem p = parse_descriptor("mb1ic1ih3oc1oh3kh2").problem;
  const std::vector<float> x = iota(9), dy(9, 1.0f);
  std::vector<float> dw(4);
  reference::backward_filter(p, x.data(), dy.data(), dw.data());
  // dw[a][b] = sum of x[i][j] over i >= a, j >= b: all 45, columns 1-2 33, rows 1-2 39, 28.
  EXPECT_EQ(dw, (std::vector<float>{45, 33, 39, 28}));
}

// Start padding 2, end padding 0 (ph given, oh given: the end padding is what makes oh):
// y[i] = x[i-2] + x[i-1] + x[i] along a single row of 4, stride 1.
TEST(ReferenceForward, HandComputedStartPaddingOnly) {
  const ConvProblem p = parse_descriptor("mb1ic1ih1iw4oc1oh1ow4kh1kw3ph0pw2").problem;
  ASSERT_EQ(p.pad_w, 2);
  ASSERT_EQ(p.end_pad_w(), 0);
  const std::vector<float> x = {1, 10, 100, 1000}, w = {1, 1, 1};
  std::vector<float> y(4);
  reference::forward(p, x.data(), w.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{1, 11, 111, 1110}));
}

TEST(ReferenceBackwardData, HandComputedDenseAndStride2) {
  const ConvProblem p = single(3, 3, 2, 2);
  const std::vector<float> w = {1, 2, 3, 4};
  std::vector<float> dy = {0, 0, 0, 1}, dx(9);
  reference::backward_data(p, dy.data(), w.data(), dx.data());
  EXPECT_EQ(dx, (std::vector<float>{0, 0, 0, 0, 1, 2, 0, 3, 4}));  // kernel placed at (1,1)

  ConvProblem q = single(3, 3, 1, 1);
  q.stride_h = q.stride_w = 2;
  const std::vector<float> w5 = {5}, dy2 = {1, 2, 3, 4};
  std::vector<float> dx2(9);
  reference::backward_data(q, dy2.data(), w5.data(), dx2.data());
  EXPECT_EQ(dx2, (std::vector<float>{5, 0, 10, 0, 0, 0, 15, 0, 20}));
}

TEST(ReferenceBackwardData, HandComputedPaddingDilationGroups) {
  ConvProblem p = single(3, 3, 3, 3);
  p.pad_h = p.pad_w = 1;
  const std::vector<float> w(9, 1.0f);
  std::vector<float> dy(9, 0.0f), dx(9);
  dy[4] = 1;  // the centre output reads every input: each gets w = 1
  reference::backward_data(p, dy.data(), w.data(), dx.data());
  EXPECT_EQ(dx, std::vector<float>(9, 1.0f));

  ConvProblem d = single(5, 5, 2, 2);
  d.dilation_h = d.dilation_w = 2;
  const std::vector<float> wd = {1, 2, 3, 4};
  std::vector<float> dyd(9, 0.0f), dxd(25);
  dyd[0] = 1;  // output (0,0) reads x at (0,0), (0,2), (2,0), (2,2)
  reference::backward_data(d, dyd.data(), wd.data(), dxd.data());
  std::vector<float> expect(25, 0.0f);
  expect[0] = 1, expect[2] = 2, expect[10] = 3, expect[12] = 4;
  EXPECT_EQ(dxd, expect);

  ConvProblem g = single(1, 2, 1, 1);
  g.c = 2, g.k = 2, g.groups = 2;
  const std::vector<float> wg = {2, 3}, dyg = {1, 2, 3, 4};
  std::vector<float> dxg(4);
  reference::backward_data(g, dyg.data(), wg.data(), dxg.data());
  EXPECT_EQ(dxg, (std::vector<float>{2, 4, 9, 12}));
}

TEST(ReferenceBackwardFilter, HandComputed) {
  const ConvProblem p = single(3, 3, 2, 2);
  const std::vector<float> x = iota(9), dy(4, 1.0f);
  std::vector<float> dw(4);
  reference::backward_filter(p, x.data(), dy.data(), dw.data());
  EXPECT_EQ(dw, (std::vector<float>{12, 16, 24, 28}));

  ConvProblem d = single(5, 5, 2, 2);
  d.dilation_h = d.dilation_w = 2;
  const std::vector<float> xd = iota(25), dyd(9, 1.0f);
  std::vector<float> dwd(4);
  reference::backward_filter(d, xd.data(), dyd.data(), dwd.data());
  EXPECT_EQ(dwd, (std::vector<float>{63, 81, 153, 171}));

  ConvProblem s = single(3, 3, 3, 3);
  s.pad_h = s.pad_w = 1, s.stride_h = s.stride_w = 2;  // outputs at (0,0),(0,2),(2,0),(2,2)
  const std::vector<float> xs = iota(9), dys = {1, 0, 0, 0};
  std::vector<float> dws(9);
  reference::backward_filter(s, xs.data(), dys.data(), dws.data());
  // output (0,0) reads x[r-1][s-1]: the top-left 2x2 of x lands in taps (1..2, 1..2)
  EXPECT_EQ(dws, (std::vector<float>{0, 0, 0, 0, 1, 2, 0, 4, 5}));

  ConvProblem g = single(1, 2, 1, 1);
  g.c = 2, g.k = 2, g.groups = 2, g.n = 2;
  const std::vector<float> xg = {1, 2, 3, 4, 5, 6, 7, 8}, dyg = {1, 1, 1, 1, 2, 2, 2, 2};
  std::vector<float> dwg(2);
  reference::backward_filter(g, xg.data(), dyg.data(), dwg.data());
  // dw0 = sum_n <dy[n,0], x[n,0]> = (1+2) + 2*(5+6); dw1 = (3+4) + 2*(7+8)
  EXPECT_EQ(dwg, (std::vector<float>{25, 37}));
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;
}
double abs_dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += std::fabs(double(a[i]) * b[i]);
  return s;
}

// <dy, fwd(x,w)> = <bwd_data(dy,w), x> = <bwd_filter(x,dy), w>: each side is the same sum
// of products x*w*dy, regrouped. Outputs are rounded to fp32 once, so the sides agree to a
// few eps times the sum of |terms|.
TEST(Reference, AdjointIdentitiesOnRandomProblems) {
  const uint64_t seed = testing::run_seed();
  const auto problems = testing::random_problems(seed, 200);
  ASSERT_EQ(problems.size(), 200u);
  int checked = 0;
  for (const ConvProblem& p : problems) {
    HostTensors t = make_inputs(p, Pass::forward, seed + checked);
    std::vector<float> y(t.y.size()), dx(t.x.size()), dw(t.w.size());
    std::vector<float> dy(t.y.size());
    std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& v : dy) v = u(rng);
    reference::forward(p, t.x.data(), t.w.data(), y.data());
    reference::backward_data(p, dy.data(), t.w.data(), dx.data());
    reference::backward_filter(p, t.x.data(), dy.data(), dw.data());
    const double a = dot(dy, y), b = dot(dx, t.x), c = dot(dw, t.w);
    const double scale = abs_dot(dy, y) + abs_dot(dx, t.x) + abs_dot(dw, t.w) + 1e-30;
    // fp32 rounding of each output: |err| <= 2^-24 |out|, summed: <= 2^-24 * scale.
    const double tol = 4 * 6e-8 * scale;
    EXPECT_NEAR(a, b, tol) << p.descriptor() << " seed " << seed;
    EXPECT_NEAR(a, c, tol) << p.descriptor() << " seed " << seed;
    ++checked;
  }
}

// L(x, w) = <dy, fwd(x, w)> is linear in x and in w, so a central difference is exact up to
// rounding: (L(x + h e_i) - L(x - h e_i)) / 2h = dL/dx_i = bwd_data(dy, w)_i.
TEST(Reference, FiniteDifferencesMatchBothGradients) {
  ConvProblem p;
  p.n = 2, p.c = 4, p.h = 9, p.w = 8, p.k = 6, p.r = 3, p.s = 2;
  p.pad_h = 1, p.stride_w = 2, p.dilation_h = 2, p.groups = 2;
  const uint64_t seed = testing::run_seed();
  HostTensors t = make_inputs(p, Pass::forward, seed);
  std::vector<float> dy(t.y.size());
  std::mt19937_64 rng(seed + 1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : dy) v = u(rng);
  auto loss = [&](const std::vector<float>& x, const std::vector<float>& w) {
    std::vector<float> y(dy.size());
    reference::forward(p, x.data(), w.data(), y.data());
    return dot(dy, y);
  };
  std::vector<float> dx(t.x.size()), dw(t.w.size());
  reference::backward_data(p, dy.data(), t.w.data(), dx.data());
  reference::backward_filter(p, t.x.data(), dy.data(), dw.data());
  const float h = 0.25f;  // exact in fp32; linearity makes the step size irrelevant
  for (size_t i = 0; i < t.x.size(); i += 7) {
    std::vector<float> xp = t.x, xm = t.x;
    xp[i] += h, xm[i] -= h;
    const double fd = (loss(xp, t.w) - loss(xm, t.w)) / (2.0 * h);
    EXPECT_NEAR(fd, dx[i], 1e-4 * (1 + std::fabs(dx[i]))) << "x[" << i << "] seed " << seed;
  }
  for (size_t i = 0; i < t.w.size(); i += 3) {
    std::vector<float> wp = t.w, wm = t.w;
    wp[i] += h, wm[i] -= h;
    const double fd = (loss(t.x, wp) - loss(t.x, wm)) / (2.0 * h);
    EXPECT_NEAR(fd, dw[i], 1e-4 * (1 + std::fabs(dw[i]))) << "w[" << i << "] seed " << seed;
  }
}

// Through the registry's Algorithm interface (plan, workspace, run on the host context) the
// reference must give the hand-computed answers above, not merely agree with itself.
TEST(Reference, RegisteredAndHandComputedThroughTheInterface) {
  const Algorithm& ref = registry().get("reference");
  const ConvProblem p = testing::problem("mb1ic1ih3oc1kh2");
  const std::vector<float> x = iota(9), w = {1, 0, 0, -1}, dy(4, 1.0f);
  struct Case {
    Pass pass;
    std::vector<float> expected;
  };
  const Case cases[] = {{Pass::forward, {-4, -4, -4, -4}},        // x[i][j] - x[i+1][j+1]
                        {Pass::backward_data, {1, 1, 0, 1, 0, -1, 0, -1, -1}},
                        {Pass::backward_filter, {12, 16, 24, 28}}};  // 2x2 window sums of x
  for (const Case& c : cases) {
    HostTensors host = make_inputs(p, c.pass, testing::run_seed());
    if (c.pass != Pass::backward_data) host.x = x;
    if (c.pass != Pass::backward_filter) host.w = w;
    if (c.pass != Pass::forward) host.y = dy;
    auto plan = ref.plan(p, c.pass);
    CaseBuffers buffers(ref.context(), p, host, plan->workspace_bytes());
    plan->run(buffers.tensors(), buffers.workspace());
    EXPECT_EQ(buffers.download_output(c.pass), c.expected) << to_string(c.pass);
  }
}

TEST(Reference, InvalidProblemIsAnError) {
  ConvProblem p = single(3, 3, 5, 5);
  std::vector<float> x(9), w(25), y(1);
  EXPECT_THROW(reference::forward(p, x.data(), w.data(), y.data()), Error);
}

}  // namespace
}  // namespace convlab
