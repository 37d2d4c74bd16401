// The progress line (output/progress.hpp).
#include "output/progress.hpp"

#include <chrono>
#include <cstdio>
#include <string>

namespace convbench {

namespace {

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  }
  return text;
}

class ProgressReporter final : public Reporter {
 public:
  explicit ProgressReporter(std::size_t cases) : total_(cases) {}
  void begin(const Context&, const std::vector<Case>&) override {
    start_ = std::chrono::steady_clock::now();
  }
  void case_started(const Case& c) override {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string left = "?";
    if (done_ > 0) left = "~" + clock_text(elapsed / done_ * (total_ - done_));
    const std::string layer = c.layer.name.empty() ? c.layer.problem.descriptor() : c.layer.name;
    std::fprintf(stderr, "\r[%zu/%zu] %s %s %s  elapsed %s  left %s\033[K", done_ + 1, total_,
                 layer.c_str(), convlab::to_string(c.pass), c.algorithm->name().c_str(),
                 clock_text(elapsed).c_str(), left.c_str());
    std::fflush(stderr);
  }
  void add(const Row& row) override {
    if (row.algorithm != "select") ++done_;
  }
  void end(const Summary&) override {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }

 private:
  std::size_t total_, done_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

std::unique_ptr<Reporter> make_progress_reporter(std::size_t cases) {
  return std::make_unique<ProgressReporter>(cases);
}

}  // namespace convbench
