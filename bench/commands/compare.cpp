#include "commands/compare.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "convlab/enum_names.hpp"

namespace convbench {

constexpr auto kVerdictNames = convlab::enum_names<Verdict::not_compared>({
    {Verdict::faster, "faster"},
    {Verdict::slower, "slower"},
    {Verdict::within_noise, "within_noise"},
    {Verdict::too_few_reps, "too_few_reps"},
    {Verdict::not_compared, "not_compared"},
});

const char* to_string(Verdict verdict) noexcept { return convlab::name_of(kVerdictNames, verdict); }

double separation_p_value(int64_t m, int64_t n) {
  if (m < 1 || n < 1) return 1;
  // C(m + n, m) as a running product; each step stays an exact integer up to 2^53.
  double ways = 1;
  for (int64_t i = 1; i <= std::min(m, n); ++i) {
    ways = ways * static_cast<double>(std::max(m, n) + i) / static_cast<double>(i);
  }
  return std::min(1.0, 2.0 / ways);
}

namespace {

// Why a row cannot be compared, or "" when it can.
std::string unusable(const Row& r, const char* which) {
  if (r.status != Status::ok) return std::string(which) + " " + to_string(r.status);
  if (!r.time_ms || !(*r.time_ms > 0)) return std::string(which) + " has no time";
  return "";
}

// Why a row's noise is unknown, or "" when its repetitions' range is there.
std::string no_range(const Row& r, const char* which) {
  return r.time_ms_min && r.time_ms_max ? "" : std::string(which) + " has no min and max";
}

void judge(CaseComparison& c, double alpha) {
  if (!c.a || !c.b) {
    c.note = c.a ? "only in A" : "only in B";
    return;
  }
  c.note = unusable(*c.a, "A");
  if (c.note.empty()) c.note = unusable(*c.b, "B");
  if (!c.note.empty()) return;
  c.ratio = *c.b->time_ms / *c.a->time_ms;
  // Without a range there is no measured noise to weigh the difference against.
  c.note = no_range(*c.a, "A");
  if (c.note.empty()) c.note = no_range(*c.b, "B");
  if (!c.note.empty()) {
    c.verdict = Verdict::too_few_reps;
    return;
  }
  const double a_min = *c.a->time_ms_min, a_max = *c.a->time_ms_max;
  const double b_min = *c.b->time_ms_min, b_max = *c.b->time_ms_max;
  const bool slower = b_min > a_max, faster = b_max < a_min;
  if (!slower && !faster) {
    c.verdict = Verdict::within_noise;
    return;
  }
  c.p_value = separation_p_value(c.a->reps.value_or(1), c.b->reps.value_or(1));
  if (*c.p_value >= alpha) {
    c.verdict = Verdict::too_few_reps;
    return;
  }
  c.verdict = slower ? Verdict::slower : Verdict::faster;
}

void add_to(RatioSummary& s, const CaseComparison& c, double& log_sum) {
  ++s.verdicts[c.verdict];
  if (!c.ratio) return;
  ++s.compared;
  log_sum += std::log(*c.ratio);
}

}  // namespace

Comparison compare_sweeps(const SweepFile& a, const SweepFile& b, double alpha) {
  Comparison out;
  std::map<std::string, size_t> index;  // key -> position in out.cases
  auto add_file = [&](const SweepFile& file, bool is_a) {
    for (size_t i = 0; i < file.rows.size(); ++i) {
      Row row = row_from_file(file, i);
      if (row.algorithm == "select") continue;
      const std::string key = file.key(i);
      auto [it, fresh] = index.emplace(key, out.cases.size());
      if (fresh) out.cases.emplace_back();
      CaseComparison& c = out.cases[it->second];
      std::optional<Row>& slot = is_a ? c.a : c.b;
      if (slot) {
        out.duplicates.push_back(key + " (twice in " + file.path + ")");
        continue;
      }
      slot = std::move(row);
    }
  };
  add_file(a, true);
  add_file(b, false);

  double log_sum = 0;
  std::map<std::string, double> algorithm_log_sums;
  for (CaseComparison& c : out.cases) {
    judge(c, alpha);
    add_to(out.overall, c, log_sum);
    add_to(out.by_algorithm[c.row().algorithm], c, algorithm_log_sums[c.row().algorithm]);
  }
  auto finish = [](RatioSummary& s, double sum) {
    if (s.compared) s.geomean = std::exp(sum / static_cast<double>(s.compared));
  };
  finish(out.overall, log_sum);
  for (auto& [name, s] : out.by_algorithm) finish(s, algorithm_log_sums[name]);
  return out;
}

}  // namespace convbench
