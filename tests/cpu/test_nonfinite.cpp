// Numerical honesty: a NaN or an Inf in an input reaches the outputs as IEEE arithmetic
// says, in every CPU algorithm of the registry (it iterates registry().all(), so algorithms
// are covered as they land). No crash, no silent zero, no finite value where a non-finite
// one belongs, and no non-finite value where none can arrive.
//
// What is expected depends on how the strategy computes (docs/reliability.md):
//  - direct strategies (elementwise error bound: reference, cpu.im2col, cpu.onednn): an
//    output is non-finite exactly when one of its products reads the poisoned element
//    through a tap inside the input. A NaN gives NaN there; a single Inf gives +-Inf (it is
//    added once, with finite terms). Padding taps are skipped or multiply a stored zero, and
//    0 * NaN = NaN makes the two differ, both legitimately, where a padding tap meets the
//    poison: a filter poison (forward, and backward-data, whose padding zeros are dy's in the
//    transposed form) or a dy poison in backward-filter, of a padded problem. Those are held
//    to the limits: non-finite wherever a product reads the poison inside the input, finite
//    in every plane that does not mix it.
//  - plane-spread strategies (normwise bound: cpu.fft): the transform of a plane holding a
//    NaN or Inf is non-finite in every bin, so every output plane that mixes the poisoned
//    plane (same image and group, or same filter) is non-finite in every element, even
//    those no product reads; all other planes stay finite. Inf may turn into NaN there.
//    One exception, from the geometry (fft_geometry.hpp): input rows/columns at or beyond
//    E = (OH-1)*stride + dilated kernel - pad meet no tap of any output, so they are never
//    transformed: a poison there reaches nothing, and in backward-data those dx elements
//    are written as exact zeros, finite whatever dy holds.
//  - tile-spread strategies (family winograd, normwise bound): the input transform of a tile
//    mixes its whole alpha x alpha source patch (0 * NaN = NaN), so a poison in the source
//    (x forward, dy backward-data) makes every output of each m x m tile whose patch holds it
//    non-finite (m from the plan's tile); a filter poison, and any backward-filter poison,
//    reaches whole planes as above. A Winograd plan that does not say its tile grid (oneDNN's)
//    is only held to the limits: non-finite wherever a product reads the poison, finite in
//    every plane that does not mix it.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "convlab/descriptor.hpp"
#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

enum class Role { x, w, y };
const char* role_name(Role r) { return r == Role::x ? "x" : r == Role::w ? "w" : "y"; }

struct Dims {
  int64_t outer, channels, h, w;
};
Dims dims(const ConvProblem& p, Role role) {
  switch (role) {
    case Role::x:
      return {p.n, p.c, p.h, p.w};
    case Role::w:
      return {p.k, p.c_per_group(), p.r, p.s};
    case Role::y:
      break;
  }
  return {p.n, p.k, p.out_h(), p.out_w()};
}
Role output_role(Pass pass) {
  if (pass == Pass::forward) return Role::y;
  return pass == Pass::backward_data ? Role::x : Role::w;
}
std::vector<Role> input_roles(Pass pass) {
  if (pass == Pass::forward) return {Role::x, Role::w};
  if (pass == Pass::backward_data) return {Role::y, Role::w};
  return {Role::x, Role::y};
}
std::vector<float>& tensor(HostTensors& t, Role role) {
  return role == Role::x ? t.x : role == Role::w ? t.w : t.y;
}

struct Poison {
  Role role;
  int64_t outer, channel, i, j;
  float value;
  std::string describe() const {
    std::ostringstream out;
    out << role_name(role) << "[" << outer << "," << channel << "," << i << "," << j
        << "] = " << value;
    return out.str();
  }
};

// Whether the activation-or-filter element `q` is one of the products of output element
// (o_outer, o_channel, o_i, o_j) of `pass` through a tap inside the input. Spelled out per
// pass from the definitions (DESIGN.md), independently of any implementation.
bool reads(const ConvProblem& p, Pass pass, const Poison& q, int64_t oo, int64_t oc, int64_t oi,
           int64_t oj) {
  const int64_t cpg = p.c_per_group(), kpg = p.k_per_group();
  // forward tap: input row = out*stride - pad + tap*dilation
  auto tap_h = [&](int64_t out, int64_t r) {
    return out * p.stride_h - p.pad_h + r * p.dilation_h;
  };
  auto tap_w = [&](int64_t out, int64_t s) {
    return out * p.stride_w - p.pad_w + s * p.dilation_w;
  };
  auto inside = [&](int64_t ih, int64_t iw) { return ih >= 0 && ih < p.h && iw >= 0 && iw < p.w; };
  if (pass == Pass::forward) {  // y(n,k,oh,ow) = sum x(n, g*cpg+c, tap) w(k, c, r, s)
    const int64_t g = oc / kpg;
    if (q.role == Role::x) {
      if (q.outer != oo || q.channel / cpg != g) return false;
      for (int64_t r = 0; r < p.r; ++r)
        for (int64_t s = 0; s < p.s; ++s)
          if (tap_h(oi, r) == q.i && tap_w(oj, s) == q.j) return true;
      return false;
    }
    return q.outer == oc && inside(tap_h(oi, q.i), tap_w(oj, q.j));  // w(k0, c, r0, s0)
  }
  if (pass == Pass::backward_data) {  // dx(n,c,ih,iw) = sum dy(n,k,oh,ow) w(k, c%cpg, r, s)
    const int64_t g = oc / cpg;
    for (int64_t r = 0; r < p.r; ++r)
      for (int64_t s = 0; s < p.s; ++s)
        for (int64_t oh = 0; oh < p.out_h(); ++oh)
          for (int64_t ow = 0; ow < p.out_w(); ++ow) {
            if (tap_h(oh, r) != oi || tap_w(ow, s) != oj) continue;
            if (q.role == Role::y && q.outer == oo && q.channel / kpg == g && q.i == oh &&
                q.j == ow)
              return true;
            if (q.role == Role::w && q.outer / kpg == g && q.channel == oc % cpg && q.i == r &&
                q.j == s)
              return true;
          }
    return false;
  }
  // dw(k,c,r,s) = sum over n, oh, ow of dy(n,k,oh,ow) x(n, g*cpg+c, tap)
  const int64_t g = oo / kpg;
  for (int64_t oh = 0; oh < p.out_h(); ++oh)
    for (int64_t ow = 0; ow < p.out_w(); ++ow) {
      const int64_t ih = tap_h(oh, oi), iw = tap_w(ow, oj);
      if (!inside(ih, iw)) continue;
      if (q.role == Role::x && q.channel == g * cpg + oc && q.i == ih && q.j == iw) return true;
      if (q.role == Role::y && q.channel == oo && q.i == oh && q.j == ow) return true;
    }
  return false;
}

// Input elements along an axis that any output reads through some tap: clamp(E, 0, size).
int64_t used_inputs(int64_t size, int64_t pad, int64_t stride, int64_t dilated, int64_t out) {
  const int64_t e = (out - 1) * stride + dilated - pad;
  return e < 0 ? 0 : e > size ? size : e;
}

// Whether x element (i, j) lies in the part of its plane that can reach an output.
bool x_reachable(const ConvProblem& p, int64_t i, int64_t j) {
  return i < used_inputs(p.h, p.pad_h, p.stride_h, p.dilated_r(), p.out_h()) &&
         j < used_inputs(p.w, p.pad_w, p.stride_w, p.dilated_s(), p.out_w());
}

// Tile-spread: whether output (oi, oj)'s m x m tile reads the poisoned source element through
// its (m + 2)^2 patch. Forward tiles y over x at offset pad; backward-data tiles dx over dy at
// offset 2 - pad (the flipped 3x3 filter). Other roles spread over whole planes.
bool in_tile_patch(const ConvProblem& p, Pass pass, const Poison& q, int64_t m, int64_t oi,
                   int64_t oj) {
  const bool source = (pass == Pass::forward && q.role == Role::x) ||
                      (pass == Pass::backward_data && q.role == Role::y);
  if (!source) return true;
  const int64_t off_h = pass == Pass::forward ? p.pad_h : 2 - p.pad_h;
  const int64_t off_w = pass == Pass::forward ? p.pad_w : 2 - p.pad_w;
  const int64_t h0 = oi / m * m - off_h, w0 = oj / m * m - off_w;
  return q.i >= h0 && q.i < h0 + m + 2 && q.j >= w0 && q.j < w0 + m + 2;
}

// Whether output plane (o_outer, o_channel) mixes the poisoned input plane.
bool mixes(const ConvProblem& p, Pass pass, const Poison& q, int64_t oo, int64_t oc) {
  const int64_t cpg = p.c_per_group(), kpg = p.k_per_group();
  if (pass == Pass::forward) {
    return q.role == Role::x ? q.outer == oo && q.channel / cpg == oc / kpg : q.outer == oc;
  }
  if (pass == Pass::backward_data) {
    return q.role == Role::y ? q.outer == oo && q.channel / kpg == oc / cpg
                             : q.outer / kpg == oc / cpg && q.channel == oc % cpg;
  }
  return q.role == Role::x ? q.channel == (oo / kpg) * cpg + oc : q.channel == oo;
}

std::vector<float> run(const Algorithm& algorithm, Plan& plan, const ConvProblem& p, Pass pass,
                       const HostTensors& host) {
  CaseBuffers buffers(algorithm.context(), p, host, plan.workspace_bytes());
  plan.run(buffers.tensors(), buffers.workspace());
  return buffers.download_output(pass);
}

std::vector<ConvProblem> shapes() {
  std::vector<ConvProblem> out;
  for (const char* d : {
           "mb2ic4ih7iw6oc6kh3kw2ph1pw0",            // padded, asymmetric
           "mb2ic4ih9iw9oc4kh2kw2sh3sw3",            // stride > kernel: unread pixels
           "g2mb1ic4ih12iw12oc6kh3kw3ph2pw2dh1dw1",  // groups, dilation 2, 'same'
           "mb2ic3ih5iw5oc4kh1kw1",                  // 1x1: the im2col shortcut
           "mb1ic2ih1iw1oc2kh6kw6sh2sw2ph3pw3",      // padding > stride, 1x1 output
           "g4mb2ic4ih6iw6oc4kh3kw3",                // depthwise, unpadded
           "mb1ic2ih8iw8oc3kh3kw3",                  // dense, unpadded
       }) {
    out.push_back(parse_descriptor(d).problem);
  }
  return out;
}

// Whether a direct strategy may also carry a poison of `role` through a padding tap (see the
// header): the operand a padding zero meets, in a padded problem.
bool meets_padding(const ConvProblem& p, Pass pass, Role role) {
  const bool padded = p.pad_h > 0 || p.pad_w > 0;
  return padded && (pass == Pass::backward_filter ? role == Role::y : role == Role::w);
}

// The poisons of a case: each input role, at the centre and at the last pixel of the last
// channel of the last image (or filter), NaN and +Inf.
std::vector<Poison> poisons(const ConvProblem& p, Pass pass) {
  std::vector<Poison> out;
  for (Role role : input_roles(pass)) {
    const Dims d = dims(p, role);
    for (auto [i, j] : {std::pair{d.h / 2, d.w / 2}, std::pair{d.h - 1, d.w - 1}}) {
      for (float v :
           {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
        out.push_back({role, d.outer - 1, d.channels - 1, i, j, v});
      }
    }
  }
  return out;
}

class NonFinite : public ::testing::TestWithParam<std::string> {};

TEST_P(NonFinite, PropagatesAsIeeeSays) {
  const Algorithm& algorithm = registry().get(GetParam());
  const uint64_t seed = testing::run_seed();
  int checked = 0, unsupported = 0;
  for (const ConvProblem& p : shapes()) {
    for (Pass pass : testing::all_passes()) {
      const Support support = algorithm.supports(p, pass);
      if (!support) {
        ++unsupported;
        std::cout << algorithm.name() << " " << to_string(pass) << " " << p.descriptor()
                  << ": unsupported: " << support.reason << "\n";
        continue;
      }
      auto plan = algorithm.plan(p, pass);
      const bool spreads = plan->error_bound().kind == ErrorBound::Kind::normwise;
      // Tile-spread plans say their tile ("4x4"); 0 for the others.
      const bool winograd = algorithm.info().family == Family::winograd;
      const int64_t tile = winograd && !plan->info().tile.empty() ? std::stoll(plan->info().tile) : 0;
      const bool tile_unknown = winograd && tile == 0;
      const Dims od = dims(p, output_role(pass));
      for (const Poison& q : poisons(p, pass)) {
        SCOPED_TRACE(algorithm.name() + " " + to_string(pass) + " " + p.descriptor() + " " +
                     q.describe() + (spreads ? " (plane- or tile-spread)" : " (direct)") + " seed " +
                     std::to_string(seed));
        HostTensors host = make_inputs(p, pass, seed + checked);
        const Dims id = dims(p, q.role);
        tensor(host, q.role)[((q.outer * id.channels + q.channel) * id.h + q.i) * id.w + q.j] =
            q.value;
        const std::vector<float> out = run(algorithm, *plan, p, pass, host);
        ++checked;
        int64_t wrong = 0;
        std::string first;
        for (int64_t oo = 0; oo < od.outer; ++oo)
          for (int64_t oc = 0; oc < od.channels; ++oc)
            for (int64_t oi = 0; oi < od.h; ++oi)
              for (int64_t oj = 0; oj < od.w; ++oj) {
                const float v = out[((oo * od.channels + oc) * od.h + oi) * od.w + oj];
                bool expect_nonfinite =
                    tile ? mixes(p, pass, q, oo, oc) && in_tile_patch(p, pass, q, tile, oi, oj)
                    : spreads ? mixes(p, pass, q, oo, oc) &&
                                    (q.role != Role::x || x_reachable(p, q.i, q.j)) &&
                                    (pass != Pass::backward_data || x_reachable(p, oi, oj))
                              : reads(p, pass, q, oo, oc, oi, oj);
                bool ok = expect_nonfinite ? !std::isfinite(v) : std::isfinite(v);
                if (tile_unknown || (!spreads && !tile && meets_padding(p, pass, q.role))) {
                  expect_nonfinite = reads(p, pass, q, oo, oc, oi, oj);
                  ok = expect_nonfinite ? !std::isfinite(v)
                                        : mixes(p, pass, q, oo, oc) || std::isfinite(v);
                }
                // A NaN stays NaN; on a direct path a single Inf stays an Inf.
                if (ok && expect_nonfinite && std::isnan(q.value)) ok = std::isnan(v);
                if (ok && expect_nonfinite && !spreads && std::isinf(q.value)) ok = std::isinf(v);
                if (!ok && wrong++ == 0) {
                  std::ostringstream where;
                  where << "output [" << oo << "," << oc << "," << oi << "," << oj << "] = " << v
                        << ", expected " << (expect_nonfinite ? "non-finite" : "finite");
                  first = where.str();
                }
              }
        EXPECT_EQ(wrong, 0) << wrong << " outputs wrong; first: " << first;
      }
    }
  }
  std::cout << algorithm.name() << ": " << checked << " poisoned runs checked, " << unsupported
            << " (shape, pass) unsupported\n";
  // An algorithm this CPU cannot run for any of the shapes (oneDNN's Winograd needs AVX-512)
  // is skipped visibly rather than passed.
  if (checked == 0) GTEST_SKIP() << algorithm.name() << " supports none of the shapes here";
}

std::vector<std::string> cpu_algorithms() {
  std::vector<std::string> names;
  for (const Algorithm* a : registry().all()) {
    if (a->device() == Device::cpu && a->available()) names.push_back(a->name());
  }
  return names;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(CpuAlgorithms, NonFinite, ::testing::ValuesIn(cpu_algorithms()),
                         param_name);

}  // namespace
}  // namespace convlab
