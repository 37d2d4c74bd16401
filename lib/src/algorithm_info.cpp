// The self-description of algorithms and plans, and the knob-validating entry to planning.
#include <string>

#include "convlab/algorithm.hpp"
#include "convlab/error.hpp"

namespace convlab {

const char* to_string(Family family) noexcept {
  switch (family) {
    case Family::reference: return "reference";
    case Family::direct: return "direct";
    case Family::gemm: return "gemm";
    case Family::fft: return "fft";
    case Family::fft_tiled: return "fft_tiled";
    case Family::winograd: return "winograd";
    case Family::vendor: return "vendor";
  }
  return "?";
}

Family parse_family(std::string_view text) {
  for (Family f : {Family::reference, Family::direct, Family::gemm, Family::fft, Family::fft_tiled,
                   Family::winograd, Family::vendor}) {
    if (text == to_string(f)) return f;
  }
  throw Error(ErrorCode::invalid_argument,
              "unknown algorithm family '" + std::string(text.substr(0, 64)) +
                  "': expected reference, direct, gemm, fft, fft_tiled, winograd or vendor");
}

const char* to_string(MathMode mode) noexcept {
  switch (mode) {
    case MathMode::fp32: return "fp32";
    case MathMode::tf32: return "tf32";
  }
  return "?";
}

std::string PlanInfo::format_workspace_split() const {
  std::string text;
  for (const auto& [part, bytes] : workspace_split) {
    if (!text.empty()) text += ';';
    text += part + "=" + std::to_string(bytes);
  }
  return text;
}

std::string PlanInfo::describe() const {
  std::string text;
  auto add = [&](const std::string& piece) {
    if (piece.empty()) return;
    if (!text.empty()) text += ", ";
    text += piece;
  };
  add(kernel);
  add(transform);
  if (!tile.empty()) add("tile " + tile);
  for (const auto& [name, value] : details) add(name + " " + value);
  add(std::string("math ") + to_string(math_mode));
  return text;
}

std::unique_ptr<Plan> Algorithm::plan(const ConvProblem& problem, Pass pass,
                                      const KnobValues& knobs) const {
  const AlgorithmInfo& description = info();
  KnobValues resolved = resolve_knobs(description.name, description.knobs, knobs);
  std::unique_ptr<Plan> made = make_plan(problem, pass, resolved);
  made->info_.knobs = std::move(resolved);
  made->algorithm_bound_ = error_bound(problem, pass);
  return made;
}

}  // namespace convlab
