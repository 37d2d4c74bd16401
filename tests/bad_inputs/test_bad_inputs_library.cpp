// The library half of the bad-input corpus: every case of library_cases.json must throw a
// convlab::Error with the listed code and a message naming the offending value; and, over
// every algorithm in the registry, invalid problems, unsupported cases and bad run arguments
// are refused with the right code before anything is computed. The convbench half is
// run_cli_cases.py (cli_cases.json).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <typeinfo>
#include <vector>

#include "convlab/cards.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/registry.hpp"
#include "support/conv_tester.hpp"

#ifndef CONVLAB_BAD_INPUTS_DIR
#error "CONVLAB_BAD_INPUTS_DIR must be defined by the build"
#endif

namespace convlab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const json& cases() {
  static const json table = [] {
    std::ifstream in(std::string(CONVLAB_BAD_INPUTS_DIR) + "/library_cases.json");
    if (!in) throw std::runtime_error("cannot read library_cases.json");
    return json::parse(in)["cases"];
  }();
  return table;
}

// The shape-file fixtures, made once in a fresh folder.
class Fixtures {
 public:
  Fixtures() {
    dir_ = fs::temp_directory_path() / ("convlab_bad_inputs_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    write("empty", "");
    write("comments_only", "# nothing but comments\n\n   # and blanks\n");
    write("binary", std::string("ic3ih5oc8kh3\n\x00\x01\x02\xff", 17));
    write("bad_line", "ic3ih5oc8kh3\nic3ih5oc8kh3xx1\n");
    write("unreadable", "ic3ih5oc8kh3\n");
    ::chmod(path("unreadable").c_str(), 0);
    fs::create_directories(dir_ / "directory");
    // 100 MB without writing them: a sparse file reads back as zeros.
    write("huge", "");
    fs::resize_file(dir_ / "huge", std::uintmax_t{100} << 20);
    write("huge_cards", "[");
    fs::resize_file(dir_ / "huge_cards", std::uintmax_t{100} << 20);
  }
  ~Fixtures() {
    std::error_code ec;
    fs::permissions(dir_ / "unreadable", fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const {
    if (name == "dev_zero") return "/dev/zero";  // a file without an end
    return name == "missing" ? (dir_ / "no_such_file").string() : (dir_ / name).string();
  }
  // Whether this process can read a mode-000 file anyway (root can).
  bool permissions_bind() const { return ::access(path("unreadable").c_str(), R_OK) != 0; }

 private:
  void write(const std::string& name, const std::string& content) {
    std::ofstream(dir_ / name, std::ios::binary) << content;
  }
  fs::path dir_;
};

const Fixtures& fixtures() {
  static const Fixtures f;
  return f;
}

ConvProblem problem_from(const json& fields) {
  ConvProblem p = parse_descriptor("mb2ic4ih8oc4kh3").problem;  // a valid base
  auto set = [&](const char* key, int64_t& field) {
    if (fields.contains(key)) field = fields[key].get<int64_t>();
  };
  set("n", p.n), set("c", p.c), set("h", p.h), set("w", p.w), set("k", p.k), set("r", p.r);
  set("s", p.s), set("pad_h", p.pad_h), set("pad_w", p.pad_w), set("stride_h", p.stride_h);
  if (fields.contains("pad_h_end")) p.pad_h_end = fields["pad_h_end"].get<int64_t>();
  if (fields.contains("pad_w_end")) p.pad_w_end = fields["pad_w_end"].get<int64_t>();
  set("stride_w", p.stride_w), set("dilation_h", p.dilation_h);
  set("dilation_w", p.dilation_w), set("groups", p.groups);
  return p;
}

// Runs one case; returns normally only if it threw nothing.
void invoke(const json& c) {
  const std::string call = c["call"];
  // "input_parts": [[text, times], ...] spells an input too long to write out (deep nesting).
  std::string input = c.value("input", "");
  if (c.contains("input_parts")) {
    for (const auto& part : c["input_parts"]) {
      for (int64_t i = 0; i < part[1].get<int64_t>(); ++i) input += part[0].get<std::string>();
    }
  }
  if (call == "parse_descriptor") {
    parse_descriptor(input);
  } else if (call == "validate") {
    problem_from(c["problem"]).validate();
  } else if (call == "parse_shape_text") {
    parse_shape_text(input, "layers.txt");
  } else if (call == "read_shape_file") {
    const std::string file = c["file"];
    if (file == "unreadable" && !fixtures().permissions_bind()) {
      GTEST_SKIP() << "this process reads a mode-000 file anyway (root): case not testable";
    }
    read_shape_file(fixtures().path(file));
  } else if (call == "parse_pass") {
    parse_pass(input);
  } else if (call == "registry_get") {
    registry().get(input);
  } else if (call == "registry_match") {
    registry().match(input);
  } else if (call == "parse_size") {
    parse_size(input);
  } else if (call == "card_get") {
    card_database().get(input);
  } else if (call == "cards_json") {
    CardDatabase db = CardDatabase::builtin();
    db.add_json_text(input, "cards.json");
  } else if (call == "cards_file") {
    CardDatabase db = CardDatabase::builtin();
    db.add_json_file(fixtures().path(c["file"]));
  } else if (call == "parse_measured_times") {
    parse_measured_times(input, "sweep.csv");
  } else if (call == "host_allocate") {
    const std::size_t bytes = std::stoull(c["bytes"].get<std::string>());
    void* p = host_context().allocate(bytes);
    host_context().deallocate(p);
  } else if (call == "make_inputs") {
    make_inputs(parse_descriptor(input).problem, Pass::forward, 1);
  } else if (call == "plan") {
    const std::string algorithm = c["algorithm"], pass = c["pass"];
    CONVLAB_SKIP_UNLESS_BUILT(algorithm);
    registry().get(algorithm).plan(parse_descriptor(input).problem, parse_pass(pass));
  } else if (call == "check_host_memory") {
    check_host_memory(std::stoll(c["bytes"].get<std::string>()), "this check");
  } else {
    FAIL() << "unknown call '" << call << "' in library_cases.json";
  }
}

class LibraryCase : public ::testing::TestWithParam<std::size_t> {};

TEST_P(LibraryCase, ThrowsTheListedErrorNamingTheValue) {
  const json& c = cases()[GetParam()];
  SCOPED_TRACE(c.dump());
  try {
    invoke(c);
  } catch (const Error& e) {
    EXPECT_STREQ(to_string(e.code()), c["code"].get<std::string>().c_str()) << e.what();
    for (const auto& name : c["names"]) {
      EXPECT_NE(std::string(e.what()).find(name.get<std::string>()), std::string::npos)
          << "the message does not contain \"" << name.get<std::string>() << "\": " << e.what();
    }
    return;
  } catch (const std::exception& e) {
    FAIL() << "threw a " << typeid(e).name() << ", not a convlab::Error: " << e.what();
  }
  if (!::testing::Test::IsSkipped()) FAIL() << "no error was thrown";
}

std::string case_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return cases()[info.param]["name"].get<std::string>();
}

std::vector<std::size_t> case_indices() {
  std::vector<std::size_t> indices(cases().size());
  for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = i;
  return indices;
}

INSTANTIATE_TEST_SUITE_P(Corpus, LibraryCase, ::testing::ValuesIn(case_indices()), case_name);

TEST(LibraryCorpus, HasAtLeastSixtyCasesWithUniqueNames) {
  std::set<std::string> names;
  for (const auto& c : cases()) EXPECT_TRUE(names.insert(c["name"]).second) << c["name"];
  EXPECT_GE(cases().size(), 60u);
}

// Invalid problems, one per kind of fault, as ConvProblem values (not via the parser).
std::vector<ConvProblem> invalid_problems() {
  std::vector<ConvProblem> problems;
  for (const auto& c : cases()) {
    if (c["call"] == "validate") problems.push_back(problem_from(c["problem"]));
  }
  ConvProblem base = parse_descriptor("mb2ic4ih8oc4kh3").problem;
  ConvProblem p = base;
  p.groups = 3;  // 4 channels
  problems.push_back(p);
  p = base;
  p.r = 11;  // larger than the input
  problems.push_back(p);
  p = base;
  p.stride_w = 0;
  problems.push_back(p);
  p = base;
  p.n = int64_t{1} << 62;  // tensors overflow
  problems.push_back(p);
  return problems;
}

// Every algorithm refuses an invalid problem in supports() and plan() with invalid_problem
// (an algorithm that cannot run here may say unavailable instead), and never crashes.
TEST(EveryAlgorithm, RefusesInvalidProblems) {
  for (const Algorithm* algorithm : registry().all()) {
    const bool available = static_cast<bool>(algorithm->available());
    for (const ConvProblem& p : invalid_problems()) {
      for (Pass pass : testing::all_passes()) {
        SCOPED_TRACE(algorithm->name() + " " + to_string(pass) + " " + p.descriptor());
        auto expect_refused = [&](const char* what, auto&& call) {
          try {
            call();
            ADD_FAILURE() << what << " accepted an invalid problem";
          } catch (const Error& e) {
            const bool ok = e.code() == ErrorCode::invalid_problem ||
                            (!available && e.code() == ErrorCode::unavailable);
            EXPECT_TRUE(ok) << what << " threw " << to_string(e.code()) << ": " << e.what();
          }
        };
        expect_refused("supports()", [&] { (void)algorithm->supports(p, pass); });
        expect_refused("plan()", [&] { (void)algorithm->plan(p, pass); });
      }
    }
  }
}

// A case supports() declines is refused by plan() with Error{unsupported} and the reason.
TEST(EveryAlgorithm, PlanRefusesWhatSupportsDeclines) {
  int declined = 0;
  for (const Algorithm* algorithm : registry().all()) {
    if (!algorithm->available()) continue;
    for (const ConvProblem& p : testing::edge_cases()) {
      for (Pass pass : testing::all_passes()) {
        const Support s = algorithm->supports(p, pass);
        if (s) continue;
        ++declined;
        SCOPED_TRACE(algorithm->name() + " " + to_string(pass) + " " + p.descriptor());
        EXPECT_FALSE(s.reason.empty());
        try {
          (void)algorithm->plan(p, pass);
          ADD_FAILURE() << "plan() accepted a case supports() declines: " << s.reason;
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ErrorCode::unsupported) << e.what();
        }
      }
    }
  }
  if (declined == 0) GTEST_SKIP() << "no algorithm declines an edge case: nothing to check";
  std::cout << "declined (algorithm, edge case, pass) triples checked: " << declined << "\n";
}

// Plan::run refuses null tensors and a short or null workspace, naming the algorithm, and
// writes nothing before it does (the output keeps its poison).
TEST(EveryCpuAlgorithm, RunRefusesBadArguments) {
  const ConvProblem p = parse_descriptor("mb2ic4ih9iw7oc6kh3kw2ph1").problem;
  for (const Algorithm* algorithm : registry().all()) {
    if (algorithm->device() != Device::cpu || !algorithm->available()) continue;
    for (Pass pass : testing::all_passes()) {
      if (!algorithm->supports(p, pass)) continue;
      SCOPED_TRACE(algorithm->name() + " " + to_string(pass));
      auto plan = algorithm->plan(p, pass);
      HostTensors host = make_inputs(p, pass, 7);
      const std::size_t ws = plan->workspace_bytes();
      std::vector<unsigned char> scratch(ws + 1);
      const Tensors good{host.x.data(), host.w.data(), host.y.data()};
      const Workspace workspace{scratch.data(), ws};
      auto expect_refused = [&](const std::string& what, Tensors t, Workspace w) {
        try {
          plan->run(t, w);
          ADD_FAILURE() << what << ": run() accepted it";
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << what << ": " << e.what();
          EXPECT_NE(std::string(e.what()).find(algorithm->name()), std::string::npos)
              << what << ": the message does not name the algorithm: " << e.what();
        }
        for (float v : host.output(pass)) ASSERT_TRUE(std::isnan(v)) << what << " wrote output";
      };
      expect_refused("null x", {nullptr, good.w, good.y}, workspace);
      expect_refused("null w", {good.x, nullptr, good.y}, workspace);
      expect_refused("null y", {good.x, good.w, nullptr}, workspace);
      if (ws > 0) {
        expect_refused("workspace one byte short", good, {scratch.data(), ws - 1});
        expect_refused("null workspace", good, {nullptr, ws});
      }
    }
  }
}

TEST(HostMemory, IsReadAndLimitsBelowRam) {
  const HostMemory m = host_memory();
  EXPECT_GT(m.total, 0);
  EXPECT_GT(m.available, 0);
  EXPECT_LE(m.limit(), m.total);
  EXPECT_LE(m.limit(), m.available);
  EXPECT_NO_THROW(check_host_memory(1 << 20, "one MiB"));
}

}  // namespace
}  // namespace convlab
