// The progress line (output/progress.hpp).
#include "output/progress.hpp"

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
  explicit ProgressReporter(std::size_t cases) : total_(cases), line_(true) {}
  void begin(const Context&, const std::vector<Case>&) override { line_ = ProgressLine(true); }
  void case_started(const Case& c) override {
    std::optional<double> left;
    if (done_ > 0) left = line_.elapsed_s() / done_ * (total_ - done_);
    const std::string layer = c.layer.name.empty() ? c.layer.problem.descriptor() : c.layer.name;
    line_.show("[" + std::to_string(done_ + 1) + "/" + std::to_string(total_) + "] " + layer + " " +
                   convlab::to_string(c.pass) + " " + c.algorithm->name(),
               left);
  }
  void add(const Row& row) override {
    if (row.algorithm != "select") ++done_;
  }
  void end(const Summary&) override { line_.clear(); }

 private:
  std::size_t total_, done_ = 0;
  ProgressLine line_;
};

}  // namespace

ProgressLine::ProgressLine(bool shown) : shown_(shown), start_(std::chrono::steady_clock::now()) {}

double ProgressLine::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressLine::show(const std::string& what, std::optional<double> left_s) {
  if (!shown_) return;
  const std::string left = left_s ? "  left ~" + clock_text(*left_s) : std::string("  left ?");
  std::fprintf(stderr, "\r%s  elapsed %s%s\033[K", what.c_str(), clock_text(elapsed_s()).c_str(),
               left.c_str());
  std::fflush(stderr);
}

void ProgressLine::clear() {
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

std::unique_ptr<Reporter> make_progress_reporter(std::size_t cases) {
  return std::make_unique<ProgressReporter>(cases);
}

}  // namespace convbench
