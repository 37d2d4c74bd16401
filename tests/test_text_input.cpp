// split_list: the one comma-list splitter behind --algos, --passes, --cards and --devices.
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "convlab/text_input.hpp"

namespace {

using Items = std::vector<std::string_view>;

TEST(SplitList, KeepsOrderAndSpaces) {
  EXPECT_EQ(convlab::split_list("fwd,bwd_data, bwd_filter"),
            (Items{"fwd", "bwd_data", " bwd_filter"}));
  EXPECT_EQ(convlab::split_list("one"), (Items{"one"}));
}

// Callers reject empty items in their own words, so the splitter must hand every one over.
TEST(SplitList, KeepsEmptyItems) {
  EXPECT_EQ(convlab::split_list(""), (Items{""}));
  EXPECT_EQ(convlab::split_list("a,"), (Items{"a", ""}));
  EXPECT_EQ(convlab::split_list(",a,,b"), (Items{"", "a", "", "b"}));
}

}  // namespace
