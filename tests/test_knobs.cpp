// Knob schemas: validation, canonical text, environment defaults, and docs/knobs.md against
// the knobs the registered algorithms declare.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "convlab/error.hpp"
#include "convlab/knobs.hpp"
#include "convlab/registry.hpp"

namespace convlab {
namespace {

std::vector<KnobSpec> schema() {
  return {integer_knob("images", "auto", 1, 64, true, "", "images"),
          choice_knob("mode", "fast", {"fast", "Exact"}, "", "mode"),
          boolean_knob("tf32", false, "", "tf32"),
          bytes_knob("scratch", "0", false, "CONVLAB_TEST_KNOB_SCRATCH", "scratch")};
}

std::string error_of(const KnobValues& given) {
  try {
    resolve_knobs("test.algo", schema(), given);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    return e.what();
  }
  return "";
}

TEST(Knobs, DefaultsAndCanonicalText) {
  const KnobValues d = resolve_knobs("test.algo", schema(), {});
  EXPECT_EQ(format_knobs(d), "images=auto,mode=fast,scratch=0,tf32=false");
  const KnobValues v =
      resolve_knobs("test.algo", schema(),
                    {{"images", "007"}, {"mode", "EXACT"}, {"tf32", "On"}, {"scratch", "2KiB"}});
  EXPECT_EQ(v.at("images"), "7");
  EXPECT_EQ(v.at("mode"), "Exact");  // the schema's spelling
  EXPECT_EQ(v.at("tf32"), "true");
  EXPECT_EQ(v.at("scratch"), "2048");
  EXPECT_EQ(knob_integer(v, "images"), 7);
  EXPECT_EQ(knob_integer(d, "images"), std::nullopt);
  EXPECT_EQ(knob_bytes(v, "scratch"), 2048u);
  EXPECT_TRUE(knob_boolean(v, "tf32"));
  EXPECT_EQ(parse_knobs(format_knobs(v)), v);
  EXPECT_THROW(knob_text(v, "absent"), Error);
}

TEST(Knobs, BadValuesNameTheKnobAndTheValue) {
  for (const auto& [given, expected] : std::vector<std::pair<KnobValues, std::string>>{
           {{{"images", "65"}}, "'65' for knob test.algo.images"},
           {{{"images", "0"}}, "'0' for knob test.algo.images"},
           {{{"images", "3x"}}, "'3x' for knob test.algo.images"},
           {{{"mode", "slow"}}, "'slow' for knob test.algo.mode: expected one of fast, Exact"},
           {{{"tf32", "maybe"}}, "'maybe' for knob test.algo.tf32"},
           {{{"scratch", "lots"}}, "'lots' for knob test.algo.scratch"},
           {{{"tile", "4"}}, "algorithm test.algo has no knob 'tile'; its knobs: images, mode"}}) {
    EXPECT_NE(error_of(given).find(expected), std::string::npos) << error_of(given);
  }
  EXPECT_THROW(parse_knobs("a=1,b"), Error);
}

TEST(Knobs, EnvironmentSuppliesDefaultsAndIsRecorded) {
  ASSERT_EQ(setenv("CONVLAB_TEST_KNOB_SCRATCH", "1MiB", 1), 0);
  EXPECT_EQ(resolve_knobs("test.algo", schema(), {}).at("scratch"), "1048576");
  EXPECT_EQ(resolve_knobs("test.algo", schema(), {{"scratch", "0"}}).at("scratch"), "0");
  bool recorded = false;
  for (const auto& [name, value] : environment_defaults_used()) {
    recorded |= name == "CONVLAB_TEST_KNOB_SCRATCH" && value == "1MiB";
  }
  EXPECT_TRUE(recorded);
  ASSERT_EQ(setenv("CONVLAB_TEST_KNOB_SCRATCH", "huge", 1), 0);
  const std::string e = error_of({});
  EXPECT_NE(e.find("(from environment variable CONVLAB_TEST_KNOB_SCRATCH)"), std::string::npos)
      << e;
  unsetenv("CONVLAB_TEST_KNOB_SCRATCH");
}

// The rows of docs/knobs.md's table, by (algorithm cell, knob).
std::map<std::pair<std::string, std::string>, std::vector<std::string>> documented() {
  std::ifstream in(std::string(CONVLAB_SOURCE_DIR) + "/docs/knobs.md");
  EXPECT_TRUE(in) << "docs/knobs.md missing";
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream s(line.substr(1));
    std::string cell;
    while (std::getline(s, cell, '|')) {
      const auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    if (cells.size() < 7 || cells[1].empty() || cells[1][0] != '`') continue;
    rows[{cells[0], cells[1].substr(1, cells[1].size() - 2)}] = cells;
  }
  return rows;
}

TEST(Knobs, DocsListEveryKnobOfEveryAlgorithm) {
  const auto rows = documented();
  int checked = 0;
  for (const Algorithm* a : registry().all()) {
    for (const KnobSpec& k : a->info().knobs) {
      const std::string own = "`" + a->name() + "`";
      const std::string row_key =
          a->device() == Device::gpu && (k.name == "device" || k.name == "allow_tf32")
              ? "every GPU algorithm"
              : own;
      auto it = rows.find({row_key, k.name});
      if (it == rows.end()) {
        for (const auto& [key, cells] : rows) {
          if (key.second == k.name && key.first.find(own) != std::string::npos) it = rows.find(key);
        }
      }
      ASSERT_NE(it, rows.end()) << a->name() << "." << k.name << " is not in docs/knobs.md";
      const std::vector<std::string>& cells = it->second;
      EXPECT_EQ(cells[2], to_string(k.type)) << a->name() << "." << k.name;
      // A default that depends on the build is documented as "`full` (`other` without X)":
      // this build's declared default must be one of the two.
      const std::string quoted = "`" + k.default_value + "`";
      EXPECT_TRUE(cells[3].rfind(quoted, 0) == 0 ||
                  cells[3].find("(" + quoted + " without ") != std::string::npos)
          << a->name() << "." << k.name << ": documented default " << cells[3] << ", declared "
          << k.default_value;
      EXPECT_EQ(cells[5], k.environment_default.empty() ? "" : "`" + k.environment_default + "`")
          << a->name() << "." << k.name;
      ++checked;
    }
  }
  EXPECT_GE(checked, 3);  // cpu.im2col is in every build
}

}  // namespace
}  // namespace convlab
