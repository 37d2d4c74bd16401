// cpu.winograd against the reference over the shared corpora and a Winograd corpus (odd
// sizes, padding 0/1/2/3, N = 1, C = 1, groups, asymmetric end padding), all three passes and
// both variants; its error bound observed to hold on random data and to catch an injected
// error; what it refuses, with reasons; its workspace the documented formula; the knobs and
// the choice in the plan info; bitwise determinism across thread counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <vector>

#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"
#include "cpu/isa.hpp"
#include "lib/cpu/winograd/cpu_winograd.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

using testing::all_passes;
using testing::check_corpus;
using testing::problem;
using testing::report_corpus;
using testing::run_seed;

const Algorithm& winograd() { return registry().get("cpu.winograd"); }

bool is_winograd_shape(const ConvProblem& p) {
  return p.r == 3 && p.s == 3 && p.stride_h == 1 && p.stride_w == 1 && p.dilation_h == 1 &&
         p.dilation_w == 1;
}

// Shapes where tiles stick out of the image, patches start inside it (backward-data of pad 3),
// and groups split the channel GEMMs.
std::vector<ConvProblem> winograd_cases() {
  std::vector<ConvProblem> list;
  for (const char* d : {"mb1ic1ih3oc1kh3ph0", "mb1ic1ih5oc1kh3ph1", "mb2ic3ih7oc5kh3ph1",
                        "mb1ic2ih9iw11oc3kh3kw3ph2", "mb3ic4ih13iw6oc2kh3kw3ph0pw1",
                        "mb1ic1ih4oc1kh3ph3", "g2mb2ic4ih10oc6kh3ph1", "g4mb1ic4ih9oc4kh3ph1",
                        "mb2ic16ih17oc8kh3ph1", "mb1ic5ih2iw3oc3kh3kw3ph1", "mb2ic6ih31oc7kh3ph1",
                        "mb1ic3ih8oc2kh3oh7ph1" /* end padding 0 deduced from oh */}) {
    list.push_back(problem(d));
  }
  return list;
}

class CpuWinograd : public ::testing::Test {
 protected:
  void SetUp() override { set_num_threads(2); }
};

TEST_F(CpuWinograd, Describes) {
  const AlgorithmInfo& info = winograd().info();
  EXPECT_EQ(info.family, Family::winograd);
  EXPECT_EQ(info.device, Device::cpu);
  EXPECT_TRUE(info.deterministic);
  ASSERT_EQ(info.knobs.size(), 5u);
  EXPECT_EQ(info.knobs[0].name, "variant");
  EXPECT_EQ(info.knobs[0].default_value, "f4");
  EXPECT_EQ(info.knobs[2].name, "filter_rows");
  EXPECT_EQ(info.knobs[2].default_value, "auto");
  EXPECT_EQ(info.knobs[3].name, "gradient_stores");
  EXPECT_EQ(info.knobs[3].default_value, "auto");
  EXPECT_EQ(info.knobs[4].name, "isa");
  EXPECT_EQ(info.knobs[4].default_value, "auto");
}

// Each instruction set's tile transforms and GEMM against the reference, on the Winograd corpus
// and on rows wider than one kernel run (75 and 150 tiles across, runs of at most
// kMaxRunTiles), with chunks that cut tile rows and U whole or in blocks of 3 rows (the last
// shorter); the plan names the instruction set it runs.
TEST_F(CpuWinograd, EveryIsaAgainstTheReference) {
  const uint64_t seed = run_seed() + 2;
  std::vector<ConvProblem> cases = winograd_cases();
  cases.push_back(problem("mb2ic3ih9iw300oc2kh3kw3ph1"));
  cases.push_back(problem("mb1ic2ih6iw259oc3kh3kw3ph2pw0"));
  for (const auto& entry : kCpuIsaNames) {
    const std::string isa = entry.name;
    if (!cpu_isa_supported(entry.value)) {
      std::cout << "cpu.winograd with " << isa << ": not supported here, skipped\n";
      continue;
    }
    for (const char* variant : {"f2", "f4"}) {
      // Filter blocks of 3 rows over chunks of 5 tiles, and of 2 rows over one chunk of
      // every tile (the only case where backward-filter takes blocks).
      for (const char* tiles : {"5", "auto", "100000"}) {
        const std::string chunk = tiles;
        const char* filter_rows = chunk == "5" ? "3" : chunk == "auto" ? "auto" : "2";
        for (const ConvProblem& p : cases) {
          for (Pass pass : all_passes()) {
            auto plan = winograd().plan(p, pass,
                                        {{"variant", variant},
                                         {"tiles", tiles},
                                         {"filter_rows", filter_rows},
                                         {"isa", isa}});
            EXPECT_NE(plan->info().kernel.find(", " + isa), std::string::npos)
                << plan->info().kernel;
            std::vector<float> ws(plan->workspace_bytes() / 4 + 1,
                                  std::numeric_limits<float>::quiet_NaN());
            HostTensors t = make_inputs(p, pass, seed);
            plan->run({t.x.data(), t.w.data(), t.y.data()}, {ws.data(), plan->workspace_bytes()});
            const AccuracyReport r = compare_with_reference(
                p, pass, t, t.output(pass),
                winograd::cpu_winograd_error_bound(p, pass, variant[1] - '0'));
            EXPECT_TRUE(r.within_bound)
                << p.descriptor() << " " << to_string(pass) << " " << variant << " " << isa
                << " tiles " << tiles << " filter_rows " << filter_rows << " seed " << seed << ": "
                << r.detail;
          }
        }
      }
    }
  }
  try {
    winograd().plan(problem("mb1ic1ih4oc1kh3"), Pass::forward, {{"isa", "sse9"}});
    ADD_FAILURE() << "an unknown isa was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sse9"), std::string::npos) << e.what();
  }
}

TEST_F(CpuWinograd, WinogradCorpusBothVariants) {
  const uint64_t seed = run_seed();
  for (const char* variant : {"f2", "f4"}) {
    for (const ConvProblem& p : winograd_cases()) {
      for (Pass pass : all_passes()) {
        auto plan = winograd().plan(p, pass, {{"variant", variant}, {"tiles", "5"}});
        std::vector<float> ws(plan->workspace_bytes() / 4 + 1,
                              std::numeric_limits<float>::quiet_NaN());
        HostTensors t = make_inputs(p, pass, seed);
        plan->run({t.x.data(), t.w.data(), t.y.data()}, {ws.data(), plan->workspace_bytes()});
        const AccuracyReport r =
            compare_with_reference(p, pass, t, t.output(pass),
                                   winograd::cpu_winograd_error_bound(p, pass, variant[1] - '0'));
        EXPECT_TRUE(r.within_bound) << p.descriptor() << " " << to_string(pass) << " " << variant
                                    << " seed " << seed << ": " << r.detail;
      }
    }
  }
}

TEST_F(CpuWinograd, SharedCorpora) {
  const uint64_t seed = run_seed() + 1;
  std::vector<ConvProblem> problems = testing::edge_cases();
  for (const ConvProblem& p : testing::scaled_suite_layers()) problems.push_back(p);
  for (const ConvProblem& p : testing::random_problems(seed, 300)) problems.push_back(p);
  for (ConvProblem p : testing::random_problems(seed + 7, 200)) {
    p.r = p.s = 3, p.stride_h = p.stride_w = 1, p.dilation_h = p.dilation_w = 1;
    p.pad_h = std::min<int64_t>(p.pad_h, 2), p.pad_w = std::min<int64_t>(p.pad_w, 2);
    p.pad_h_end.reset(), p.pad_w_end.reset();
    if (p.h + 2 * p.pad_h >= 3 && p.w + 2 * p.pad_w >= 3) problems.push_back(p);
  }
  int expected = 0;
  for (const ConvProblem& p : problems) expected += is_winograd_shape(p) ? 3 : 0;
  const auto summary = check_corpus(winograd(), problems, all_passes(), seed);
  EXPECT_TRUE(report_corpus("cpu.winograd", "edge, suite, random and 3x3 problems", summary, seed));
  EXPECT_EQ(summary.passed, expected);  // every stride-1 dense 3x3 case runs and passes
  EXPECT_GE(expected, 300);
}

TEST_F(CpuWinograd, RefusesWithReasons) {
  for (const char* d : {"mb1ic2ih9oc2kh5ph2", "mb1ic2ih9oc2kh3sh2ph1", "mb1ic2ih9oc2kh3ph2dh1",
                        "mb1ic2ih9iw9oc2kh3kw1"}) {
    for (Pass pass : all_passes()) {
      const Support s = winograd().supports(problem(d), pass);
      EXPECT_FALSE(s.ok) << d;
      EXPECT_NE(s.reason.find(problem(d).descriptor()), std::string::npos) << s.reason;
      EXPECT_THROW(winograd().plan(problem(d), pass), Error);
    }
  }
  EXPECT_THROW(winograd().plan(problem("mb1ic2ih9oc2kh3ph1"), Pass::forward, {{"variant", "f6"}}),
               Error);
  EXPECT_THROW(winograd().plan(problem("mb1ic2ih9oc2kh3ph1"), Pass::forward, {{"tiles", "0"}}),
               Error);
}

// The bound holds with room on random data, and a wrong result of the size a real bug makes
// (one filter tap lost) exceeds it.
TEST_F(CpuWinograd, ErrorBoundHoldsAndCatchesAnInjectedError) {
  const uint64_t seed = run_seed() + 2;
  for (const char* d : {"mb2ic32ih20oc16kh3ph1", "mb1ic1ih12oc1kh3ph1", "mb4ic8ih14oc8kh3ph1"}) {
    const ConvProblem p = problem(d);
    for (Pass pass : all_passes()) {
      for (int m : {2, 4}) {
        auto plan = winograd().plan(p, pass, {{"variant", m == 2 ? "f2" : "f4"}});
        std::vector<float> ws(plan->workspace_bytes() / 4 + 1);
        HostTensors t = make_inputs(p, pass, seed);
        plan->run({t.x.data(), t.w.data(), t.y.data()}, {ws.data(), plan->workspace_bytes()});
        const ErrorBound bound = winograd::cpu_winograd_error_bound(p, pass, m);
        const AccuracyReport ok = compare_with_reference(p, pass, t, t.output(pass), bound);
        std::cout << d << " " << to_string(pass) << " F(" << m << ",3): error/bound "
                  << ok.worst_ratio << "\n";
        EXPECT_TRUE(ok.within_bound) << ok.detail << " seed " << seed;
        // A wrong result of a real bug's size.
        HostTensors inputs = testing::with_a_lost_term(p, pass, make_inputs(p, pass, seed));
        auto again = winograd().plan(p, pass, {{"variant", m == 2 ? "f2" : "f4"}});
        again->run({inputs.x.data(), inputs.w.data(), inputs.y.data()},
                   {ws.data(), again->workspace_bytes()});
        HostTensors wrong = t;
        wrong.output(pass) = inputs.output(pass);
        const AccuracyReport bad = compare_with_reference(p, pass, t, wrong.output(pass), bound);
        EXPECT_FALSE(bad.within_bound) << d << " " << to_string(pass) << " F(" << m
                                       << "): a dropped tap passed, " << bad.detail;
      }
    }
  }
}

std::string detail(const Plan& plan, const std::string& key) {
  for (const auto& [name, value] : plan.info().details) {
    if (name == key) return value;
  }
  return "(no " + key + ")";
}

TEST_F(CpuWinograd, WorkspaceIsTheFormulaAndBoundedByTheChunk) {
  const ConvProblem p = problem("mb16ic64ih56oc64kh3ph1");
  const int previous = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (Pass pass : all_passes()) {
      // 16 * 14 * 14 tiles in chunks of 100: far more chunks than threads.
      auto plan = winograd().plan(p, pass, {{"tiles", "100"}});
      const int64_t points = 36, kc = 64 * 64,
                    partials = pass == Pass::backward_filter ? threads - 1 : 0;
      // Each point's matrix is padded by one cache line (16 floats); backward-filter's
      // staging buffer (16 channels x 64 tiles per point) comes first, one per worker.
      const std::size_t staging =
          pass == Pass::backward_filter ? 4 * threads * points * (16 * 64 + 16) : 0;
      const std::size_t expected = staging + 4 * (points * (kc + 16) * (1 + partials) +
                                                  threads * 2 * points * (64 * 100 + 16));
      EXPECT_EQ(plan->workspace_bytes(), expected) << to_string(pass) << " threads " << threads;
      EXPECT_EQ(detail(*plan, "chunk_workers"), std::to_string(threads));
      // U in blocks of 10 rows: one block per worker instead of the whole U (backward-filter
      // sums dU over the chunks and keeps it whole when there are several).
      auto blocked = winograd().plan(p, pass, {{"tiles", "100"}, {"filter_rows", "10"}});
      if (pass == Pass::backward_filter) {
        EXPECT_EQ(blocked->workspace_bytes(), expected);
        EXPECT_EQ(detail(*blocked, "filter_rows"), "all, once per group");
      } else {
        EXPECT_EQ(blocked->workspace_bytes(),
                  4 * threads * points * ((10 * 64 + 16) + 2 * (64 * 100 + 16)))
            << to_string(pass) << " threads " << threads;
        EXPECT_EQ(detail(*blocked, "filter_rows"), "10 per block, per chunk");
      }
    }
  }
  set_num_threads(previous);
  // Blocks when the tiles are one chunk (4 tiles of 8x8): a block of U (dU) per worker, one
  // V and M (P) they share, and backward-filter's staging buffer per worker; the workers split
  // the 7 blocks of 10 rows, and the auto chunk stays whole instead of one per thread.
  const ConvProblem one_chunk = problem("mb1ic64ih8oc64kh3ph1");
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (Pass pass : all_passes()) {
      for (const char* tiles : {"100000", "auto"}) {
        auto blocked =
            winograd().plan(one_chunk, pass, {{"tiles", tiles}, {"filter_rows", "10"}});
        EXPECT_EQ(detail(*blocked, "filter_rows"), "10 per block, per chunk") << tiles;
        EXPECT_EQ(detail(*blocked, "tiles_per_chunk"), "4") << tiles;
        EXPECT_EQ(detail(*blocked, "chunk_workers"), std::to_string(threads)) << tiles;
        const int64_t staging = pass == Pass::backward_filter ? threads * (16 * 64 + 16) : 0;
        EXPECT_EQ(blocked->workspace_bytes(),
                  4 * 36 * (staging + threads * (10 * 64 + 16) + 2 * (64 * 4 + 16)))
            << to_string(pass) << " threads " << threads;
      }
    }
  }
  set_num_threads(previous);
  // No more workers than chunks: 1 * 3 * 3 tiles in one chunk of 9; auto cuts them into one
  // chunk per thread (ceil(9 / 3) tiles each) instead.
  set_num_threads(3);
  const ConvProblem small = problem("mb1ic2ih12oc2kh3ph1");
  EXPECT_EQ(detail(*winograd().plan(small, Pass::forward, {{"tiles", "9"}}), "chunk_workers"), "1");
  const auto split3 = winograd().plan(small, Pass::forward);
  EXPECT_EQ(detail(*split3, "chunk_workers"), "3");
  EXPECT_EQ(detail(*split3, "tiles_per_chunk"), "3");
  set_num_threads(previous);
  for (Pass pass : all_passes()) {
    auto plan = winograd().plan(p, pass, {{"tiles", "100"}});
    std::size_t split = 0;
    for (const auto& part : plan->info().workspace_split) split += part.second;
    EXPECT_EQ(split, plan->workspace_bytes());
    EXPECT_EQ(plan->info().transform, "F(4x4,3x3)");
    EXPECT_EQ(plan->info().knobs.at("tiles"), "100");
    // Auto: the batch does not grow the workspace.
    ConvProblem big = p;
    big.n = 256;
    EXPECT_EQ(winograd().plan(big, pass)->workspace_bytes(),
              winograd().plan(p, pass)->workspace_bytes());
  }
  EXPECT_EQ(winograd().plan(p, Pass::forward, {{"variant", "f2"}})->info().transform, "F(2x2,3x3)");
}

// Backward-filter's chunks grow with a dU past 8 MiB by the CPU's rule: up to twice dU's bytes
// of V and P on AMD CPUs, half of them elsewhere (measured on one VM of each vendor), which
// the plan records. Both rules are checked here on any CPU through the layout's options.
TEST_F(CpuWinograd, GradientChunksFollowTheVendorRule) {
  const int previous = num_threads();
  set_num_threads(1);
  const int64_t percent = winograd::cpu_winograd_gradient_chunk_percent();
  EXPECT_EQ(percent, cpu_vendor() == CpuVendor::amd ? 200 : 50);
  // ResNet-50's 14x14 layer at mb 16: dU of 9 MiB, 256 tiles of 73.7 KB of V and P; VGG-16's
  // conv5_1: dU of 36 MiB, 256 tiles of 147 KB.
  const ConvProblem res4a = problem("mb16ic256ih14oc256kh3ph1");
  const ConvProblem conv5_1 = problem("mb16ic512ih14oc512kh3ph1");
  auto chunk = [](const ConvProblem& p, int64_t rule) {
    winograd::WinogradOptions o =
        winograd::cpu_winograd_options(resolve_knobs("cpu.winograd", winograd().info().knobs, {}));
    o.gradient_chunk_filter_percent = rule;
    return winograd::winograd_layout(p, Pass::backward_filter, o).chunk;
  };
  EXPECT_EQ(chunk(res4a, 200), 256);  // 2 dU: every tile in one chunk
  EXPECT_EQ(chunk(res4a, 50), 64);    // dU / 2: 64 tiles, the 2 MiB chunk's own
  EXPECT_EQ(chunk(conv5_1, 200), 256);
  EXPECT_EQ(chunk(conv5_1, 50), 128);
  auto plan = winograd().plan(res4a, Pass::backward_filter, {});
  EXPECT_EQ(detail(*plan, "tiles_per_chunk"), percent == 200 ? "256" : "64");
  EXPECT_EQ(detail(*plan, "gradient_chunk_limit"),
            std::to_string(percent) + "% of dU past 8388608 B");
  // On two threads, other CPUs take up to 192 tiles as one chunk in blocks the workers share
  // (the 14x14 layer at mb 12: 3 MiB / (36 * 256 * 4 bytes) = 85 rows, 84 in register tiles);
  // AMD CPUs deal a chunk of twice dU to each worker. One thread keeps the chunks.
  const bool amd = cpu_vendor() == CpuVendor::amd;
  const ConvProblem res4a_mb12 = problem("mb12ic256ih14oc256kh3ph1");
  EXPECT_EQ(detail(*winograd().plan(res4a_mb12, Pass::backward_filter, {}), "tiles_per_chunk"),
            amd ? "192" : "64");
  set_num_threads(2);
  auto shared = winograd().plan(res4a_mb12, Pass::backward_filter, {});
  EXPECT_EQ(detail(*shared, "tiles_per_chunk"), amd ? "96" : "192");
  EXPECT_EQ(detail(*shared, "filter_rows"),
            amd ? "all, once per group" : "84 per block, per chunk");
  EXPECT_EQ(detail(*shared, "chunk_workers"), "2");
  EXPECT_EQ(detail(*winograd().plan(problem("mb13ic256ih14oc256kh3ph1"), Pass::backward_filter, {}),
                   "filter_rows"),
            "all, once per group");  // 208 tiles
  set_num_threads(previous);
}

// Auto filter blocks: U larger than 4 MiB goes in blocks only where no worker runs two chunks
// (a worker would otherwise transform each block once per chunk); the blocks are at most
// 3 MiB in whole 6-row register tiles.
TEST_F(CpuWinograd, AutoFilterBlocksOnlyWhereEachWorkerRunsOneChunk) {
  const int previous = num_threads();
  set_num_threads(1);
  // ResNet-50's 14x14 layer at mb 16: U of 9 MiB, 256 tiles in four chunks of 64.
  const ConvProblem four_chunks = problem("mb16ic256ih14oc256kh3ph1");
  // Its 7x7 layer: U of 36 MiB, 64 tiles in one chunk; 3 MiB / (36 * 512 * 4 bytes) = 42 rows.
  const ConvProblem one_chunk = problem("mb16ic512ih7oc512kh3ph1");
  for (Pass pass : {Pass::forward, Pass::backward_data}) {
    auto whole = winograd().plan(four_chunks, pass, {});
    EXPECT_EQ(detail(*whole, "tiles_per_chunk"), "64") << to_string(pass);
    EXPECT_EQ(detail(*whole, "filter_rows"), "all, once per group") << to_string(pass);
    auto blocked = winograd().plan(one_chunk, pass, {});
    EXPECT_EQ(detail(*blocked, "tiles_per_chunk"), "64") << to_string(pass);
    EXPECT_EQ(detail(*blocked, "filter_rows"), "42 per block, per chunk") << to_string(pass);
  }
  // Two threads share the 7x7 layer's one chunk and split its blocks, where a chunk per
  // worker would have each transform all of U: still blocks, of the same rows.
  set_num_threads(2);
  for (Pass pass : {Pass::forward, Pass::backward_data}) {
    auto two_workers = winograd().plan(one_chunk, pass, {});
    EXPECT_EQ(detail(*two_workers, "chunk_workers"), "2") << to_string(pass);
    EXPECT_EQ(detail(*two_workers, "tiles_per_chunk"), "64") << to_string(pass);
    EXPECT_EQ(detail(*two_workers, "filter_rows"), "42 per block, per chunk") << to_string(pass);
  }
  set_num_threads(previous);
}

// A few tiles more than one auto chunk are one chunk in blocks, forward and backward-data: up
// to 144 on one thread (two panels and a vector), 192 on more (three panels), where chunks of
// 64 and a short rest would read all of U from memory for each. More tiles keep the rule above.
TEST_F(CpuWinograd, FewTilesAreOneChunkInBlocks) {
  const int previous = num_threads();
  // convnet-benchmarks' L5: 9 F(4,3) tiles per 11x11 output; U of 20 MiB, blocks of 3 MiB /
  // (36 * 384 * 4 bytes) = 56 rows, 54 in whole register tiles. Its backward-data has 16
  // tiles per 13x13 image.
  const ConvProblem l5 = problem("mb8ic384ih13oc384oh11kh3");
  auto tiles_per_chunk = [&](const ConvProblem& p, Pass pass) {
    return detail(*winograd().plan(p, pass, {}), "tiles_per_chunk");
  };
  auto with_images = [](ConvProblem p, int64_t images) {
    p.n = images;
    return p;
  };
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (Pass pass : {Pass::forward, Pass::backward_data}) {
      // 72 forward tiles, 128 backward-data tiles (two whole chunks of 64): one chunk, the
      // workers sharing it.
      auto plan = winograd().plan(l5, pass, {});
      EXPECT_EQ(detail(*plan, "tiles_per_chunk"), pass == Pass::forward ? "72" : "128");
      EXPECT_EQ(detail(*plan, "filter_rows"), "54 per block, per chunk") << threads;
      EXPECT_EQ(detail(*plan, "chunk_workers"), std::to_string(threads));
    }
    // 144 forward tiles, 144 backward-data tiles: one chunk on any thread count.
    EXPECT_EQ(tiles_per_chunk(with_images(l5, 16), Pass::forward), "144") << threads;
    EXPECT_EQ(tiles_per_chunk(with_images(l5, 9), Pass::backward_data), "144") << threads;
  }
  // 153 forward tiles: chunks of 64 with U whole on one thread, one chunk on two.
  const ConvProblem past = with_images(l5, 17);
  set_num_threads(1);
  auto whole = winograd().plan(past, Pass::forward, {});
  EXPECT_EQ(detail(*whole, "tiles_per_chunk"), "64");
  EXPECT_EQ(detail(*whole, "filter_rows"), "all, once per group");
  EXPECT_EQ(tiles_per_chunk(with_images(l5, 10), Pass::backward_data), "64");  // 160 tiles
  set_num_threads(2);
  EXPECT_EQ(tiles_per_chunk(past, Pass::forward), "153");
  // Two threads: 192 tiles (the 14x14 layer at mb 12) one chunk, 208 (mb 13) chunks of 64.
  const ConvProblem res4a = problem("mb12ic256ih14oc256kh3ph1");
  for (Pass pass : {Pass::forward, Pass::backward_data}) {
    EXPECT_EQ(tiles_per_chunk(res4a, pass), "192") << to_string(pass);
    auto more = winograd().plan(with_images(res4a, 13), pass, {});
    EXPECT_EQ(detail(*more, "tiles_per_chunk"), "64") << to_string(pass);
    EXPECT_EQ(detail(*more, "filter_rows"), "all, once per group") << to_string(pass);
  }
  // U within 4 MiB stays whole, and the auto chunk with it.
  set_num_threads(1);
  auto small = winograd().plan(problem("mb2ic128ih28oc128kh3ph1"), Pass::forward, {});
  EXPECT_EQ(detail(*small, "tiles_per_chunk"), "64");  // 98 tiles, U of 2.3 MiB
  EXPECT_EQ(detail(*small, "filter_rows"), "all, once per group");
  set_num_threads(previous);
}

// Backward-filter's gradient transform writes a P past 4 MiB with non-temporal stores (the
// plan says so; the knob `gradient_stores` chooses either way). The values are the cached
// stores' bit for bit, on every instruction set and thread count, also where a chunk's rows
// are not vector-aligned and its last run is partial, and within the bound.
TEST_F(CpuWinograd, LargeGradientTransformsBypassTheCache) {
  const int previous = num_threads();
  set_num_threads(1);
  auto gradient_stores = [&](const char* descriptor, Pass pass) {
    return detail(*winograd().plan(problem(descriptor), pass, {}), "gradient_stores");
  };
  // VGG-16's conv5_1 at mb 16: P of 9 MiB in chunks of 128 tiles (18 MiB in 256 on AMD CPUs).
  EXPECT_EQ(gradient_stores("mb16ic512ih14oc512kh3ph1", Pass::backward_filter), "streamed");
  EXPECT_EQ(gradient_stores("mb16ic64ih56oc64kh3ph1", Pass::backward_filter), "cached");
  EXPECT_EQ(gradient_stores("mb16ic256ih14oc256kh3ph1", Pass::forward), "(no gradient_stores)");
  // 512 tiles in chunks of 500 and 12: P[xi] is 128 rows of 500 floats (9 MiB in all), so a
  // row starts on a 64-byte line only every fourth channel, and each row's last run has 52
  // tiles. A small layer is streamed by the knob.
  const uint64_t seed = run_seed() + 3;
  for (const auto& [descriptor, tiles] :
       {std::pair{"mb8ic32ih32oc128kh3ph1", "500"}, std::pair{"g2mb3ic16ih7oc14kh3ph1", "auto"}}) {
    const ConvProblem p = problem(descriptor);
    for (const auto& entry : kCpuIsaNames) {
      if (!cpu_isa_supported(entry.value)) continue;
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        std::vector<float> cached;
        for (const char* stores : {"cached", "auto", "streamed"}) {
          if (std::string(stores) == "auto" && std::string(tiles) == "auto") continue;
          auto plan =
              winograd().plan(p, Pass::backward_filter,
                              {{"tiles", tiles}, {"isa", entry.name}, {"gradient_stores", stores}});
          ASSERT_EQ(detail(*plan, "gradient_stores"),
                    std::string(stores) == "cached" ? "cached" : "streamed")
              << descriptor << " " << stores;
          // The library's 64-byte alignment, which whole streamed vectors need.
          DeviceBuffer ws(host_context(), plan->workspace_bytes());
          float* scratch = static_cast<float*>(ws.data());
          std::fill(scratch, scratch + plan->workspace_bytes() / 4,
                    std::numeric_limits<float>::quiet_NaN());
          HostTensors t = make_inputs(p, Pass::backward_filter, seed);
          plan->run({t.x.data(), t.w.data(), t.y.data()}, {ws.data(), plan->workspace_bytes()});
          const std::vector<float> out = t.output(Pass::backward_filter);
          if (cached.empty()) {
            const AccuracyReport r =
                compare_with_reference(p, Pass::backward_filter, t, out, plan->error_bound());
            EXPECT_TRUE(r.within_bound) << descriptor << " " << entry.name << " " << r.detail;
            cached = out;
            continue;
          }
          ASSERT_EQ(out.size(), cached.size());
          EXPECT_EQ(std::memcmp(out.data(), cached.data(), out.size() * sizeof(float)), 0)
              << descriptor << " " << entry.name << " " << threads << " threads: " << stores
              << " stores differ from cached";
        }
      }
    }
  }
  set_num_threads(previous);
}

// Blocks over one chunk: the workers share the chunk's transforms and each takes an even share
// of U's rows in blocks (backward-filter: dU's, each summed over all tiles), so every thread
// count gives the same bits, and the result is within the bound. Blocks of 10 rows are not
// whole register tiles of the GEMM: the shares' blocks then differ from the one-thread plan's.
TEST_F(CpuWinograd, InBlocksOverOneChunkSameBitsOnAnyThreadCount) {
  const int previous = num_threads();
  for (Pass pass : all_passes()) {
    for (const char* d :
         {"mb2ic24ih9oc40kh3ph1", "g2mb3ic16ih7oc14kh3ph1", "mb2ic40ih9oc24kh3ph1"}) {
      const ConvProblem p = problem(d);
      const int64_t rows = pass == Pass::backward_data ? p.c_per_group() : p.k_per_group();
      for (int64_t block : {6, 10}) {
        if (block >= rows) continue;  // U whole
        const int64_t blocks = (rows + block - 1) / block;
        std::vector<float> first;
        for (int threads : {1, 2, 3}) {
          set_num_threads(threads);
          auto plan = winograd().plan(
              p, pass, {{"tiles", "100000"}, {"filter_rows", std::to_string(block)}});
          ASSERT_EQ(detail(*plan, "filter_rows"), std::to_string(block) + " per block, per chunk")
              << to_string(pass);
          const int64_t workers = std::min<int64_t>(threads, blocks);
          ASSERT_EQ(detail(*plan, "chunk_workers"), std::to_string(workers)) << to_string(pass);
          std::vector<float> ws(plan->workspace_bytes() / 4 + 1);
          HostTensors t = make_inputs(p, pass, run_seed());
          plan->run({t.x.data(), t.w.data(), t.y.data()}, {ws.data(), plan->workspace_bytes()});
          const std::vector<float> out = t.output(pass);
          const AccuracyReport r = compare_with_reference(p, pass, t, out, plan->error_bound());
          EXPECT_TRUE(r.within_bound) << r.detail << " " << to_string(pass) << " " << d;
          if (threads == 1) {
            first = out;
            continue;
          }
          ASSERT_EQ(out.size(), first.size());
          EXPECT_EQ(std::memcmp(out.data(), first.data(), out.size() * sizeof(float)), 0)
              << to_string(pass) << " " << d << " blocks of " << block << ": " << threads
              << " threads differ from 1";
        }
      }
    }
  }
  set_num_threads(previous);
}

// Forward and backward-data deal whole chunks to the workers: bitwise the same for any thread
// count. Backward-filter sums one partial per worker in worker order: the same on every run
// at one thread count, and within the bound at each.
TEST_F(CpuWinograd, DeterministicAcrossThreadCountsAndRuns) {
  const ConvProblem p = problem("g2mb3ic8ih15oc6kh3ph1");
  const int previous = num_threads();
  for (Pass pass : all_passes()) {
    std::vector<float> first;
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      std::vector<float> repeat;
      for (int run = 0; run < 2; ++run) {
        auto plan = winograd().plan(p, pass, {{"tiles", "7"}, {"filter_rows", "2"}});
        std::vector<float> ws(plan->workspace_bytes() / 4 + 1);
        HostTensors t = make_inputs(p, pass, 11);
        plan->run({t.x.data(), t.w.data(), t.y.data()}, {ws.data(), plan->workspace_bytes()});
        if (repeat.empty()) repeat = t.output(pass);
        EXPECT_EQ(t.output(pass), repeat) << to_string(pass) << " threads " << threads;
        const AccuracyReport r =
            compare_with_reference(p, pass, t, t.output(pass), plan->error_bound());
        EXPECT_TRUE(r.within_bound) << r.detail << " threads " << threads;
      }
      if (pass == Pass::backward_filter) continue;
      if (first.empty()) first = repeat;
      EXPECT_EQ(repeat, first) << to_string(pass) << " threads " << threads;
    }
  }
  set_num_threads(previous);
}

}  // namespace
}  // namespace convlab
