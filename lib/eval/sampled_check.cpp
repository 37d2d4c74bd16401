// The sampled check: a few output elements, chosen at random from the case's seed, each
// recomputed by the reference exactly in double and held to the full check's bound. It
// costs samples x (the products of one output) instead of the whole pass twice over, so a
// network at batch 32 is checked in seconds where the full check takes hours. A wrong
// element is caught when it is sampled: a bug that touches a fraction f of the outputs
// escapes N samples with probability (1 - f)^N (1000 samples: f = 1% escapes 4e-5 of the
// time); an isolated single wrong element is caught only by the full check.
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <random>
#include <sstream>
#include <thread>
#include <unordered_set>

#include "convlab/accuracy.hpp"
#include "convlab/error.hpp"
#include "convlab/threads.hpp"
#include "cpu_reference/reference.hpp"
#include "plane_bounds.hpp"

namespace convlab {

bool CheckScope::full(const ConvProblem& problem, Pass pass) const {
  if (kind != Kind::automatic) return kind == Kind::full;
  return problem.flops(pass) / 2 <= kFullCheckMacs;
}

std::string CheckScope::describe() const {
  switch (kind) {
    case Kind::automatic:
      return "auto";
    case Kind::full:
      return "full";
    case Kind::sampled:
      break;
  }
  return "sampled:" + std::to_string(samples);
}

CheckScope parse_check_scope(std::string_view text) {
  CheckScope scope;
  const std::string accepted = "expected auto, full, sampled or sampled:N with N >= 1";
  if (text.empty() || text == "auto") return scope;
  if (text == "full") {
    scope.kind = CheckScope::Kind::full;
    return scope;
  }
  const std::string_view prefix = "sampled";
  if (text.substr(0, prefix.size()) != prefix) {
    throw Error(ErrorCode::invalid_argument, "--check=" + std::string(text) + ": " + accepted);
  }
  scope.kind = CheckScope::Kind::sampled;
  std::string_view rest = text.substr(prefix.size());
  if (rest.empty()) return scope;
  if (rest.front() != ':' || rest.size() == 1 || rest.size() > 13 ||
      !std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    throw Error(ErrorCode::invalid_argument, "--check=" + std::string(text) + ": " + accepted);
  }
  scope.samples = std::stoll(std::string(rest.substr(1)));
  if (scope.samples < 1) {
    throw Error(ErrorCode::invalid_argument, "--check=" + std::string(text) + ": " + accepted);
  }
  return scope;
}

std::vector<int64_t> sampled_indices(int64_t size, int64_t count, uint64_t seed) {
  std::vector<int64_t> out;
  if (size <= 0 || count <= 0) return out;
  if (count >= size) {
    out.resize(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) out[static_cast<size_t>(i)] = i;
    return out;
  }
  // Floyd's algorithm: `count` distinct draws in `count` steps, whatever size is.
  std::mt19937_64 rng(seed ^ 0x5A3D1E5C0FFEE123ull);  // not the stream make_inputs fills from
  std::unordered_set<int64_t> chosen;
  for (int64_t j = size - count; j < size; ++j) {
    const int64_t t = std::uniform_int_distribution<int64_t>(0, j)(rng);
    chosen.insert(chosen.count(t) ? j : t);
  }
  out.assign(chosen.begin(), chosen.end());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

reference::Point reference_at(const ConvProblem& p, Pass pass, const HostTensors& t,
                              int64_t index) {
  switch (pass) {
    case Pass::forward:
      return reference::forward_at(p, t.x.data(), t.w.data(), index);
    case Pass::backward_data:
      return reference::backward_data_at(p, t.y.data(), t.w.data(), index);
    case Pass::backward_filter:
      break;
  }
  return reference::backward_filter_at(p, t.x.data(), t.y.data(), index);
}

// The reference at each index, the indices split over the library's threads: a sampled
// element of a backward-filter pass sums n * out_h * out_w products (401 k for ResNet-50's
// first layer at batch 32), so a thousand of them are worth two cores.
std::vector<reference::Point> reference_points(const ConvProblem& p, Pass pass,
                                               const HostTensors& t,
                                               const std::vector<int64_t>& indices) {
  std::vector<reference::Point> points(indices.size());
  const size_t workers =
      std::min<size_t>(static_cast<size_t>(std::max(1, num_threads())), indices.size() / 16 + 1);
  std::vector<std::exception_ptr> failed(workers);
  auto work = [&](size_t w) {
    try {
      for (size_t k = w; k < indices.size(); k += workers) {
        points[k] = reference_at(p, pass, t, indices[k]);
      }
    } catch (...) {
      failed[w] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);
  }
  return points;
}

int64_t output_elements(const ConvProblem& p, Pass pass) {
  return pass == Pass::forward         ? p.y_elems()
         : pass == Pass::backward_data ? p.x_elems()
                                       : p.w_elems();
}

}  // namespace

AccuracyReport compare_sampled_with_reference(const ConvProblem& p, Pass pass,
                                              const HostTensors& inputs,
                                              const std::vector<float>& result,
                                              const ErrorBound& bound, int64_t samples,
                                              uint64_t seed) {
  p.validate();
  const int64_t size = output_elements(p, pass);
  if (static_cast<int64_t>(result.size()) != size) {
    throw Error(ErrorCode::invalid_argument, "result has " + std::to_string(result.size()) +
                                                 " elements, expected " + std::to_string(size));
  }
  constexpr double eps = std::numeric_limits<float>::epsilon() / 2;  // unit roundoff 2^-24
  constexpr double inf = std::numeric_limits<double>::infinity();
  const bool normwise = bound.kind == ErrorBound::Kind::normwise;
  const std::vector<double> planes =
      normwise ? normwise_plane_bounds(p, pass, inputs) : std::vector<double>{};
  const int64_t plane_size = normwise ? size / static_cast<int64_t>(planes.size()) : 1;
  std::vector<double> plane_e2(planes.size(), 0.0);

  const std::vector<int64_t> indices = sampled_indices(size, samples, seed);
  const std::vector<reference::Point> refs = reference_points(p, pass, inputs, indices);
  AccuracyReport report;
  report.checked = static_cast<int64_t>(indices.size());
  int64_t worst = indices.empty() ? 0 : indices.front();
  double worst_reference = 0;
  bool any_compared = false;
  for (size_t k = 0; k < indices.size(); ++k) {
    const int64_t i = indices[k];
    const reference::Point& ref = refs[k];
    const float got = result[static_cast<size_t>(i)];
    // The full check's rule (accuracy.cpp): where the reference is NaN or Inf the output must
    // be the same class, or IEEE propagation was lost.
    if (!std::isfinite(ref.value)) {
      const bool same = std::isnan(ref.value) ? std::isnan(got) : double(got) == ref.value;
      ++(same ? report.nonfinite_matched : report.nonfinite_mismatch);
      continue;
    }
    if (!std::isfinite(got)) {
      ++report.nonfinite;
      continue;
    }
    const double e = std::fabs(double(got) - ref.value);
    if (e > report.max_abs_err || !any_compared) {
      report.max_abs_err = e;
      worst = i;
      worst_reference = ref.value;
      any_compared = true;
    }
    if (ref.magnitude > 0) report.max_rel_err = std::max(report.max_rel_err, e / ref.magnitude);
    if (normwise) {
      plane_e2[static_cast<size_t>(i / plane_size)] += e * e;
    } else {
      const double b = bound.factor * eps * ref.magnitude;
      report.worst_ratio = std::max(report.worst_ratio, b > 0 ? e / b : (e > 0 ? inf : 0));
    }
  }
  for (size_t pl = 0; pl < planes.size(); ++pl) {
    const double b = bound.normwise_scale() * eps * planes[pl];
    const double e = std::sqrt(plane_e2[pl]);
    report.worst_ratio = std::max(report.worst_ratio, b > 0 ? e / b : (e > 0 ? inf : 0));
  }
  report.within_bound =
      report.nonfinite == 0 && report.nonfinite_mismatch == 0 && report.worst_ratio <= 1.0;
  std::ostringstream detail;
  detail << "sampled " << report.checked << " of " << size << " outputs (seed " << seed
         << "): max abs err " << report.max_abs_err << " at element " << worst << " (got "
         << (indices.empty() ? 0.f : result[static_cast<size_t>(worst)]) << ", reference "
         << worst_reference << "), max rel err " << report.max_rel_err << ", worst error/bound "
         << report.worst_ratio << " under " << bound.describe();
  if (report.nonfinite) detail << ", " << report.nonfinite << " non-finite outputs";
  if (report.nonfinite_mismatch) {
    detail << ", " << report.nonfinite_mismatch
           << " outputs not NaN (or not the same infinity) where the reference is";
  }
  report.detail = detail.str();
  return report;
}

AccuracyReport check_with_reference(const ConvProblem& p, Pass pass, const HostTensors& inputs,
                                    const std::vector<float>& result, const ErrorBound& bound,
                                    const CheckScope& scope, uint64_t seed) {
  if (scope.full(p, pass)) return compare_with_reference(p, pass, inputs, result, bound);
  return compare_sampled_with_reference(p, pass, inputs, result, bound, scope.samples, seed);
}

}  // namespace convlab
