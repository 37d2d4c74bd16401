#pragma once
/// \file
/// The registry of the algorithms compiled into this build.

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

class Registry {
 public:
  /// Adds an algorithm; throws Error{invalid_argument} for a duplicate name.
  void add(std::unique_ptr<Algorithm> algorithm);
  void add_missing(MissingAlgorithm missing);

  /// The algorithm of that exact name. Throws Error{invalid_argument} naming the unknown
  /// name and listing the known ones (and why a missing one was not built).
  const Algorithm& get(std::string_view name) const;
  /// The algorithms matching a comma-separated list of globs (`*`, `?`), in registration
  /// order without duplicates. A glob that matches nothing is an Error{invalid_argument}
  /// listing the known names.
  std::vector<const Algorithm*> match(std::string_view globs) const;
  /// Every algorithm, in registration order.
  std::vector<const Algorithm*> all() const;
  const std::vector<MissingAlgorithm>& missing() const { return missing_; }
  /// The known names, comma-separated, for messages.
  std::string known_names() const;

 private:
  std::vector<std::unique_ptr<Algorithm>> algorithms_;
  std::vector<MissingAlgorithm> missing_;
};

/// The process-wide registry, filled on first use with everything this build compiled in.
const Registry& registry();

/// Shell-style glob match with `*` and `?`.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace convlab
