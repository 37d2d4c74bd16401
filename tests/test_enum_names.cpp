// The shared enum tables: both directions agree, and a bad name fails naming itself.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "convlab/algorithm.hpp"
#include "convlab/enum_names.hpp"
#include "convlab/error.hpp"
#include "convlab/problem.hpp"

namespace {

using convlab::EnumName;

enum class Colour { red, green, blue };
constexpr auto kColours = convlab::enum_names<Colour::blue>({
    {Colour::red, "red"},
    {Colour::green, "green"},
    {Colour::blue, "blue"},
});

// enum_names() refuses (at compile time) what names_cover() rejects; a failing build cannot be
// a test case, so the check itself is tested here.
TEST(EnumNames, CoverRequiresEveryEnumeratorInOrder) {
  static_assert(convlab::names_cover(kColours, Colour::blue));
  constexpr std::array<EnumName<Colour>, 2> missing_last{
      {{Colour::red, "red"}, {Colour::green, "green"}}};
  static_assert(!convlab::names_cover(missing_last, Colour::blue));
  constexpr std::array<EnumName<Colour>, 3> swapped{{
      {Colour::green, "green"},
      {Colour::red, "red"},
      {Colour::blue, "blue"},
  }};
  static_assert(!convlab::names_cover(swapped, Colour::blue));
}

TEST(EnumNames, NameAndValueRoundTrip) {
  for (const auto& entry : kColours) {
    EXPECT_STREQ(convlab::name_of(kColours, entry.value), entry.name);
    EXPECT_EQ(convlab::value_of(kColours, entry.name, "colour"), entry.value);
  }
  EXPECT_STREQ(convlab::name_of(kColours, static_cast<Colour>(7)), "unknown");
  EXPECT_FALSE(convlab::find_value(kColours, "Red").has_value());
}

TEST(EnumNames, UnknownNameIsAnInvalidArgumentNamingIt) {
  try {
    convlab::value_of(kColours, "purple", "colour");
    FAIL() << "no error for an unknown name";
  } catch (const convlab::Error& e) {
    EXPECT_EQ(e.code(), convlab::ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()), "unknown colour 'purple': expected red, green or blue");
  }
}

TEST(EnumNames, LongBadNameIsCutInTheMessage) {
  std::string text(200, 'x');
  try {
    convlab::value_of(kColours, text, "colour");
    FAIL() << "no error for an unknown name";
  } catch (const convlab::Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(std::string(64, 'x')), std::string::npos);
    EXPECT_EQ(message.find(std::string(65, 'x')), std::string::npos);
  }
}

// The library's own tables keep the spellings rows and flags have always used.
TEST(EnumNames, LibraryParsersUseTheirTables) {
  EXPECT_EQ(convlab::parse_pass("bwd_data"), convlab::Pass::backward_data);
  EXPECT_STREQ(convlab::to_string(convlab::Pass::forward), "fwd");
  EXPECT_EQ(convlab::parse_family("fft_tiled"), convlab::Family::fft_tiled);
  try {
    convlab::parse_pass("sideways");
    FAIL() << "no error for an unknown pass";
  } catch (const convlab::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown pass 'sideways': expected fwd, bwd_data or bwd_filter");
  }
}

}  // namespace
