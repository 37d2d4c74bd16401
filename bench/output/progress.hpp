#pragma once
// The progress line of a sweep on stderr.

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "output/reporters.hpp"

namespace convbench {

/// The one progress line on stderr, rewritten in place: what is going on, the time since the
/// line was made and, when known, the time left. Draws nothing unless `shown` (a terminal).
class ProgressLine {
 public:
  explicit ProgressLine(bool shown);
  void show(const std::string& what, std::optional<double> left_s = std::nullopt);
  void clear();
  double elapsed_s() const;
  bool shown() const { return shown_; }

 private:
  bool shown_;
  std::chrono::steady_clock::time_point start_;
};

/// The progress of a sweep in this process: case i/n, layer, pass, algorithm, elapsed,
/// estimated remaining. Only made when stderr is a terminal.
std::unique_ptr<Reporter> make_progress_reporter(std::size_t cases);

}  // namespace convbench
