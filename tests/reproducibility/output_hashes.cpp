// Prints a hash of the output bits of every case (a few problems x three passes) of every
// available algorithm on one device that declares itself deterministic, one line per case.
// run_twice.py runs it in two processes and compares the lines: a deterministic algorithm
// must give the same bits in a new process, not only on a second run in the same one
// (FFTW's timed planners, for one, choose codelets per process).
//
//   output_hashes cpu|gpu     exit 0; 77 when no algorithm of that device can run here
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "convlab/accuracy.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "convlab/threads.hpp"

namespace {

constexpr int kSkipped = 77;

// FNV-1a over the bytes: any changed bit changes the line.
uint64_t fnv1a(const std::vector<float>& values) {
  uint64_t h = 1469598103934665603ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
  for (std::size_t i = 0; i < values.size() * sizeof(float); ++i) {
    h = (h ^ bytes[i]) * 1099511628211ull;
  }
  return h;
}

int run(convlab::Device device) {
  using namespace convlab;
  // Problems that reduce over many terms in every pass, with groups, stride and dilation.
  const char* const problems[] = {"mb4ic12ih20oc10kh5ph2", "g2mb3ic8ih17oc8kh3sh2dh1ph1",
                                  "mb2ic16ih9iw11oc24kh3kw2ph1"};
  set_num_threads(2);
  int ran = 0;
  for (const Algorithm* a : registry().all()) {
    if (a->device() != device) continue;
    if (const Support here = a->available(); !here) {
      std::printf("skipped %s: %s\n", a->name().c_str(), here.reason.c_str());
      continue;
    }
    if (!a->deterministic()) {
      std::printf("skipped %s: declares itself not deterministic\n", a->name().c_str());
      continue;
    }
    ++ran;
    for (const char* descriptor : problems) {
      const ConvProblem p = parse_descriptor(descriptor).problem;
      for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
        if (!a->supports(p, pass)) continue;
        const HostTensors host = make_inputs(p, pass, 2026);
        auto plan = a->plan(p, pass);
        CaseBuffers buffers(a->context(), p, host, plan->workspace_bytes());
        plan->run(buffers.tensors(), buffers.workspace());
        const std::vector<float> out = buffers.download_output(pass);
        std::printf("%s %s %s [%s] %016llx\n", a->name().c_str(), to_string(pass), descriptor,
                    format_knobs(plan->info().knobs).c_str(),
                    static_cast<unsigned long long>(fnv1a(out)));
      }
    }
  }
  return ran == 0 ? kSkipped : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "cpu") != 0 && std::strcmp(argv[1], "gpu") != 0)) {
    std::fprintf(stderr, "usage: output_hashes cpu|gpu\n");
    return 2;
  }
  try {
    return run(std::strcmp(argv[1], "cpu") == 0 ? convlab::Device::cpu : convlab::Device::gpu);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "output_hashes: %s\n", e.what());
    return 1;
  }
}
