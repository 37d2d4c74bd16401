// A CPU-only process through the public API: looks CPU algorithms up the ways convbench does
// (a glob, an exact name), plans and runs each on a small problem, and checks that no CUDA
// library is mapped into the process at the start or after all that. With the CUDA module
// built, it then asks for a GPU algorithm by name and checks that the module and its CUDA
// runtime are mapped now, so the scan below is shown to see a CUDA library when one is there.
//
// Usage: cpu_only_process   (exit status 0: as described; 1: with the reason on stderr)
#include <cmath>
#include <convlab/convlab.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

// The mapped files of this process whose names mark them as CUDA libraries.
std::vector<std::string> cuda_mappings() {
  static const char* const marks[] = {"libcudart", "libcublas",  "libcufft",
                                      "libcudnn",  "libcuda.so", "libconvlab_cuda"};
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> found;
  std::string line;
  while (std::getline(maps, line)) {
    for (const char* mark : marks) {
      if (line.find(mark) != std::string::npos) {
        const std::string file = line.substr(line.find('/'));
        bool seen = false;
        for (const auto& f : found) seen = seen || f == file;
        if (!seen) found.push_back(file);
      }
    }
  }
  return found;
}

bool none_mapped(const char* when) {
  const std::vector<std::string> mapped = cuda_mappings();
  for (const auto& m : mapped)
    std::fprintf(stderr, "%s: CUDA library mapped: %s\n", when, m.c_str());
  return mapped.empty();
}

// Plans and runs `algo` forward on a small problem and checks one output by hand.
bool run_one(const convlab::Algorithm& algo) {
  const convlab::ConvProblem p = convlab::parse_descriptor("mb1ic2ih6oc3kh3ph1").problem;
  std::vector<float> x(p.x_elems(), 1.0f), w(p.w_elems(), 0.5f), y(p.y_elems(), -1.0f);
  auto plan = algo.plan(p, convlab::Pass::forward);
  std::vector<unsigned char> ws(plan->workspace_bytes() + 64);
  void* base = ws.data();
  std::size_t space = ws.size();
  std::align(64, plan->workspace_bytes(), base, space);
  plan->run({x.data(), w.data(), y.data()}, {base, plan->workspace_bytes()});
  // The centre output sees all 2*3*3 taps of 1 * 0.5.
  if (std::fabs(y[2 * 6 + 2] - 9.0f) > 1e-5f) {
    std::fprintf(stderr, "%s: centre output %g, expected 9\n", algo.name().c_str(), y[2 * 6 + 2]);
    return false;
  }
  std::printf("ran %s\n", algo.name().c_str());
  return true;
}

}  // namespace

int main() {
  if (!none_mapped("at start")) return 1;
  try {
    std::vector<const convlab::Algorithm*> cpu = convlab::registry().match("cpu.*,reference");
    cpu.push_back(&convlab::registry().get("cpu.im2col"));
    for (const convlab::Algorithm* a : cpu) {
      const convlab::Support available = a->available();
      if (!available) {
        std::printf("skipped %s: %s\n", a->name().c_str(), available.reason.c_str());
        continue;
      }
      if (!run_one(*a)) return 1;
    }
    if (!none_mapped("after planning and running the CPU algorithms")) return 1;
#if CONVLAB_HAVE_CUDA
    const convlab::Algorithm& gpu = convlab::registry().get("cuda.im2col");
    std::printf("looked up %s (%s)\n", gpu.name().c_str(),
                gpu.available().ok ? "available" : gpu.available().reason.c_str());
    if (cuda_mappings().empty()) {
      std::fprintf(stderr,
                   "after looking up cuda.im2col: no CUDA library mapped, so the scan "
                   "cannot be trusted to see one\n");
      return 1;
    }
    std::printf("after a GPU lookup, mapped:");
    for (const auto& m : cuda_mappings()) std::printf(" %s", m.c_str());
    std::printf("\n");
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  std::printf("no CUDA library mapped by the CPU-only path\n");
  return 0;
}
