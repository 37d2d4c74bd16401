#include "convlab/registry.hpp"

#include <algorithm>
#include <mutex>

#include "convlab/error.hpp"
#include "convlab/text_input.hpp"

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

namespace {

// Whether some name matched by `glob` could start with `prefix`: compares the glob's literal
// head (up to its first wildcard) with the prefix. Errs towards yes, never towards no, so a
// deferred module is never skipped when it could have answered.
bool could_start_with(std::string_view glob, std::string_view prefix) {
  const size_t wildcard = glob.find_first_of("*?");
  const std::string_view head = glob.substr(0, wildcard);
  const bool head_has_prefix = head.compare(0, prefix.size(), prefix) == 0;
  if (wildcard == std::string_view::npos) return head_has_prefix;  // an exact name
  return head_has_prefix || prefix.compare(0, head.size(), head) == 0;
}

}  // namespace

struct Registry::State {
  std::mutex mutex;
  std::vector<std::unique_ptr<Algorithm>> algorithms;
  std::vector<MissingAlgorithm> missing;
  std::vector<DeferredAlgorithms> deferred;  // not loaded yet

  void add(std::unique_ptr<Algorithm> algorithm) {
    const std::string name = algorithm->name();
    for (const auto& a : algorithms) {
      if (a->name() == name) {
        throw Error(ErrorCode::invalid_argument, "algorithm '" + name + "' registered twice");
      }
    }
    algorithms.push_back(std::move(algorithm));
  }

  // Loads the deferred algorithms that `wanted` selects (with the mutex held). Each is loaded
  // into a registry of its own and then moved here, so a loader never re-enters this lock.
  template <typename Wanted>
  void load(Wanted wanted) {
    for (size_t i = 0; i < deferred.size();) {
      if (!wanted(deferred[i])) {
        ++i;
        continue;
      }
      DeferredAlgorithms d = std::move(deferred[i]);
      deferred.erase(deferred.begin() + static_cast<std::ptrdiff_t>(i));
      Registry part;
      d.load(part);
      for (auto& a : part.state_->algorithms) add(std::move(a));
      for (auto& m : part.state_->missing) missing.push_back(std::move(m));
      for (auto& more : part.state_->deferred) deferred.push_back(std::move(more));
    }
  }
  void load_for(std::string_view glob) {
    load([glob](const DeferredAlgorithms& d) {
      return std::any_of(
          d.name_prefixes.begin(), d.name_prefixes.end(),
          [glob](const std::string& prefix) { return could_start_with(glob, prefix); });
    });
  }
  void load_all() {
    load([](const DeferredAlgorithms&) { return true; });
  }

  std::string known_names() {
    load_all();
    std::string names;
    for (const auto& a : algorithms) {
      if (!names.empty()) names += ", ";
      names += a->name();
    }
    return names;
  }
  // " (cudnn.*: not built: ...)" for a name or glob a missing entry covers; empty otherwise.
  std::string missing_note(std::string_view name) {
    load_all();
    for (const auto& m : missing) {
      if (glob_match(m.name, name)) return " (" + m.name + ": " + m.reason + ")";
    }
    return {};
  }
};

Registry::Registry() : state_(std::make_unique<State>()) {}
Registry::Registry(Registry&&) noexcept = default;
Registry& Registry::operator=(Registry&&) noexcept = default;
Registry::~Registry() = default;

void Registry::add(std::unique_ptr<Algorithm> algorithm) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->add(std::move(algorithm));
}

void Registry::add_missing(MissingAlgorithm missing) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->missing.push_back(std::move(missing));
}

void Registry::add_deferred(DeferredAlgorithms deferred) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->deferred.push_back(std::move(deferred));
}

std::string Registry::known_names() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->known_names();
}

const Algorithm& Registry::get(std::string_view name) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->load_for(name);
  for (const auto& a : state_->algorithms) {
    if (a->name() == name) return *a;
  }
  // Error paths load everything, so the message lists what this build has.
  const std::string note = state_->missing_note(name);
  throw Error(ErrorCode::invalid_argument, "unknown algorithm '" + std::string(name) + "'" + note +
                                               "; known: " + state_->known_names());
}

std::vector<const Algorithm*> Registry::match(std::string_view globs) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  std::vector<const Algorithm*> result;
  for (std::string_view glob : split_list(globs)) {
    if (glob.empty()) {
      throw Error(ErrorCode::invalid_argument, "empty algorithm name in '" + std::string(globs) +
                                                   "'; known: " + state_->known_names());
    }
    state_->load_for(glob);
    bool any = false;
    for (const auto& a : state_->algorithms) {
      if (glob_match(glob, a->name())) {
        any = true;
        if (std::find(result.begin(), result.end(), a.get()) == result.end()) {
          result.push_back(a.get());
        }
      }
    }
    if (!any) {
      const std::string note = state_->missing_note(glob);
      throw Error(ErrorCode::invalid_argument, "no algorithm matches '" + std::string(glob) + "'" +
                                                   note + "; known: " + state_->known_names());
    }
  }
  return result;
}

std::vector<const Algorithm*> Registry::all() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->load_all();
  std::vector<const Algorithm*> result;
  for (const auto& a : state_->algorithms) result.push_back(a.get());
  return result;
}

std::vector<MissingAlgorithm> Registry::missing() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->load_all();
  return state_->missing;
}

}  // namespace convlab
