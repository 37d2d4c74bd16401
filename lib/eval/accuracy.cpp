#include "convlab/accuracy.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "cpu_reference/reference.hpp"
#include "plane_bounds.hpp"

namespace convlab {

std::string ErrorBound::describe() const {
  std::ostringstream out;
  if (kind == Kind::elementwise) {
    out << "elementwise |e_i| <= " << factor << " eps sum|a||b|";
  } else {
    out << "normwise ||e_plane||_2 <= " << factor << " eps log2(" << std::exp2(log2_size)
        << ") sum ||a||_2 ||b||_2";
  }
  return out.str();
}

HostTensors make_inputs(const ConvProblem& p, Pass pass, uint64_t seed, Fill fill) {
  p.validate();
  // The three host tensors, checked before they are allocated (harness.hpp).
  check_host_memory(p.tensor_bytes().total(), "the host tensors of " + p.descriptor());
  HostTensors t;
  t.x.resize(static_cast<size_t>(p.x_elems()));
  t.w.resize(static_cast<size_t>(p.w_elems()));
  t.y.resize(static_cast<size_t>(p.y_elems()));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  // Integers in [-2, 2] with a quarter zeros: products up to 4, sums of < 2^22 terms stay
  // exact in fp32 (24-bit significand).
  std::uniform_int_distribution<int> small(-2, 2);
  auto fill_tensor = [&](std::vector<float>& v) {
    for (float& e : v) e = fill == Fill::uniform ? uniform(rng) : static_cast<float>(small(rng));
  };
  fill_tensor(t.x);
  fill_tensor(t.w);
  fill_tensor(t.y);
  auto& out = t.output(pass);
  std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
  return t;
}

namespace {

void run_reference(const ConvProblem& p, Pass pass, HostTensors& t) {
  switch (pass) {
    case Pass::forward: reference::forward(p, t.x.data(), t.w.data(), t.y.data()); break;
    case Pass::backward_data:
      reference::backward_data(p, t.y.data(), t.w.data(), t.x.data());
      break;
    case Pass::backward_filter:
      reference::backward_filter(p, t.x.data(), t.y.data(), t.w.data());
      break;
  }
}

std::vector<float> absolute(const std::vector<float>& v) {
  std::vector<float> a(v.size());
  for (size_t i = 0; i < v.size(); ++i) a[i] = std::fabs(v[i]);
  return a;
}

// Plane p of a tensor of `planes` planes of `plane_size` elements: its 2-norm.
std::vector<double> plane_norms(const std::vector<float>& v, int64_t planes) {
  const int64_t size = planes ? static_cast<int64_t>(v.size()) / planes : 0;
  std::vector<double> norms(static_cast<size_t>(planes), 0.0);
  for (int64_t pl = 0; pl < planes; ++pl) {
    double s = 0;
    for (int64_t i = 0; i < size; ++i) s += double(v[pl * size + i]) * v[pl * size + i];
    norms[pl] = std::sqrt(s);
  }
  return norms;
}

}  // namespace

std::vector<double> normwise_plane_bounds(const ConvProblem& p, Pass pass,
                                          const HostTensors& t) {
  const int64_t cpg = p.c_per_group(), kpg = p.k_per_group();
  const auto nx = plane_norms(t.x, p.n * p.c);   // (n, c)
  const auto nw = plane_norms(t.w, p.k * cpg);   // (k, c')
  const auto ny = plane_norms(t.y, p.n * p.k);   // (n, k)
  std::vector<double> bounds;
  if (pass == Pass::forward) {  // planes (n, k), reduce over c in group
    for (int64_t n = 0; n < p.n; ++n)
      for (int64_t k = 0; k < p.k; ++k) {
        double b = 0;
        const int64_t c0 = (k / kpg) * cpg;
        for (int64_t c = 0; c < cpg; ++c) b += nx[n * p.c + c0 + c] * nw[k * cpg + c];
        bounds.push_back(b);
      }
  } else if (pass == Pass::backward_data) {  // planes (n, c), reduce over k in group
    for (int64_t n = 0; n < p.n; ++n)
      for (int64_t c = 0; c < p.c; ++c) {
        double b = 0;
        const int64_t g = c / cpg;
        for (int64_t k = g * kpg; k < (g + 1) * kpg; ++k) {
          b += ny[n * p.k + k] * nw[k * cpg + c % cpg];
        }
        bounds.push_back(b);
      }
  } else {  // planes (k, c'), reduce over n
    for (int64_t k = 0; k < p.k; ++k)
      for (int64_t c = 0; c < cpg; ++c) {
        double b = 0;
        const int64_t c_abs = (k / kpg) * cpg + c;
        for (int64_t n = 0; n < p.n; ++n) b += ny[n * p.k + k] * nx[n * p.c + c_abs];
        bounds.push_back(b);
      }
  }
  return bounds;
}

AccuracyReport compare_with_reference(const ConvProblem& p, Pass pass, const HostTensors& inputs,
                                      const std::vector<float>& result, const ErrorBound& bound) {
  // The reference's output and its magnitude run: two more copies of the three tensors.
  check_host_memory(checked_mul(p.tensor_bytes().total(), 2, "reference check bytes"),
                    "the reference check of " + p.descriptor());
  HostTensors ref = inputs;
  run_reference(p, pass, ref);
  HostTensors mag{absolute(inputs.x), absolute(inputs.w), absolute(inputs.y)};
  run_reference(p, pass, mag);
  const std::vector<float>& expected = ref.output(pass);
  const std::vector<float>& a_sum = mag.output(pass);
  if (result.size() != expected.size()) {
    throw Error(ErrorCode::invalid_argument, "result has " + std::to_string(result.size()) +
                                                 " elements, expected " +
                                                 std::to_string(expected.size()));
  }
  constexpr double eps = std::numeric_limits<float>::epsilon() / 2;  // unit roundoff 2^-24
  // Outputs whose every product is zero are exactly zero in any strategy but FFT, whose
  // rounding spreads over the plane; the normwise bound covers those.
  AccuracyReport report;
  size_t worst = 0;
  for (size_t i = 0; i < result.size(); ++i) {
    // Where the reference is NaN or Inf (a NaN or Inf input), IEEE arithmetic gives the same
    // class in every correct strategy: NaN for NaN, the same infinity for an infinity. The
    // difference is NaN there and would otherwise slip past every comparison below.
    if (!std::isfinite(expected[i])) {
      const bool same = std::isnan(expected[i]) ? std::isnan(result[i])
                                                : result[i] == expected[i];
      ++(same ? report.nonfinite_matched : report.nonfinite_mismatch);
      continue;
    }
    const double e = std::fabs(double(result[i]) - double(expected[i]));
    if (!std::isfinite(result[i])) {
      ++report.nonfinite;
      continue;
    }
    if (e > report.max_abs_err) {
      report.max_abs_err = e;
      worst = i;
    }
    if (a_sum[i] > 0) report.max_rel_err = std::max(report.max_rel_err, e / a_sum[i]);
    if (bound.kind == ErrorBound::Kind::elementwise) {
      const double b = bound.factor * eps * a_sum[i];
      const double ratio = b > 0 ? e / b : (e > 0 ? std::numeric_limits<double>::infinity() : 0);
      report.worst_ratio = std::max(report.worst_ratio, ratio);
    }
  }
  if (bound.kind == ErrorBound::Kind::normwise) {
    const auto bounds = normwise_plane_bounds(p, pass, inputs);
    const int64_t planes = static_cast<int64_t>(bounds.size());
    const int64_t size = planes ? static_cast<int64_t>(result.size()) / planes : 0;
    for (int64_t pl = 0; pl < planes; ++pl) {
      double e2 = 0;
      for (int64_t i = 0; i < size; ++i) {
        const double d = double(result[pl * size + i]) - double(expected[pl * size + i]);
        if (std::isfinite(d)) e2 += d * d;
      }
      const double b = bound.normwise_scale() * eps * bounds[pl];
      const double e = std::sqrt(e2);
      const double ratio = b > 0 ? e / b : (e > 0 ? std::numeric_limits<double>::infinity() : 0);
      report.worst_ratio = std::max(report.worst_ratio, ratio);
    }
  }
  report.checked = static_cast<int64_t>(result.size());
  report.within_bound =
      report.nonfinite == 0 && report.nonfinite_mismatch == 0 && report.worst_ratio <= 1.0;
  std::ostringstream detail;
  detail << "max abs err " << report.max_abs_err << " at element " << worst << " (got "
         << (result.empty() ? 0.f : result[worst]) << ", reference "
         << (expected.empty() ? 0.f : expected[worst]) << "), max rel err " << report.max_rel_err
         << ", worst error/bound " << report.worst_ratio << " under " << bound.describe();
  if (report.nonfinite) detail << ", " << report.nonfinite << " non-finite outputs";
  if (report.nonfinite_mismatch) {
    detail << ", " << report.nonfinite_mismatch
           << " outputs not NaN (or not the same infinity) where the reference is";
  }
  if (report.nonfinite_matched) {
    detail << ", " << report.nonfinite_matched << " NaN/Inf outputs as in the reference";
  }
  report.detail = detail.str();
  return report;
}

}  // namespace convlab
