// The registry: lookup by name and glob, clear errors for unknown names.
#include <gtest/gtest.h>

#include <string>

#include "convlab/error.hpp"
#include "convlab/registry.hpp"

namespace convlab {
namespace {

TEST(Registry, FindsTheReferenceByName) {
  const Algorithm& ref = registry().get("reference");
  EXPECT_EQ(ref.name(), "reference");
  EXPECT_EQ(ref.device(), Device::cpu);
  EXPECT_TRUE(ref.deterministic());
}

TEST(Registry, UnknownNameListsTheKnownOnes) {
  try {
    registry().get("cpu.no_such_algorithm");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown algorithm 'cpu.no_such_algorithm'"), std::string::npos) << m;
    EXPECT_NE(m.find("known: reference"), std::string::npos) << m;
  }
}

TEST(Registry, GlobsMatchInRegistrationOrderWithoutDuplicates) {
  const auto all = registry().match("*");
  EXPECT_EQ(all.size(), registry().all().size());
  const auto some = registry().match("reference,ref*");
  ASSERT_EQ(some.size(), 1u);
  EXPECT_EQ(some[0]->name(), "reference");
  EXPECT_THROW(registry().match("nothing.*"), Error);
  EXPECT_THROW(registry().match("reference,,"), Error);
}

TEST(Registry, GlobMatcher) {
  EXPECT_TRUE(glob_match("cpu.*", "cpu.fft"));
  EXPECT_TRUE(glob_match("*fft", "cuda.fft"));
  EXPECT_TRUE(glob_match("c?u.*", "cpu.im2col"));
  EXPECT_FALSE(glob_match("cpu.*", "cuda.fft"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("?", ""));
  EXPECT_TRUE(glob_match("a*b*c", "axxbyyc"));
  EXPECT_FALSE(glob_match("a*b*c", "axxbyy"));
}

TEST(Registry, EveryAlgorithmDescribesItself) {
  for (const Algorithm* a : registry().all()) {
    EXPECT_FALSE(a->name().empty());
    EXPECT_FALSE(a->description().empty()) << a->name();
    const Support s = a->available();
    if (!s) {
      EXPECT_FALSE(s.reason.empty()) << a->name();
    }
  }
  for (const MissingAlgorithm& m : registry().missing()) {
    EXPECT_FALSE(m.reason.empty()) << m.name;
  }
}

}  // namespace
}  // namespace convlab
