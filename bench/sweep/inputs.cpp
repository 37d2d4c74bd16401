#include "sweep/inputs.hpp"

#include <limits>

#include "options/cli.hpp"
#include "convlab/error.hpp"

namespace convbench {

namespace {

int64_t parse_index(const std::string& text, const std::string& whole) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError("--fill '" + whole + "': the index after '@' must be a number >= 0");
  }
  return std::stoll(text);
}

}  // namespace

FillSpec parse_fill(const std::string& text) {
  FillSpec spec;
  spec.text = text;
  if (text == "random") return spec;
  if (text == "integers") {
    spec.fill = convlab::Fill::integers;
    return spec;
  }
  const size_t at = text.find('@');
  const std::string kind = text.substr(0, at);
  if (at != std::string::npos && (kind == "nan" || kind == "inf")) {
    spec.poison = kind == "nan" ? FillSpec::Poison::nan : FillSpec::Poison::inf;
    spec.index = parse_index(text.substr(at + 1), text);
    return spec;
  }
  throw UsageError("--fill '" + text + "': expected random, integers, nan@INDEX or inf@INDEX");
}

int64_t first_input_elements(const convlab::ConvProblem& p, convlab::Pass pass) {
  return pass == convlab::Pass::backward_data ? p.n * p.k * p.out_h() * p.out_w()
                                              : p.n * p.c * p.h * p.w;
}

void check_fill_fits(const FillSpec& fill, const std::vector<Case>& cases) {
  if (fill.poison == FillSpec::Poison::none) return;
  for (const Case& c : cases) {
    const int64_t elements = first_input_elements(c.layer.problem, c.pass);
    if (fill.index < elements) continue;
    throw UsageError("--fill " + fill.text + ": element " + std::to_string(fill.index) +
                     " is past the end of the first input of " + c.layer.problem.descriptor() +
                     " " + convlab::to_string(c.pass) + " (" +
                     (c.pass == convlab::Pass::backward_data ? "dy" : "x") + ", " +
                     std::to_string(elements) + " elements)");
  }
}

bool InputCache::holds(const Case& c) const {
  return key_ && *key_ == c.layer.problem.descriptor() + " " + convlab::to_string(c.pass);
}

uint64_t InputCache::seed_of(const Case& c) const {
  return case_seed(seed_, c.layer.problem, c.pass);
}

const convlab::HostTensors& InputCache::get(const Case& c) {
  const std::string key = c.layer.problem.descriptor() + " " + convlab::to_string(c.pass);
  if (key_ && *key_ == key) return tensors_;
  key_.reset();  // a throwing make_inputs must not leave a stale entry behind
  tensors_ = {};  // freed before the next are made, so that two layers' inputs never coexist
  tensors_ = convlab::make_inputs(c.layer.problem, c.pass, seed_of(c), fill_.fill);
  if (fill_.poison != FillSpec::Poison::none) {
    std::vector<float>& first = c.pass == convlab::Pass::backward_data ? tensors_.y : tensors_.x;
    if (fill_.index >= static_cast<int64_t>(first.size())) {
      throw convlab::Error(convlab::ErrorCode::invalid_argument,
                           "--fill " + fill_.text + ": the first input has only " +
                               std::to_string(first.size()) + " elements");
    }
    first[static_cast<size_t>(fill_.index)] = fill_.poison == FillSpec::Poison::nan
                                                  ? std::numeric_limits<float>::quiet_NaN()
                                                  : std::numeric_limits<float>::infinity();
  }
  key_ = key;
  return tensors_;
}

}  // namespace convbench
