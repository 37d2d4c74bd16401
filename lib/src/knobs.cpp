// Knob schemas: validation, canonical text, typed reads.
#include "convlab/knobs.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "convlab/cards.hpp"
#include "convlab/enum_names.hpp"
#include "convlab/error.hpp"

namespace convlab {

constexpr auto kKnobTypeNames = enum_names<KnobType::bytes>({
    {KnobType::integer, "integer"},
    {KnobType::boolean, "boolean"},
    {KnobType::choice, "choice"},
    {KnobType::bytes, "bytes"},
});

const char* to_string(KnobType type) noexcept { return name_of(kKnobTypeNames, type); }

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// What a knob accepts, for messages.
std::string accepted(const KnobSpec& spec) {
  std::string what;
  switch (spec.type) {
    case KnobType::integer:
      what = "an integer in [" + std::to_string(spec.min) + ", " + std::to_string(spec.max) + "]";
      break;
    case KnobType::boolean: what = "true or false"; break;
    case KnobType::bytes: what = "a byte size such as 512MiB, or 0"; break;
    case KnobType::choice:
      what = "one of ";
      for (size_t i = 0; i < spec.choices.size(); ++i) {
        what += (i ? ", " : "") + spec.choices[i];
      }
      break;
  }
  if (spec.allow_auto) what += ", or auto";
  return what;
}

// The canonical text of `value` for `spec`, or nullopt when it is not valid.
std::optional<std::string> canonical(const KnobSpec& spec, std::string_view value) {
  const std::string v = lower(value);
  if (spec.allow_auto && v == "auto") return std::string("auto");
  switch (spec.type) {
    case KnobType::boolean:
      if (v == "true" || v == "1" || v == "on" || v == "yes") return std::string("true");
      if (v == "false" || v == "0" || v == "off" || v == "no") return std::string("false");
      return std::nullopt;
    case KnobType::choice:
      for (const auto& c : spec.choices) {
        if (v == lower(c)) return c;
      }
      return std::nullopt;
    case KnobType::integer: {
      if (v.empty() || v.size() > 20) return std::nullopt;
      errno = 0;
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (errno != 0 || end != v.c_str() + v.size()) return std::nullopt;
      if (n < spec.min || n > spec.max) return std::nullopt;
      return std::to_string(n);
    }
    case KnobType::bytes: {
      int64_t n = 0;
      if (v == "0") {
        n = 0;
      } else {
        try {
          n = parse_size(value);
        } catch (const Error&) {
          return std::nullopt;
        }
      }
      if (n < spec.min || n > spec.max) return std::nullopt;
      return std::to_string(n);
    }
  }
  return std::nullopt;
}

const std::string& find(const KnobValues& knobs, std::string_view name) {
  const auto it = knobs.find(std::string(name));
  if (it == knobs.end()) {
    throw Error(ErrorCode::invalid_argument, "no knob '" + std::string(name) + "' was resolved");
  }
  return it->second;
}

}  // namespace

KnobSpec choice_knob(std::string name, std::string default_value,
                     std::vector<std::string> choices, std::string environment_default,
                     std::string description) {
  KnobSpec spec;
  spec.name = std::move(name);
  spec.type = KnobType::choice;
  spec.default_value = std::move(default_value);
  spec.choices = std::move(choices);
  spec.environment_default = std::move(environment_default);
  spec.description = std::move(description);
  return spec;
}

KnobSpec boolean_knob(std::string name, bool default_value, std::string environment_default,
                      std::string description) {
  KnobSpec spec;
  spec.name = std::move(name);
  spec.type = KnobType::boolean;
  spec.default_value = default_value ? "true" : "false";
  spec.environment_default = std::move(environment_default);
  spec.description = std::move(description);
  return spec;
}

KnobSpec integer_knob(std::string name, std::string default_value, int64_t min, int64_t max,
                      bool allow_auto, std::string environment_default,
                      std::string description) {
  KnobSpec spec;
  spec.name = std::move(name);
  spec.type = KnobType::integer;
  spec.default_value = std::move(default_value);
  spec.min = min;
  spec.max = max;
  spec.allow_auto = allow_auto;
  spec.environment_default = std::move(environment_default);
  spec.description = std::move(description);
  return spec;
}

KnobSpec bytes_knob(std::string name, std::string default_value, bool allow_auto,
                    std::string environment_default, std::string description) {
  KnobSpec spec = integer_knob(std::move(name), std::move(default_value), 0, INT64_MAX,
                               allow_auto, std::move(environment_default),
                               std::move(description));
  spec.type = KnobType::bytes;
  return spec;
}

KnobValues resolve_knobs(std::string_view algorithm, const std::vector<KnobSpec>& schema,
                         const KnobValues& given) {
  for (const auto& [name, value] : given) {
    const bool known = std::any_of(schema.begin(), schema.end(),
                                   [&](const KnobSpec& s) { return s.name == name; });
    if (!known) {
      std::string names;
      for (const auto& s : schema) names += (names.empty() ? "" : ", ") + s.name;
      throw Error(ErrorCode::invalid_argument,
                  "algorithm " + std::string(algorithm) + " has no knob '" + name + "'" +
                      (names.empty() ? std::string("; it has no knobs")
                                     : "; its knobs: " + names));
    }
  }
  KnobValues resolved;
  for (const auto& spec : schema) {
    std::string value = spec.default_value;
    std::string source = "the default";
    if (const auto it = given.find(spec.name); it != given.end()) {
      value = it->second;
      source.clear();
    } else if (!spec.environment_default.empty()) {
      if (auto env = environment_default(spec.environment_default)) {
        value = *env;
        source = "environment variable " + spec.environment_default;
      }
    }
    const auto text = canonical(spec, value);
    if (!text) {
      throw Error(ErrorCode::invalid_argument,
                  "invalid value '" + value.substr(0, 64) + "' for knob " +
                      std::string(algorithm) + "." + spec.name +
                      (source.empty() ? "" : " (from " + source + ")") + ": expected " +
                      accepted(spec));
    }
    resolved[spec.name] = *text;
  }
  return resolved;
}

std::string format_knobs(const KnobValues& knobs) {
  std::string text;
  for (const auto& [name, value] : knobs) {
    if (!text.empty()) text += ',';
    text += name + "=" + value;
  }
  return text;
}

KnobValues parse_knobs(std::string_view text) {
  KnobValues knobs;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      throw Error(ErrorCode::invalid_argument,
                  "invalid knob '" + std::string(item.substr(0, 64)) + "': expected NAME=VALUE");
    }
    knobs[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
    start = end + 1;
  }
  return knobs;
}

std::optional<int64_t> knob_integer(const KnobValues& knobs, std::string_view name) {
  const std::string& v = find(knobs, name);
  if (v == "auto") return std::nullopt;
  return std::strtoll(v.c_str(), nullptr, 10);
}

std::optional<std::size_t> knob_bytes(const KnobValues& knobs, std::string_view name) {
  const std::string& v = find(knobs, name);
  if (v == "auto") return std::nullopt;
  return static_cast<std::size_t>(std::strtoull(v.c_str(), nullptr, 10));
}

bool knob_boolean(const KnobValues& knobs, std::string_view name) {
  return find(knobs, name) == "true";
}

const std::string& knob_text(const KnobValues& knobs, std::string_view name) {
  return find(knobs, name);
}

void throw_unknown_choice(std::string_view what, std::string_view text,
                          const std::vector<std::string_view>& choices) {
  std::string message = std::string(what) + " '" + std::string(text) + "' is not one of ";
  for (std::size_t i = 0; i < choices.size(); ++i) {
    message += (i ? ", '" : "'") + std::string(choices[i]) + "'";
  }
  throw Error(ErrorCode::invalid_argument, message);
}

}  // namespace convlab
