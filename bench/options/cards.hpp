#pragma once
// --cards of memory and predict: card ids, comma lists, "all", or FILE.json files.

#include <string>
#include <vector>

#include "convlab/cards.hpp"
#include "output/output_file.hpp"

namespace convbench {

/// --cards values: ids, comma lists, "all", or FILE.json files (whose cards are added to
/// `db` and selected). `fallback` is used when no value was given ("" = none).
std::vector<const convlab::Card*> resolve_cards(const std::vector<std::string>& values,
                                                convlab::CardDatabase& db,
                                                const std::string& fallback);

/// The --cards values that name files (FILE.json), as inputs that no --out may overwrite.
std::vector<InputPath> card_file_inputs(const std::vector<std::string>& values);

/// The ids of `cards`, comma-separated.
std::string card_ids(const std::vector<const convlab::Card*>& cards);

}  // namespace convbench
