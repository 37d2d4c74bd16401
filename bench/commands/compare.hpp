#pragma once
// `convbench compare A B`: two sweep files side by side, as an A/B of two commits, machines
// or settings. Cases are matched by their identity (suite, layer, descriptor, pass, algorithm,
// device); each matched pair gets B's median over A's, and the pairs a geometric mean.
//
// A verdict is given only where the difference exceeds the measured noise of both runs: every
// repetition of one run is slower than every repetition of the other (B's fastest above A's
// slowest, or the reverse). Rows keep only the median, min and max of their repetitions, and
// for samples of m and n repetitions that complete separation is the one outcome that is
// decidable from min and max alone. It is also the extreme of the Mann-Whitney U test
// (U = 0): with no true difference its chance is 2 / C(m + n, m), two-sided. The verdict
// requires that below alpha, so too few repetitions give "too_few_reps" instead of a guess
// (alpha 0.05 needs 4 and 4; 5 and 5 give p = 0.0079). Overlapping ranges are "within_noise":
// a smaller real difference may hide there, and more repetitions are the way to find it.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "output/results_file.hpp"
#include "output/row.hpp"

namespace convbench {

enum class Verdict {
  faster,        ///< every B repetition faster than every A repetition, p < alpha
  slower,        ///< every B repetition slower than every A repetition, p < alpha
  within_noise,  ///< the two runs' ranges overlap
  too_few_reps,  ///< separated, but too few repetitions for p < alpha; or a row without its range
  not_compared,  ///< in one file only, or not ok, or without a time
};
const char* to_string(Verdict verdict) noexcept;

/// One case of either file.
struct CaseComparison {
  std::optional<Row> a, b;
  std::optional<double> ratio;    ///< B median / A median
  std::optional<double> p_value;  ///< of complete separation, when the ranges are separated
  Verdict verdict = Verdict::not_compared;
  std::string note;  ///< why not compared
  const Row& row() const { return a ? *a : *b; }
};

/// The geometric mean of the ratios of a set of compared cases, and their verdicts.
struct RatioSummary {
  std::optional<double> geomean;
  int64_t compared = 0;
  std::map<Verdict, int64_t> verdicts;
};

struct Comparison {
  std::vector<CaseComparison> cases;  ///< A's order, then the cases only in B
  RatioSummary overall;
  std::map<std::string, RatioSummary> by_algorithm;
  std::vector<std::string> duplicates;  ///< keys met twice in one file (the first is used)
};

/// Two-sided exact Mann-Whitney p-value of m samples all below (or all above) n others.
double separation_p_value(int64_t m, int64_t n);

/// Compares the rows of two sweep files; rows of --select are left out.
Comparison compare_sweeps(const SweepFile& a, const SweepFile& b, double alpha);

}  // namespace convbench
