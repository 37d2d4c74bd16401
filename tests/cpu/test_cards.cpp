// The card table (complete, positive, the cards the issue names), lookup and its errors, the
// JSON extension, and byte sizes.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "convlab/cards.hpp"
#include "convlab/error.hpp"

namespace convlab {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kMiB = int64_t{1} << 20;

// Expects `f` to throw Error{code} whose message contains every one of `parts`.
template <class F>
void expect_error(F&& f, ErrorCode code, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const char* part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' not in: " << e.what();
    }
  }
}

TEST(Cards, TheTableHoldsEveryCardTheIssueNames) {
  const char* const wanted[] = {"gtx580",   "gtx680",    "gtx960",    "gtx970",    "gtx980",
                                "gtx980ti", "titan",     "titan-x",   "grid-k520", "t4",
                                "v100",     "a100-40gb", "a100-80gb", "rtx3090",   "rtx4090",
                                "l4",       "h100-sxm",  "h200"};
  for (const char* id : wanted) EXPECT_NE(card_database().find(id), nullptr) << id;
}

TEST(Cards, EveryEntryIsCompleteAndPositive) {
  std::set<std::string> ids;
  for (const Card& c : card_database().all()) {
    SCOPED_TRACE(c.id);
    EXPECT_NO_THROW(c.validate());
    EXPECT_TRUE(ids.insert(c.id).second) << "duplicate id";
    EXPECT_FALSE(c.name.empty());
    EXPECT_GT(c.memory_bytes, 0);
    EXPECT_GT(c.usable_bytes, 0);
    EXPECT_LE(c.usable_bytes, c.memory_bytes);
    // Plausible ranges for 2010-2024 GPUs: catches a unit slip (GB vs GiB is within range,
    // MB/s or GFLOP/s for TFLOP/s is not).
    EXPECT_GE(c.memory_bytes, 1 * kGiB);
    EXPECT_LE(c.memory_bytes, 256 * kGiB);
    EXPECT_GE(c.bandwidth_bytes_per_s, 100e9);
    EXPECT_LE(c.bandwidth_bytes_per_s, 10e12);
    EXPECT_GE(c.fp32_flops_per_s, 1e12);
    EXPECT_LE(c.fp32_flops_per_s, 100e12);
    EXPECT_GE(c.year, 2010);
    EXPECT_LE(c.year, 2024);
    EXPECT_FALSE(c.architecture.empty());
    EXPECT_FALSE(c.source.empty());
  }
}

TEST(Cards, Gtx970Has4GiBOfWhich3AndAHalfRunAtFullSpeed) {
  const Card& c = card_database().get("gtx970");
  EXPECT_EQ(c.memory_bytes, 4 * kGiB);
  EXPECT_EQ(c.usable_bytes, 3584 * kMiB);
  EXPECT_DOUBLE_EQ(c.bandwidth_bytes_per_s, 224e9);
  EXPECT_NEAR(c.fp32_flops_per_s, 3.92e12, 0.01e12);  // 1664 x 2 x 1178 MHz
}

TEST(Cards, DatasheetFiguresOfSomeCurrentCards) {
  EXPECT_DOUBLE_EQ(card_database().get("h200").bandwidth_bytes_per_s, 4.8e12);
  EXPECT_DOUBLE_EQ(card_database().get("a100-80gb").bandwidth_bytes_per_s, 2039e9);
  EXPECT_DOUBLE_EQ(card_database().get("t4").fp32_flops_per_s, 8.1e12);
  EXPECT_EQ(card_database().get("a100-40gb").memory_bytes, 40 * kGiB);
}

TEST(Cards, UnknownIdListsTheKnownOnes) {
  expect_error([] { card_database().get("gtx1080"); }, ErrorCode::invalid_argument,
               {"unknown card 'gtx1080'", "known: gtx580", "h200"});
}

TEST(Cards, SelectTakesAllOrAList) {
  EXPECT_EQ(card_database().select("all").size(), card_database().all().size());
  const auto two = card_database().select("h200, gtx970,h200");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0]->id, "h200");
  EXPECT_EQ(two[1]->id, "gtx970");
  expect_error([] { card_database().select("h200,,t4"); }, ErrorCode::invalid_argument,
               {"empty card id"});
  expect_error([] { card_database().select("h200,nope"); }, ErrorCode::invalid_argument,
               {"unknown card 'nope'"});
}

TEST(CardsJson, AddsAndReplacesCards) {
  CardDatabase db = CardDatabase::builtin();
  const size_t before = db.all().size();
  db.add_json_text(R"j({"cards": [
      {"id": "my-cpu", "name": "Some CPU", "memory": "64GiB", "usable_memory": "60GiB",
       "bandwidth_gbs": 40, "fp32_tflops": 1.5, "architecture": "Zen 3", "year": 2021},
      {"id": "gtx970", "name": "GTX 970 (budget)", "memory": 4294967296,
       "usable_memory": "3GiB", "bandwidth_gbs": 196, "fp32_tflops": 3.5,
       "architecture": "Maxwell", "year": 2014, "source": "my notes"}]})j",
                   "mine.json");
  EXPECT_EQ(db.all().size(), before + 1);
  const Card& cpu = db.get("my-cpu");
  EXPECT_EQ(cpu.memory_bytes, 64 * kGiB);
  EXPECT_EQ(cpu.usable_bytes, 60 * kGiB);
  EXPECT_DOUBLE_EQ(cpu.bandwidth_bytes_per_s, 40e9);
  EXPECT_DOUBLE_EQ(cpu.fp32_flops_per_s, 1.5e12);
  EXPECT_EQ(cpu.source, "mine.json");
  EXPECT_EQ(db.get("gtx970").usable_bytes, 3 * kGiB);
  EXPECT_EQ(db.get("gtx970").source, "my notes");
  // A bare array works too; usable defaults to memory.
  db.add_json_text(R"j([{"id": "x", "name": "X", "memory": "1GiB", "bandwidth_gbs": 1,
                       "fp32_tflops": 1, "architecture": "a", "year": 2020}])j",
                   "array.json");
  EXPECT_EQ(db.get("x").usable_bytes, kGiB);
}

TEST(CardsJson, ReadsTheListCommandsSpellings) {
  CardDatabase db = CardDatabase::builtin();
  const std::string card = R"j({"id": "z", "name": "Z", "memory_bytes": 2147483648,
      "usable_bytes": 1073741824, "bandwidth_gbs": 1, "fp32_tflops": 1, "architecture": "a",
      "year": 2020})j";
  // The other sections of `convbench list --format json` are skipped.
  db.add_json_text(R"j({"algorithms": [], "not_built": [], "suites": [], "cards": [)j" + card +
                       "]}",
                   "list.json");
  EXPECT_EQ(db.get("z").memory_bytes, 2 * kGiB);
  EXPECT_EQ(db.get("z").usable_bytes, kGiB);
  expect_error(
      [&] {
        db.add_json_text(R"j([{"id": "y", "name": "Y", "memory": "1GiB", "memory_bytes": 1,
                              "bandwidth_gbs": 1, "fp32_tflops": 1, "architecture": "a",
                              "year": 2020}])j",
                         "both.json");
      },
      ErrorCode::invalid_argument, {"both.json", "'memory' and 'memory_bytes'"});
  expect_error([&] { db.add_json_text(R"j({"cards": [], "extra": 1})j", "extra.json"); },
               ErrorCode::invalid_argument, {"extra.json", "convbench list --format json"});
}

TEST(CardsJson, BadFilesSayWhereAndWhat) {
  CardDatabase db = CardDatabase::builtin();
  const size_t before = db.all().size();
  const std::string good = R"j("name": "X", "memory": "1GiB", "bandwidth_gbs": 1,
                              "fp32_tflops": 1, "architecture": "a", "year": 2020)j";
  expect_error([&] { db.add_json_text("{not json", "a.json"); }, ErrorCode::invalid_argument,
               {"a.json", "not valid JSON"});
  expect_error([&] { db.add_json_text(R"j({"gpus": []})j", "b.json"); },
               ErrorCode::invalid_argument, {"b.json", "{\"cards\": [...]}"});
  expect_error(
      [&] { db.add_json_text("[{\"id\": \"y\", " + good + ", \"colour\": 1}]", "c.json"); },
      ErrorCode::invalid_argument, {"c.json", "unknown key 'colour'"});
  expect_error([&] { db.add_json_text(R"j([{"id": "y", "name": "Y"}])j", "d.json"); },
               ErrorCode::invalid_argument, {"d.json", "card 'y'", "missing key 'memory'"});
  expect_error(
      [&] {
        db.add_json_text(R"j([{"id": "y", "name": "Y", "memory": "4G", "bandwidth_gbs": 1,
                              "fp32_tflops": 1, "architecture": "a", "year": 2020}])j",
                         "e.json");
      },
      ErrorCode::invalid_argument, {"e.json", "card 'y' memory", "ambiguous"});
  expect_error(
      [&] {
        db.add_json_text(R"j([{"id": "y", "name": "Y", "memory": "1GiB", "usable_memory": "2GiB",
                              "bandwidth_gbs": 1, "fp32_tflops": 1, "architecture": "a",
                              "year": 2020}])j",
                         "f.json");
      },
      ErrorCode::invalid_argument, {"f.json", "usable memory 2.00 GiB exceeds"});
  expect_error(
      [&] {
        db.add_json_text(R"j([{"id": "y", "name": "Y", "memory": "1GiB", "bandwidth_gbs": -3,
                              "fp32_tflops": 1, "architecture": "a", "year": 2020}])j",
                         "g.json");
      },
      ErrorCode::invalid_argument, {"g.json", "bandwidth_gbs", "positive"});
  expect_error([&] { db.add_json_text("[{\"id\": \"Bad Id\", " + good + "}]", "h.json"); },
               ErrorCode::invalid_argument, {"h.json", "lowercase"});
  // A file with one bad card adds none of its cards.
  expect_error(
      [&] { db.add_json_text("[{\"id\": \"ok1\", " + good + "}, {\"id\": 5}]", "i.json"); },
      ErrorCode::invalid_argument, {"i.json", "card 2 id"});
  EXPECT_EQ(db.find("ok1"), nullptr);
  EXPECT_EQ(db.all().size(), before);
  expect_error([&] { db.add_json_file("/nonexistent/cards.json"); }, ErrorCode::io,
               {"/nonexistent/cards.json"});
}

TEST(CardsJson, ReadsAFile) {
  const std::string path = ::testing::TempDir() + "convlab_cards_test.json";
  {
    std::ofstream out(path);
    out << R"j([{"id": "filecard", "name": "F", "memory": "2GB", "bandwidth_gbs": 10,
               "fp32_tflops": 0.5, "architecture": "a", "year": 2019}])j";
  }
  CardDatabase db = CardDatabase::builtin();
  db.add_json_file(path);
  EXPECT_EQ(db.get("filecard").memory_bytes, 2000000000);
  std::remove(path.c_str());
}

TEST(Sizes, ParsesBinaryAndDecimalUnits) {
  EXPECT_EQ(parse_size("3.5GiB"), 3758096384);
  EXPECT_EQ(parse_size("512MiB"), 512 * kMiB);
  EXPECT_EQ(parse_size("8GB"), 8000000000);
  EXPECT_EQ(parse_size("8gb"), 8000000000);
  EXPECT_EQ(parse_size(" 2 GiB "), 2 * kGiB);
  EXPECT_EQ(parse_size("1KiB"), 1024);
  EXPECT_EQ(parse_size("1kB"), 1000);
  EXPECT_EQ(parse_size("1TiB"), int64_t{1} << 40);
  EXPECT_EQ(parse_size("4096"), 4096);
  EXPECT_EQ(parse_size("100B"), 100);
  EXPECT_EQ(parse_size("1.5B"), 1);  // rounded down
}

TEST(Sizes, RejectsAnythingElseQuotingIt) {
  for (const char* bad : {"", "GiB", "-1GB", "1.2.3GB", "1e3GB", "0", "0.5B", "3.5 gigs", "."}) {
    SCOPED_TRACE(bad);
    expect_error([&] { parse_size(bad); }, ErrorCode::invalid_argument,
                 {"invalid size '", "3.5GiB"});
  }
  expect_error([] { parse_size("8G"); }, ErrorCode::invalid_argument,
               {"'8G'", "ambiguous", "GiB (1024)", "GB (1000)"});
  expect_error([] { parse_size("99999999TiB"); }, ErrorCode::invalid_argument, {"too large"});
}

TEST(Sizes, FormatsForPeople) {
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_size(1536), "1.50 KiB");
  EXPECT_EQ(format_size(3584 * kMiB), "3.50 GiB");
  EXPECT_EQ(format_size(0), "0 B");
}

}  // namespace
}  // namespace convlab
