// The self-description of algorithms and plans, and the knob-validating entry to planning.
#include <array>
#include <string>

#include "convlab/algorithm.hpp"
#include "convlab/enum_names.hpp"
#include "convlab/error.hpp"

namespace convlab {

constexpr auto kFamilyNames = enum_names<Family::vendor>({
    {Family::reference, "reference"},
    {Family::direct, "direct"},
    {Family::gemm, "gemm"},
    {Family::fft, "fft"},
    {Family::fft_tiled, "fft_tiled"},
    {Family::winograd, "winograd"},
    {Family::vendor, "vendor"},
});

const char* to_string(Family family) noexcept { return name_of(kFamilyNames, family); }

Family parse_family(std::string_view text) {
  return value_of(kFamilyNames, text, "algorithm family");
}

constexpr auto kMathModeNames = enum_names<MathMode::tf32>({
    {MathMode::fp32, "fp32"},
    {MathMode::tf32, "tf32"},
});

const char* to_string(MathMode mode) noexcept { return name_of(kMathModeNames, mode); }

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
