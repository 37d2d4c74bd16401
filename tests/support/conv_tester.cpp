#include "conv_tester.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>

#include "convlab/descriptor.hpp"
#include "convlab/error.hpp"
#include "convlab/harness.hpp"

#ifndef CONVLAB_SOURCE_DIR
#error "CONVLAB_SOURCE_DIR must be defined by the build"
#endif

namespace convlab::testing {

uint64_t run_seed() {
  static const uint64_t seed = [] {
    if (const char* env = std::getenv("CONVLAB_TEST_SEED")) {
      return static_cast<uint64_t>(std::strtoull(env, nullptr, 10));
    }
    return static_cast<uint64_t>(
        std::chrono::steady_clock::now().time_since_epoch().count() & 0xFFFFFFFF);
  }();
  return seed;
}

const std::vector<Pass>& all_passes() {
  static const std::vector<Pass> passes = {Pass::forward, Pass::backward_data,
                                           Pass::backward_filter};
  return passes;
}

static ConvProblem make(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r,
                        int64_t s, int64_t ph = 0, int64_t pw = 0, int64_t sh = 1, int64_t sw = 1,
                        int64_t dh = 1, int64_t dw = 1, int64_t g = 1) {
  ConvProblem p;
  p.n = n, p.c = c, p.h = h, p.w = w, p.k = k, p.r = r, p.s = s;
  p.pad_h = ph, p.pad_w = pw, p.stride_h = sh, p.stride_w = sw;
  p.dilation_h = dh, p.dilation_w = dw, p.groups = g;
  return p;
}

static ConvProblem with_end(ConvProblem p, int64_t end_h, int64_t end_w) {
  p.pad_h_end = end_h, p.pad_w_end = end_w;
  return p;
}

std::vector<ConvProblem> edge_cases() {
  return {
      //   n  c   h   w   k  r  s  ph pw sh sw dh dw g
      make(1, 1, 1, 1, 1, 1, 1),                          // the smallest convolution
      make(2, 3, 5, 5, 4, 1, 1),                          // 1x1, the im2col shortcut
      make(2, 8, 7, 9, 6, 1, 1, 0, 0, 2, 2),              // 1x1 strided: no shortcut
      make(1, 4, 6, 6, 3, 1, 1, 1, 1),                    // 1x1 padded: no shortcut
      make(2, 3, 7, 7, 5, 7, 7),                          // kernel = input
      make(2, 2, 5, 5, 3, 7, 7, 1, 1),                    // kernel = padded input
      make(1, 3, 9, 9, 2, 2, 2, 0, 0, 3, 3),              // stride > kernel
      make(2, 2, 11, 11, 3, 1, 1, 0, 0, 4, 4),            // stride > kernel, 1x1
      make(2, 3, 5, 13, 4, 3, 5, 1, 2),                   // asymmetric H/W and kernel
      make(1, 2, 17, 4, 3, 5, 1, 2, 0, 2, 1),             // tall, asymmetric stride
      make(2, 3, 12, 12, 4, 3, 3, 2, 2, 1, 1, 2, 2),      // dilation 2, 'same'
      make(1, 2, 15, 10, 3, 3, 2, 0, 0, 1, 1, 3, 2),      // dilation 3x2
      make(2, 4, 13, 13, 4, 3, 3, 1, 1, 2, 2, 2, 2),      // dilation with stride
      make(2, 4, 8, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2),     // groups 2
      make(2, 8, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8),     // depthwise
      make(1, 6, 10, 7, 9, 3, 2, 1, 0, 2, 1, 1, 1, 3),    // groups 3, asymmetric
      make(3, 4, 9, 9, 8, 3, 3, 1, 1, 1, 1, 2, 2, 4),     // groups 4 with dilation
      make(1, 5, 7, 7, 3, 3, 3),                          // N = 1
      make(3, 1, 8, 8, 4, 3, 3, 1, 1),                    // C = 1
      make(2, 3, 8, 8, 1, 3, 3, 1, 1),                    // K = 1
      make(2, 3, 13, 11, 5, 5, 3, 2, 1),                  // odd sizes
      make(1, 2, 4, 4, 3, 3, 3, 3, 3),                    // padding = kernel
      make(1, 2, 3, 3, 2, 2, 2, 4, 4),                    // padding > kernel
      make(2, 2, 6, 6, 2, 3, 3, 5, 5, 2, 2),              // large padding, strided
      make(1, 3, 1, 16, 4, 1, 5, 0, 2),                   // one row (1-D along w)
      make(1, 3, 16, 1, 4, 5, 1, 2, 0),                   // one column (1-D along h)
      make(2, 3, 32, 32, 4, 11, 11, 5, 5, 4, 4),          // AlexNet conv1-like stem
      make(1, 3, 28, 28, 4, 7, 7, 3, 3, 2, 2),            // ResNet stem-like
      make(2, 16, 6, 6, 16, 3, 3, 1, 1),                  // more channels than pixels
      make(1, 2, 37, 29, 2, 9, 9, 4, 4),                  // large kernel, prime sizes
      make(2, 4, 10, 10, 4, 2, 2, 0, 0, 2, 2),            // even kernel, stride = kernel
      make(1, 3, 20, 20, 2, 4, 4, 1, 2, 3, 3, 2, 3),      // everything at once
      make(4, 2, 5, 5, 3, 3, 3, 0, 0, 2, 2),              // output 2x2
      make(1, 4, 9, 9, 4, 9, 9, 0, 0, 1, 1, 1, 1, 2),     // 1x1 output, groups
      make(1, 2, 1, 1, 2, 6, 6, 3, 3, 2, 2),              // padding > stride, 1x1 output:
                                                          // tap 0 reads only padding (fuzz/)
      // End (bottom/right) padding unlike the start padding, as benchdnn deduces it from a
      // given oh/ow with an odd total padding.
      // (1, 2) on both axes; (2, 3) with stride 2; the ResNet stem; dilated with groups:
      parse_descriptor("mb2ic4ih8oc4oh9kh3").problem,
      parse_descriptor("mb1ic2ih24oc3oh12kh7sh2").problem,
      parse_descriptor("mb1ic3ih28oc4oh14kh7sh2").problem,
      parse_descriptor("g2mb2ic4ih9iw7oc6oh10ow4kh3kw2sw2dh1").problem,
      // end padding only; 1x1 with an end padding (no shortcut); start > end, strided; end
      // padding larger than the kernel:
      with_end(make(1, 3, 6, 5, 2, 3, 3), 2, 1),
      with_end(make(2, 3, 5, 5, 4, 1, 1), 1, 0),
      with_end(make(1, 2, 8, 8, 3, 3, 3, 2, 2, 2, 2), 0, 0),
      with_end(make(1, 2, 4, 4, 2, 3, 3), 4, 3),
  };
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
                       uint64_t seed, Fill fill) {
  CaseOutcome outcome;
  const std::string where = algorithm.name() + " " + to_string(pass) + " " + problem.descriptor();
  try {
    const Support support = algorithm.supports(problem, pass);
    if (!support) {
      outcome.disposition = support.reason.empty() ? Disposition::failed : Disposition::unsupported;
      outcome.message = support.reason.empty() ? where + ": unsupported with an empty reason"
                                               : support.reason;
      return outcome;
    }
    auto plan = algorithm.plan(problem, pass);
    const HostTensors host = make_inputs(problem, pass, seed, fill);
    CaseBuffers buffers(algorithm.context(), problem, host, plan->workspace_bytes());
    plan->run(buffers.tensors(), buffers.workspace());
    const std::vector<float> result = buffers.download_output(pass);
    ErrorBound bound = algorithm.error_bound(problem, pass);
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
                           const std::vector<Pass>& passes, uint64_t seed, Fill fill) {
  CorpusSummary summary;
  uint64_t case_seed = seed;
  for (const ConvProblem& problem : problems) {
    for (Pass pass : passes) {
      const CaseOutcome outcome = check_case(algorithm, problem, pass, case_seed++, fill);
      switch (outcome.disposition) {
        case Disposition::passed: ++summary.passed; break;
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
            << summary.unsupported << " unsupported, " << summary.failed << " failed (seed "
            << seed << "; rerun with CONVLAB_TEST_SEED=" << seed << ")\n";
  for (size_t i = 0; i < summary.unsupported_reasons.size() && i < 3; ++i) {
    std::cout << "  unsupported: " << summary.unsupported_reasons[i] << "\n";
  }
  for (size_t i = 0; i < summary.failures.size() && i < 10; ++i) {
    std::cout << "  FAILED: " << summary.failures[i] << "\n";
  }
  return summary.failed == 0;
}

}  // namespace convlab::testing
