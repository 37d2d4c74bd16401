// One table of spellings per enum, read both ways: the name of a value for rows and messages,
// and the value of a name for flags, descriptors and files. A table replaces a to_string
// switch and a parse chain that had to be kept in step by hand.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "convlab/error.hpp"

namespace convlab {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

/// True when `table` lists every enumerator from the first (zero) to `last`, once each and in
/// declaration order. Checked by a static_assert beside each table, so that adding an
/// enumerator without its spelling (or reordering one) fails to compile instead of printing
/// "unknown" in a row.
template <typename E, std::size_t N>
constexpr bool names_cover(const std::array<EnumName<E>, N>& table, E last) {
  if (N == 0 || static_cast<std::size_t>(last) + 1 != N) return false;
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(table[i].value) != i || table[i].name == nullptr) return false;
  }
  return true;
}

/// The table of `rows` for the enum whose last enumerator is `Last`, checked at compile time:
/// declared `constexpr`, a table that does not list every enumerator once, in order, fails to
/// compile at its declaration (the count by static_assert, the order because the throw cannot
/// be evaluated in a constant expression), so an enumerator added without its spelling cannot
/// reach a row as "unknown".
template <auto Last, std::size_t N>
constexpr std::array<EnumName<decltype(Last)>, N> enum_names(
    const EnumName<decltype(Last)> (&rows)[N]) {
  static_assert(static_cast<std::size_t>(Last) + 1 == N, "one row per enumerator");
  std::array<EnumName<decltype(Last)>, N> table{};
  for (std::size_t i = 0; i < N; ++i) table[i] = rows[i];
  if (!names_cover(table, Last)) throw std::logic_error("enum names out of declaration order");
  return table;
}

/// The spelling of `value`; "unknown" only for a value cast from outside the enum.
template <typename E, std::size_t N>
constexpr const char* name_of(const std::array<EnumName<E>, N>& table, E value) noexcept {
  auto i = static_cast<std::size_t>(value);
  return i < N ? table[i].name : "unknown";
}

/// The value spelled `text`, if any.
template <typename E, std::size_t N>
constexpr std::optional<E> find_value(const std::array<EnumName<E>, N>& table,
                                      std::string_view text) noexcept {
  for (const auto& entry : table) {
    if (text == entry.name) return entry.value;
  }
  return std::nullopt;
}

/// Every spelling, for messages: "a, b or c".
template <typename E, std::size_t N>
std::string names_list(const std::array<EnumName<E>, N>& table) {
  std::string list;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) list += i + 1 == N ? " or " : ", ";
    list += table[i].name;
  }
  return list;
}

/// The value spelled `text`; otherwise an invalid_argument Error that names the bad text
/// (cut to 64 characters) and what `what` accepts: "unknown pass 'x': expected fwd, ...".
template <typename E, std::size_t N>
E value_of(const std::array<EnumName<E>, N>& table, std::string_view text, std::string_view what) {
  if (auto value = find_value(table, text)) return *value;
  throw Error(ErrorCode::invalid_argument, "unknown " + std::string(what) + " '" +
                                               std::string(text.substr(0, 64)) + "': expected " +
                                               names_list(table));
}

}  // namespace convlab
