#include "convlab/registry.hpp"

#include <algorithm>

#include "backends.hpp"
#include "convlab/config.hpp"
#include "convlab/error.hpp"

namespace convlab {

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with one backtrack point per '*': linear in practice, no recursion.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

void Registry::add(std::unique_ptr<Algorithm> algorithm) {
  const std::string name = algorithm->name();
  for (const auto& a : algorithms_) {
    if (a->name() == name) {
      throw Error(ErrorCode::invalid_argument, "algorithm '" + name + "' registered twice");
    }
  }
  algorithms_.push_back(std::move(algorithm));
}

void Registry::add_missing(MissingAlgorithm missing) { missing_.push_back(std::move(missing)); }

std::string Registry::known_names() const {
  std::string names;
  for (const auto& a : algorithms_) {
    if (!names.empty()) names += ", ";
    names += a->name();
  }
  return names;
}

static std::string missing_note(const Registry& registry, std::string_view name) {
  for (const auto& m : registry.missing()) {
    if (glob_match(m.name, name)) return " (" + m.name + ": " + m.reason + ")";
  }
  return {};
}

const Algorithm& Registry::get(std::string_view name) const {
  for (const auto& a : algorithms_) {
    if (a->name() == name) return *a;
  }
  throw Error(ErrorCode::invalid_argument, "unknown algorithm '" + std::string(name) + "'" +
                                               missing_note(*this, name) +
                                               "; known: " + known_names());
}

std::vector<const Algorithm*> Registry::match(std::string_view globs) const {
  std::vector<const Algorithm*> result;
  size_t start = 0;
  while (start <= globs.size()) {
    size_t end = globs.find(',', start);
    if (end == std::string_view::npos) end = globs.size();
    std::string_view glob = globs.substr(start, end - start);
    if (glob.empty()) {
      throw Error(ErrorCode::invalid_argument,
                  "empty algorithm name in '" + std::string(globs) + "'; known: " + known_names());
    }
    bool any = false;
    for (const auto& a : algorithms_) {
      if (glob_match(glob, a->name())) {
        any = true;
        if (std::find(result.begin(), result.end(), a.get()) == result.end()) {
          result.push_back(a.get());
        }
      }
    }
    if (!any) {
      throw Error(ErrorCode::invalid_argument, "no algorithm matches '" + std::string(glob) +
                                                   "'" + missing_note(*this, glob) +
                                                   "; known: " + known_names());
    }
    start = end + 1;
  }
  return result;
}

std::vector<const Algorithm*> Registry::all() const {
  std::vector<const Algorithm*> result;
  for (const auto& a : algorithms_) result.push_back(a.get());
  return result;
}

static Registry make_registry() {
  Registry r;
  register_reference(r);
  register_cpu_im2col(r);
#if CONVLAB_HAVE_FFTW
  register_cpu_fft(r);
#else
  r.add_missing({"cpu.fft", "not built: FFTW (libfftw3-dev) was not found at configure time"});
#endif
#if CONVLAB_HAVE_ONEDNN
  register_cpu_onednn(r);
#else
  r.add_missing({"cpu.onednn", "not built: oneDNN (libdnnl-dev) was not found at configure time"});
#endif
#if CONVLAB_HAVE_CUDA
  register_cuda(r);
#else
  r.add_missing({"cuda.*", "not built: no CUDA compiler/toolkit at configure time"});
#endif
#if CONVLAB_HAVE_CUDNN
  register_cudnn(r);
#else
  r.add_missing({"cudnn.*", "not built: cuDNN 9 (with CUDA) was not found at configure time"});
#endif
  return r;
}

const Registry& registry() {
  static const Registry instance = make_registry();
  return instance;
}

}  // namespace convlab
