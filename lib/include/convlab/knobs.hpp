#pragma once
/// \file
/// Knobs: the named, typed settings an algorithm accepts, validated against its schema and
/// recorded with every result. A knob replaces a behaviour-changing environment variable; an
/// environment variable may at most supply a knob's default, and is then recorded too.
///
///     KnobValues knobs = resolve_knobs(algo.info(), {{"planner", "estimate"}});
///     auto plan = algo.plan(problem, pass, {{"planner", "estimate"}});  // the same, inside
///
/// Values travel as text (as on the command line, `--knob cpu.fft.planner=estimate`) and are
/// canonicalised by resolve_knobs(), so a recorded row reads back to the same settings.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace convlab {

enum class KnobType {
  integer,  ///< a decimal integer in [min, max]
  boolean,  ///< true/false (also accepts 1/0, on/off, yes/no)
  choice,   ///< one of `choices`
  bytes,    ///< a byte count as parse_size() reads it (3.5GiB, 512MiB, 8GB), or 0
};
const char* to_string(KnobType type) noexcept;

/// One knob of an algorithm's schema.
struct KnobSpec {
  std::string name;  ///< e.g. "planner"; unique within the algorithm
  KnobType type = KnobType::integer;
  std::string default_value;         ///< canonical text; "auto" where allow_auto
  std::vector<std::string> choices;  ///< choice only
  int64_t min = 0;                   ///< integer and bytes
  int64_t max = INT64_MAX;           ///< integer and bytes
  bool allow_auto = false;           ///< integer and bytes: "auto" lets the algorithm decide
  /// An environment variable that supplies the default when set (documented, and recorded
  /// in every row like any other knob value); empty for none.
  std::string environment_default;
  std::string description;  ///< one line for `convbench list`
};

/// Schema entries, one per type: what a knob is called, its default (canonical text), the
/// environment variable that may supply the default ("" for none) and its one-line doc.
KnobSpec choice_knob(std::string name, std::string default_value,
                     std::vector<std::string> choices, std::string environment_default,
                     std::string description);
KnobSpec boolean_knob(std::string name, bool default_value, std::string environment_default,
                      std::string description);
/// Integer in [min, max]; with allow_auto "auto" is accepted (and may be the default).
KnobSpec integer_knob(std::string name, std::string default_value, int64_t min, int64_t max,
                      bool allow_auto, std::string environment_default,
                      std::string description);
/// A byte count; with allow_auto "auto" is accepted (and may be the default).
KnobSpec bytes_knob(std::string name, std::string default_value, bool allow_auto,
                    std::string environment_default, std::string description);

/// Knob values by knob name, as canonical text.
using KnobValues = std::map<std::string, std::string>;

/// Validates `given` against `schema` and returns every knob of the schema with its value:
/// the given one, else the environment default if its variable is set, else the default.
/// Throws Error{invalid_argument} naming the algorithm, the knob and the bad value (and what
/// is accepted) for an unknown knob or a value of the wrong type or range.
KnobValues resolve_knobs(std::string_view algorithm, const std::vector<KnobSpec>& schema,
                         const KnobValues& given);

/// "planner=estimate,threads=2": the resolved knobs as one field for a row (sorted by name).
std::string format_knobs(const KnobValues& knobs);
/// Parses format_knobs()'s text back (without validation). Throws Error{invalid_argument}.
KnobValues parse_knobs(std::string_view text);

/// Typed reads of resolved values (resolve_knobs() guarantees the text is valid). "auto"
/// reads as std::nullopt. Throw Error{invalid_argument} for a knob not in `knobs`.
std::optional<int64_t> knob_integer(const KnobValues& knobs, std::string_view name);
std::optional<std::size_t> knob_bytes(const KnobValues& knobs, std::string_view name);
bool knob_boolean(const KnobValues& knobs, std::string_view name);
const std::string& knob_text(const KnobValues& knobs, std::string_view name);

/// Throws Error{invalid_argument}: "`what` '`text`' is not one of 'a', 'b', ...".
[[noreturn]] void throw_unknown_choice(std::string_view what, std::string_view text,
                                       const std::vector<std::string_view>& choices);

/// What `text` selects among `choices` ({a choice knob's text, its value} pairs): a choice
/// knob read into an enum. Throws Error{invalid_argument} naming `what`, the text and the
/// choices for a text that is none of them.
template <typename Value, std::size_t N>
Value knob_choice(std::string_view what, std::string_view text,
                  const std::pair<const char*, Value> (&choices)[N]) {
  std::vector<std::string_view> names;
  for (const auto& choice : choices) {
    if (text == choice.first) return choice.second;
    names.push_back(choice.first);
  }
  throw_unknown_choice(what, text, names);
}

/// The value of an environment variable that documents a default (a knob's, or a sweep
/// setting such as Slurm's array index), or nullopt when unset. This is the only place the
/// library reads the environment; every variable read is remembered for the metadata.
std::optional<std::string> environment_default(const std::string& variable);
/// Every variable environment_default() was asked for and found set, in the order of first
/// use, with its value.
std::vector<std::pair<std::string, std::string>> environment_defaults_used();
/// The value of a variable that says where this process runs within a larger job (Slurm's
/// array index), not how it computes, or nullopt when unset. Read here like every other, but
/// left out of environment_defaults_used(): the parts of one sweep differ in it and must still
/// compare equal in their settings. The caller records what it took (convbench: shard_source).
std::optional<std::string> environment_placement(const std::string& variable);

}  // namespace convlab
