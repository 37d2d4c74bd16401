#pragma once
/// \file
/// The registry of the algorithms compiled into this build.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "convlab/algorithm.hpp"

namespace convlab {

/// An algorithm this build knows of but did not compile in, and why.
struct MissingAlgorithm {
  std::string name;    ///< a name or a glob, e.g. "cudnn.*"
  std::string reason;  ///< e.g. "not built: cuDNN was not found at configure time"
};

class Registry;

/// Algorithms registered only when first needed, because registering them loads a module
/// (the CUDA backend: loading it maps the CUDA libraries). `name_prefixes` are the prefixes
/// every name they register starts with; a lookup whose name or glob could match one loads
/// them, every other lookup leaves them unloaded.
struct DeferredAlgorithms {
  std::vector<std::string> name_prefixes;  ///< e.g. {"cuda.", "cudnn."}
  /// Registers the algorithms, or adds them as missing with the reason.
  std::function<void(Registry&)> load;
};

/// Thread-safe: lookups may load deferred algorithms, under a lock.
class Registry {
 public:
  Registry();
  Registry(Registry&&) noexcept;
  Registry& operator=(Registry&&) noexcept;
  ~Registry();

  /// Adds an algorithm; throws Error{invalid_argument} for a duplicate name.
  void add(std::unique_ptr<Algorithm> algorithm);
  void add_missing(MissingAlgorithm missing);
  void add_deferred(DeferredAlgorithms deferred);

  /// The algorithm of that exact name. Throws Error{invalid_argument} naming the unknown
  /// name and listing the known ones (and why a missing one was not built).
  const Algorithm& get(std::string_view name) const;
  /// The algorithms matching a comma-separated list of globs (`*`, `?`), in registration
  /// order without duplicates. A glob that matches nothing is an Error{invalid_argument}
  /// listing the known names.
  std::vector<const Algorithm*> match(std::string_view globs) const;
  /// Every algorithm, in registration order (loads every deferred one).
  std::vector<const Algorithm*> all() const;
  /// What this build knows of but cannot offer (loads every deferred one first, so a module
  /// that failed to load is listed with why).
  std::vector<MissingAlgorithm> missing() const;
  /// The known names, comma-separated, for messages (loads every deferred one).
  std::string known_names() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// The process-wide registry, filled on first use with everything this build compiled in.
/// Defined by the aggregate convlab::convlab (lib/aggregate), which knows what was built.
const Registry& registry();

/// Shell-style glob match with `*` and `?`.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace convlab
