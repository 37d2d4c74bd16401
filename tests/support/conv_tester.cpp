#include "conv_tester.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>

#include "convlab/descriptor.hpp"
#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"

#if !defined(CONVLAB_SOURCE_DIR) || !defined(CONVLAB_TEST_DATA)
#error "CONVLAB_SOURCE_DIR and CONVLAB_TEST_DATA must be defined by the build"
#endif

namespace convlab::testing {

uint64_t run_seed() {
  static const uint64_t seed = [] {
    if (const auto env = environment_default("CONVLAB_TEST_SEED")) {
      return static_cast<uint64_t>(std::strtoull(env->c_str(), nullptr, 10));
    }
    return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count() &
                                 0xFFFFFFFF);
  }();
  return seed;
}

const std::vector<Pass>& all_passes() {
  static const std::vector<Pass> passes = {Pass::forward, Pass::backward_data,
                                           Pass::backward_filter};
  return passes;
}

std::string not_built_reason(std::string_view name) {
  for (const MissingAlgorithm& m : registry().missing()) {
    if (glob_match(m.name, name)) return m.reason;
  }
  return "";
}

HostTensors with_a_lost_term(const ConvProblem& p, Pass pass, HostTensors inputs) {
  if (pass == Pass::backward_filter) {
    const int64_t plane = p.out_h() * p.out_w();
    for (std::size_t e = 0; e < inputs.y.size(); ++e) {
      if (static_cast<int64_t>(e) % plane >= plane / 2) inputs.y[e] = 0;
    }
  } else {
    // The largest tap of each filter: a fixed tap (the centre) may hold a random value near
    // zero, and on a one-channel problem losing it then errs by less than the bound allows.
    const std::size_t taps = static_cast<std::size_t>(p.r * p.s);
    for (std::size_t first = 0; first + taps <= inputs.w.size(); first += taps) {
      std::size_t largest = first;
      for (std::size_t e = first; e < first + taps; ++e) {
        if (std::fabs(inputs.w[e]) > std::fabs(inputs.w[largest])) largest = e;
      }
      inputs.w[largest] = 0;
    }
  }
  return inputs;
}

ConvProblem problem(std::string_view descriptor) { return parse_descriptor(descriptor).problem; }

std::vector<ConvProblem> problems_from(const std::string& shape_file) {
  std::vector<ConvProblem> problems;
  for (const Layer& layer : read_shape_file(shape_file)) problems.push_back(layer.problem);
  return problems;
}

static ConvProblem with_end(ConvProblem p, int64_t end_h, int64_t end_w) {
  p.pad_h_end = end_h, p.pad_w_end = end_w;
  return p;
}

std::vector<ConvProblem> edge_cases() {
  static const std::vector<ConvProblem> cases = [] {
    std::vector<ConvProblem> list = problems_from(std::string(CONVLAB_TEST_DATA) + "/edge_cases");
    // End paddings no descriptor spells (a descriptor's oh/ow deduce the canonical one): end
    // padding only; 1x1 with an end padding (no shortcut); start > end, strided; end padding
    // larger than the kernel.
    list.push_back(with_end(problem("mb1ic3ih6iw5oc2kh3kw3"), 2, 1));
    list.push_back(with_end(problem("mb2ic3ih5iw5oc4kh1kw1"), 1, 0));
    list.push_back(with_end(problem("mb1ic2ih8iw8oc3kh3kw3sh2sw2ph2pw2"), 0, 0));
    list.push_back(with_end(problem("mb1ic2ih4iw4oc2kh3kw3"), 4, 3));
    return list;
  }();
  return cases;
}

std::vector<ConvProblem> random_problems(uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::vector<ConvProblem> problems;
  while (static_cast<int>(problems.size()) < count) {
    ConvProblem p;
    p.groups = pick(1, 4);
    p.n = pick(1, 3);
    p.c = p.groups * pick(1, 4);
    p.k = p.groups * pick(1, 4);
    p.h = pick(1, 40);
    p.w = pick(1, 40);
    p.r = pick(1, 11);
    p.s = pick(1, 11);
    p.stride_h = pick(1, 3);
    p.stride_w = pick(1, 3);
    p.dilation_h = pick(1, 3);
    p.dilation_w = pick(1, 3);
    p.pad_h = pick(0, p.r);
    p.pad_w = pick(0, p.s);
    try {
      p.validate();
    } catch (const Error&) {
      continue;  // draw again: the corpus holds valid problems only
    }
    problems.push_back(p);
  }
  return problems;
}

ConvProblem scaled_down(const ConvProblem& layer) {
  ConvProblem p = layer;
  p.n = std::min<int64_t>(p.n, 2);
  // At most 4 channels per group (and at most 4 groups' worth when depthwise-like).
  const int64_t g = p.groups > 4 ? 4 : p.groups;
  p.groups = g;
  p.c = g * std::min<int64_t>(layer.c / layer.groups, 4);
  p.k = g * std::min<int64_t>(layer.k / layer.groups, 4);
  // Spatial size: at most 24 (keeping the kernel inside the padded input).
  auto shrink = [](int64_t size, int64_t dilated, int64_t pads) {
    const int64_t needed = std::max<int64_t>(1, dilated - pads);
    return std::max(needed, std::min<int64_t>(size, 24));
  };
  p.h = shrink(layer.h, layer.dilated_r(), layer.pad_h + layer.end_pad_h());
  p.w = shrink(layer.w, layer.dilated_s(), layer.pad_w + layer.end_pad_w());
  p.validate();
  return p;
}

std::vector<ConvProblem> scaled_suite_layers() {
  namespace fs = std::filesystem;
  std::vector<ConvProblem> problems;
  const fs::path dir = fs::path(CONVLAB_SOURCE_DIR) / "bench" / "suites";
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    for (const Layer& layer : read_shape_file(file.string())) {
      const ConvProblem p = scaled_down(layer.problem);
      if (std::find(problems.begin(), problems.end(), p) == problems.end()) problems.push_back(p);
    }
  }
  return problems;
}

CaseOutcome check_case(const Algorithm& algorithm, const ConvProblem& problem, Pass pass,
                       uint64_t seed, Fill fill, const KnobValues& knobs) {
  CaseOutcome outcome;
  const std::string where = algorithm.name() + " " + to_string(pass) + " " + problem.descriptor();
  try {
    const Support support = algorithm.supports(problem, pass);
    if (!support) {
      outcome.disposition = support.reason.empty() ? Disposition::failed : Disposition::unsupported;
      outcome.message =
          support.reason.empty() ? where + ": unsupported with an empty reason" : support.reason;
      return outcome;
    }
    auto plan = algorithm.plan(problem, pass, knobs);
    const HostTensors host = make_inputs(problem, pass, seed, fill);
    CaseBuffers buffers(algorithm.context(), problem, host, plan->workspace_bytes());
    plan->run(buffers.tensors(), buffers.workspace());
    const std::vector<float> result = buffers.download_output(pass);
    ErrorBound bound = plan->error_bound();
    if (fill == Fill::integers) bound = ErrorBound{ErrorBound::Kind::elementwise, 0.0, 0.0};
    outcome.report = compare_with_reference(problem, pass, host, result, bound);
    if (!outcome.report.within_bound) {
      outcome.disposition = Disposition::failed;
      outcome.message = where + ": " + outcome.report.detail;
    }
  } catch (const std::exception& e) {
    outcome.disposition = Disposition::failed;
    outcome.message = where + ": threw: " + e.what();
  }
  return outcome;
}

CorpusSummary check_corpus(const Algorithm& algorithm, const std::vector<ConvProblem>& problems,
                           const std::vector<Pass>& passes, uint64_t seed, Fill fill,
                           const KnobValues& knobs) {
  CorpusSummary summary;
  uint64_t case_seed = seed;
  for (const ConvProblem& problem : problems) {
    for (Pass pass : passes) {
      const CaseOutcome outcome = check_case(algorithm, problem, pass, case_seed++, fill, knobs);
      switch (outcome.disposition) {
        case Disposition::passed:
          ++summary.passed;
          break;
        case Disposition::unsupported:
          ++summary.unsupported;
          summary.unsupported_reasons.push_back(problem.descriptor() + " " + to_string(pass) +
                                                ": " + outcome.message);
          break;
        case Disposition::failed:
          ++summary.failed;
          summary.failures.push_back(outcome.message);
          break;
      }
    }
  }
  return summary;
}

bool report_corpus(const std::string& algorithm, const std::string& label,
                   const CorpusSummary& summary, uint64_t seed) {
  std::cout << algorithm << " " << label << ": " << summary.passed << " passed, "
            << summary.unsupported << " unsupported, " << summary.failed << " failed (seed " << seed
            << "; rerun with CONVLAB_TEST_SEED=" << seed << ")\n";
  for (size_t i = 0; i < summary.unsupported_reasons.size() && i < 3; ++i) {
    std::cout << "  unsupported: " << summary.unsupported_reasons[i] << "\n";
  }
  for (size_t i = 0; i < summary.failures.size() && i < 10; ++i) {
    std::cout << "  FAILED: " << summary.failures[i] << "\n";
  }
  return summary.failed == 0;
}

}  // namespace convlab::testing
