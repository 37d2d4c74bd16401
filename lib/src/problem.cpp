#include "convlab/problem.hpp"

#include <array>
#include <limits>
#include <sstream>
#include <string>

#include "convlab/descriptor.hpp"
#include "convlab/enum_names.hpp"
#include "convlab/error.hpp"

namespace convlab {

constexpr auto kPassNames = enum_names<Pass::backward_filter>({
    {Pass::forward, "fwd"},
    {Pass::backward_data, "bwd_data"},
    {Pass::backward_filter, "bwd_filter"},
});

const char* to_string(Pass pass) noexcept { return name_of(kPassNames, pass); }

Pass parse_pass(std::string_view text) { return value_of(kPassNames, text, "pass"); }

namespace {

// `result` is read only after the caller's __builtin_*_overflow has written it.
int64_t unless_overflowed(bool overflowed, const int64_t& result, int64_t a, const char* op,
                          int64_t b, const char* what) {
  if (overflowed) {
    throw Error(ErrorCode::invalid_problem, std::string(what) + " overflows int64: " +
                                                std::to_string(a) + op + std::to_string(b));
  }
  return result;
}

}  // namespace

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t result = 0;
  const bool overflowed = __builtin_mul_overflow(a, b, &result);
  return unless_overflowed(overflowed, result, a, " * ", b, what);
}

int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t result = 0;
  const bool overflowed = __builtin_add_overflow(a, b, &result);
  return unless_overflowed(overflowed, result, a, " + ", b, what);
}

int64_t TensorBytes::total() const {
  return checked_add(checked_add(x, w, "total bytes"), y, "total bytes");
}

namespace {

// Derived counts are only meaningful for a validated problem; these helpers prefix overflow
// messages with the descriptor so a caller of e.g. x_bytes() learns which problem it was.
int64_t product(const ConvProblem& p, std::initializer_list<int64_t> factors, const char* what) {
  int64_t result = 1;
  try {
    for (int64_t f : factors) result = checked_mul(result, f, what);
  } catch (const Error& e) {
    throw Error(ErrorCode::invalid_problem, "invalid problem " + p.descriptor() + ": " + e.what());
  }
  return result;
}

// The sum pad_begin + size + pad_end without overflow for any int64 inputs (validate()
// bounds them later).
bool padded_extent(int64_t size, int64_t pad_begin, int64_t pad_end, int64_t* out) {
  int64_t pads = 0;
  return !__builtin_add_overflow(pad_begin, pad_end, &pads) &&
         !__builtin_add_overflow(size, pads, out);
}

}  // namespace

namespace {

// (extent - 1) * dilation + 1, or INT64_MAX where it overflows; extent - 1 is checked too:
// an invalid problem may hold INT64_MIN.
int64_t dilated(int64_t extent, int64_t dilation) {
  int64_t v = 0;
  if (__builtin_sub_overflow(extent, 1, &v) || __builtin_mul_overflow(v, dilation, &v) ||
      __builtin_add_overflow(v, 1, &v)) {
    return std::numeric_limits<int64_t>::max();
  }
  return v;
}

}  // namespace

int64_t ConvProblem::dilated_r() const { return dilated(r, dilation_h); }

int64_t ConvProblem::dilated_s() const { return dilated(s, dilation_w); }

static int64_t out_size(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t dilated,
                        int64_t stride) {
  int64_t padded = 0;
  if (stride <= 0 || !padded_extent(in, pad_begin, pad_end, &padded)) return 0;
  // A negative size (an invalid problem, named by descriptor()) must not overflow here.
  int64_t span = 0;
  if (__builtin_sub_overflow(padded, dilated, &span) || span < 0) return 0;
  const int64_t steps = span / stride;  // INT64_MAX only when the kernel is invalid (r <= 0)
  return steps == std::numeric_limits<int64_t>::max() ? 0 : steps + 1;
}

int64_t ConvProblem::out_h() const {
  return out_size(h, pad_h, end_pad_h(), dilated_r(), stride_h);
}
int64_t ConvProblem::out_w() const {
  return out_size(w, pad_w, end_pad_w(), dilated_s(), stride_w);
}

int64_t ConvProblem::x_elems() const { return product(*this, {n, c, h, w}, "input elements"); }
int64_t ConvProblem::w_elems() const {
  return product(*this, {k, c_per_group(), r, s}, "filter elements");
}
int64_t ConvProblem::y_elems() const {
  return product(*this, {n, k, out_h(), out_w()}, "output elements");
}
int64_t ConvProblem::x_bytes() const {
  return product(*this, {x_elems(), int64_t{sizeof(float)}}, "input bytes");
}
int64_t ConvProblem::w_bytes() const {
  return product(*this, {w_elems(), int64_t{sizeof(float)}}, "filter bytes");
}
int64_t ConvProblem::y_bytes() const {
  return product(*this, {y_elems(), int64_t{sizeof(float)}}, "output bytes");
}
TensorBytes ConvProblem::tensor_bytes() const { return {x_bytes(), w_bytes(), y_bytes()}; }

int64_t ConvProblem::flops(Pass) const {
  return product(*this, {2, n, k, out_h(), out_w(), c_per_group(), r, s}, "flop count");
}

std::string ConvProblem::descriptor() const { return format_descriptor(*this); }

bool ConvProblem::operator==(const ConvProblem& o) const {
  return n == o.n && c == o.c && h == o.h && w == o.w && k == o.k && r == o.r && s == o.s &&
         pad_h == o.pad_h && pad_w == o.pad_w && end_pad_h() == o.end_pad_h() &&
         end_pad_w() == o.end_pad_w() && stride_h == o.stride_h && stride_w == o.stride_w &&
         dilation_h == o.dilation_h && dilation_w == o.dilation_w && groups == o.groups;
}

void ConvProblem::validate() const {
  std::ostringstream why;
  const char* sep = "";
  auto fail = [&](const std::string& text) {
    why << sep << text;
    sep = "; ";
  };
  auto positive = [&](const char* field, int64_t value) {
    if (value <= 0) fail(std::string(field) + " must be positive, got " + std::to_string(value));
  };
  positive("minibatch (mb)", n);
  positive("input channels (ic)", c);
  positive("input height (ih)", h);
  positive("input width (iw)", w);
  positive("output channels (oc)", k);
  positive("kernel height (kh)", r);
  positive("kernel width (kw)", s);
  positive("stride height (sh)", stride_h);
  positive("stride width (sw)", stride_w);
  positive("dilation height", dilation_h);
  positive("dilation width", dilation_w);
  positive("groups (g)", groups);
  if (pad_h < 0) fail("padding height (ph) must be >= 0, got " + std::to_string(pad_h));
  if (pad_w < 0) fail("padding width (pw) must be >= 0, got " + std::to_string(pad_w));
  if (end_pad_h() < 0) {
    fail("end padding height (bottom) must be >= 0, got " + std::to_string(end_pad_h()));
  }
  if (end_pad_w() < 0) {
    fail("end padding width (right) must be >= 0, got " + std::to_string(end_pad_w()));
  }
  if (groups > 0 && c > 0 && c % groups != 0) {
    fail("input channels " + std::to_string(c) + " not divisible by groups " +
         std::to_string(groups));
  }
  if (groups > 0 && k > 0 && k % groups != 0) {
    fail("output channels " + std::to_string(k) + " not divisible by groups " +
         std::to_string(groups));
  }
  auto kernel_fits = [&](const char* dim, int64_t size, int64_t pad, int64_t pad_end,
                         int64_t kernel, int64_t dilation, int64_t dilated) {
    if (size <= 0 || kernel <= 0 || dilation <= 0 || pad < 0 || pad_end < 0) return;
    int64_t padded = 0;
    if (!padded_extent(size, pad, pad_end, &padded)) {
      fail(std::string(dim) + ": padded input overflows int64");
    } else if (dilated == std::numeric_limits<int64_t>::max()) {
      fail(std::string(dim) + ": dilated kernel overflows int64");
    } else if (dilated > padded) {
      fail(std::string(dim) + ": kernel " + std::to_string(kernel) + " (dilated " +
           std::to_string(dilated) + ") is larger than padded input " + std::to_string(padded));
    }
  };
  kernel_fits("height", h, pad_h, end_pad_h(), r, dilation_h, dilated_r());
  kernel_fits("width", w, pad_w, end_pad_w(), s, dilation_w, dilated_s());
  const std::string problems = why.str();
  if (!problems.empty()) {
    throw Error(ErrorCode::invalid_problem, "invalid problem " + descriptor() + ": " + problems);
  }
  // The sizes are sane; now every derived count must fit int64 (these throw, named).
  // The sum of the three tensors too: memory reports add them (found by fuzz/).
  const TensorBytes bytes = tensor_bytes();
  try {
    (void)bytes.total();
  } catch (const Error& e) {
    throw Error(ErrorCode::invalid_problem, "invalid problem " + descriptor() + ": " + e.what());
  }
  (void)flops(Pass::forward);
}

}  // namespace convlab
