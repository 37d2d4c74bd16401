// --cards (options/cards.hpp).
#include "options/cards.hpp"

#include <algorithm>

#include "convlab/error.hpp"
#include "options/cli.hpp"

namespace convbench {

std::vector<const convlab::Card*> resolve_cards(const std::vector<std::string>& values,
                                                convlab::CardDatabase& db,
                                                const std::string& fallback) {
  std::vector<std::string> lists, files;
  for (const std::string& v : values) {
    (v.size() > 5 && v.compare(v.size() - 5, 5, ".json") == 0 ? files : lists).push_back(v);
  }
  std::vector<std::string> from_files;
  try {
    for (const std::string& f : files) {
      convlab::CardDatabase one;
      one.add_json_file(f);
      for (const convlab::Card& c : one.all()) {
        db.add(c);
        from_files.push_back(c.id);
      }
    }
    if (lists.empty() && from_files.empty() && !fallback.empty()) lists.push_back(fallback);
    std::vector<const convlab::Card*> out;
    auto add = [&](const convlab::Card* c) {
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    };
    for (const std::string& id : from_files) add(&db.get(id));
    for (const std::string& list : lists) {
      for (const convlab::Card* c : db.select(list)) add(c);
    }
    return out;
  } catch (const convlab::Error& e) {
    throw UsageError(std::string("--cards: ") + e.what());
  }
}

std::vector<InputPath> card_file_inputs(const std::vector<std::string>& values) {
  std::vector<InputPath> inputs;
  for (const std::string& v : values) {
    if (v.size() > 5 && v.compare(v.size() - 5, 5, ".json") == 0) inputs.push_back({v, "--cards"});
  }
  return inputs;
}

std::string card_ids(const std::vector<const convlab::Card*>& cards) {
  std::string ids;
  for (const convlab::Card* c : cards) ids += (ids.empty() ? "" : ",") + c->id;
  return ids;
}

}  // namespace convbench
