// Plans and runs a forward convolution through the public API and checks one output by hand.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include <convlab/convlab.hpp>

static int run() {
  const convlab::ConvProblem p = convlab::parse_descriptor("mb1ic2ih6oc3kh3ph1").problem;
  std::vector<float> x(p.x_elems(), 1.0f), w(p.w_elems(), 0.5f), y(p.y_elems(), -1.0f);
  int ran = 0;
  for (const convlab::Algorithm* algo : convlab::registry().all()) {
    if (algo->device() != convlab::Device::cpu || !algo->available() ||
        !algo->supports(p, convlab::Pass::forward)) {
      continue;
    }
    auto plan = algo->plan(p, convlab::Pass::forward);
    std::vector<unsigned char> ws(plan->workspace_bytes() + 64);
    // Align the workspace to 64 bytes, as CaseBuffers does.
    void* base = ws.data();
    std::size_t space = ws.size();
    std::align(64, plan->workspace_bytes(), base, space);
    plan->run({x.data(), w.data(), y.data()}, {base, plan->workspace_bytes()});
    // The centre output sees all 2*3*3 taps of 1 * 0.5; a corner sees 2*2*2.
    const float centre = y[2 * 6 + 2], corner = y[0];
    if (std::fabs(centre - 9.0f) > 1e-5f || std::fabs(corner - 4.0f) > 1e-5f) {
      std::printf("%s: wrong result centre %g corner %g\n", algo->name().c_str(), centre, corner);
      return 1;
    }
    std::printf("%s ok (workspace %zu bytes)\n", algo->name().c_str(), plan->workspace_bytes());
    ++ran;
  }
  std::printf("convlab %s consumer: %d algorithms ran\n", CONVLAB_VERSION, ran);
  return ran > 0 ? 0 : 1;
}

int main() {
  try {
    return run();
  } catch (const convlab::Error& e) {
    std::printf("consumer: %s error: %s\n", convlab::to_string(e.code()), e.what());
    return 1;
  }
}
