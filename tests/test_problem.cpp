// ConvProblem: derived sizes, counts, and validation that names every bad value.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "convlab/error.hpp"
#include "convlab/problem.hpp"

namespace convlab {
namespace {

ConvProblem base() {
  ConvProblem p;
  p.n = 2, p.c = 4, p.h = 9, p.w = 7, p.k = 6, p.r = 3, p.s = 3;
  p.pad_h = 1, p.pad_w = 1;
  return p;
}

TEST(Problem, DerivesOutputSizeWithStridePaddingDilation) {
  ConvProblem p = base();
  EXPECT_EQ(p.out_h(), 9);
  EXPECT_EQ(p.out_w(), 7);
  p.stride_h = 2, p.stride_w = 3;
  EXPECT_EQ(p.out_h(), (9 + 2 - 3) / 2 + 1);
  EXPECT_EQ(p.out_w(), (7 + 2 - 3) / 3 + 1);
  p.dilation_h = 2;  // dilated kernel 5
  EXPECT_EQ(p.dilated_r(), 5);
  EXPECT_EQ(p.out_h(), (9 + 2 - 5) / 2 + 1);
}

TEST(Problem, CountsElementsBytesAndFlops) {
  ConvProblem p = base();
  p.groups = 2;
  EXPECT_EQ(p.x_elems(), 2 * 4 * 9 * 7);
  EXPECT_EQ(p.w_elems(), 6 * 2 * 3 * 3);
  EXPECT_EQ(p.y_elems(), 2 * 6 * 9 * 7);
  EXPECT_EQ(p.x_bytes(), 4 * p.x_elems());
  EXPECT_EQ(p.tensor_bytes().total(), 4 * (p.x_elems() + p.w_elems() + p.y_elems()));
  EXPECT_EQ(p.flops(Pass::forward), 2LL * 2 * 6 * 9 * 7 * 2 * 3 * 3);
  EXPECT_EQ(p.flops(Pass::backward_data), p.flops(Pass::forward));
}

TEST(Problem, PassSpellings) {
  for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
    EXPECT_EQ(parse_pass(to_string(pass)), pass);
  }
  try {
    parse_pass("backward");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("'backward'"), std::string::npos) << e.what();
  }
}

TEST(Problem, ValidProblemsPass) {
  EXPECT_NO_THROW(base().validate());
  ConvProblem p = base();
  p.r = 11, p.pad_h = 1;  // kernel = padded input
  EXPECT_NO_THROW(p.validate());
  p = base();
  p.pad_h = 5;  // padding larger than the kernel is allowed
  EXPECT_NO_THROW(p.validate());
}

struct InvalidCase {
  const char* label;
  ConvProblem problem;
  const char* fragment;  // must appear in the message
};

ConvProblem with(void (*edit)(ConvProblem&)) {
  ConvProblem p = base();
  edit(p);
  return p;
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::vector<InvalidCase> invalid_cases() {
  return {
      {"zero batch", with([](ConvProblem& p) { p.n = 0; }), "minibatch (mb) must be positive, got 0"},
      {"negative batch", with([](ConvProblem& p) { p.n = -3; }), "got -3"},
      {"zero channels", with([](ConvProblem& p) { p.c = 0; }), "input channels (ic) must be positive"},
      {"zero height", with([](ConvProblem& p) { p.h = 0; }), "input height (ih) must be positive"},
      {"negative width", with([](ConvProblem& p) { p.w = -1; }), "input width (iw) must be positive, got -1"},
      {"zero out channels", with([](ConvProblem& p) { p.k = 0; }), "output channels (oc) must be positive"},
      {"zero kernel h", with([](ConvProblem& p) { p.r = 0; }), "kernel height (kh) must be positive"},
      {"negative kernel w", with([](ConvProblem& p) { p.s = -2; }), "kernel width (kw) must be positive, got -2"},
      {"zero stride h", with([](ConvProblem& p) { p.stride_h = 0; }), "stride height (sh) must be positive, got 0"},
      {"negative stride w", with([](ConvProblem& p) { p.stride_w = -1; }), "stride width (sw) must be positive"},
      {"zero dilation h", with([](ConvProblem& p) { p.dilation_h = 0; }), "dilation height must be positive"},
      {"negative dilation w", with([](ConvProblem& p) { p.dilation_w = -4; }), "dilation width must be positive, got -4"},
      {"zero groups", with([](ConvProblem& p) { p.groups = 0; }), "groups (g) must be positive, got 0"},
      {"negative groups", with([](ConvProblem& p) { p.groups = -2; }), "groups (g) must be positive"},
      {"negative pad h", with([](ConvProblem& p) { p.pad_h = -1; }), "padding height (ph) must be >= 0, got -1"},
      {"negative pad w", with([](ConvProblem& p) { p.pad_w = -7; }), "padding width (pw) must be >= 0, got -7"},
      {"c not divisible", with([](ConvProblem& p) { p.groups = 3; p.k = 6; }), "input channels 4 not divisible by groups 3"},
      {"k not divisible", with([](ConvProblem& p) { p.groups = 4; p.k = 6; }), "output channels 6 not divisible by groups 4"},
      {"kernel too tall", with([](ConvProblem& p) { p.r = 12; }), "height: kernel 12 (dilated 12) is larger than padded input 11"},
      {"kernel too wide", with([](ConvProblem& p) { p.s = 10; }), "width: kernel 10 (dilated 10) is larger than padded input 9"},
      {"dilated too tall", with([](ConvProblem& p) { p.dilation_h = 6; }), "kernel 3 (dilated 13) is larger than padded input 11"},
      {"dilated too wide, no pad", with([](ConvProblem& p) { p.pad_w = 0; p.dilation_w = 4; }), "kernel 3 (dilated 9) is larger than padded input 7"},
      {"dilation overflow", with([](ConvProblem& p) { p.dilation_h = kMax; }), "dilated kernel overflows int64"},
      {"padding overflow", with([](ConvProblem& p) { p.pad_h = kMax / 2 + 1; }), "padded input overflows int64"},
      {"input elements overflow", with([](ConvProblem& p) { p.n = kMax / 8; p.c = 16; }), "input elements overflows int64"},
      {"input bytes overflow", with([](ConvProblem& p) { p.n = 1; p.c = 1; p.h = kMax / 4; p.w = 2; p.r = 1; p.s = 1; p.pad_h = 0; p.pad_w = 0; }), "input bytes overflows int64"},
      {"filter elements overflow", with([](ConvProblem& p) { p.k = kMax / 2; p.c = 4; }), "overflows int64"},
      {"output bytes overflow", with([](ConvProblem& p) { p.n = kMax / 3; p.c = 1; p.h = 1; p.w = 1; p.r = 1; p.s = 1; p.pad_h = 0; p.pad_w = 0; p.k = 1; }), "overflows int64"},
      {"several at once", with([](ConvProblem& p) { p.n = 0; p.stride_h = 0; }), "minibatch (mb) must be positive, got 0; stride height (sh) must be positive"},
  };
}

TEST(Problem, ValidationNamesEveryBadValue) {
  const auto cases = invalid_cases();
  ASSERT_GE(cases.size(), 25u);
  for (const InvalidCase& c : cases) {
    try {
      c.problem.validate();
      ADD_FAILURE() << c.label << ": " << c.problem.descriptor() << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_problem) << c.label;
      const std::string message = e.what();
      EXPECT_NE(message.find(c.fragment), std::string::npos)
          << c.label << ": message '" << message << "' lacks '" << c.fragment << "'";
      EXPECT_EQ(message.rfind("invalid problem ", 0), 0u) << message;
    }
  }
}

TEST(Problem, MessageNamesTheProblemDescriptor) {
  ConvProblem p;
  p.n = 1, p.c = 3, p.h = 5, p.w = 5, p.k = 8, p.r = 7, p.s = 7;
  try {
    p.validate();
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("mb1ic3ih5iw5oc8"), std::string::npos) << m;
    EXPECT_NE(m.find("kernel 7 (dilated 7) is larger than padded input 5"), std::string::npos) << m;
  }
}

TEST(Problem, CheckedArithmetic) {
  EXPECT_EQ(checked_mul(1LL << 31, 1LL << 31, "x"), 1LL << 62);
  EXPECT_THROW(checked_mul(1LL << 32, 1LL << 31, "x"), Error);
  EXPECT_THROW(checked_add(kMax, 1, "x"), Error);
  EXPECT_EQ(checked_add(-5, 5, "x"), 0);
}

}  // namespace
}  // namespace convlab
