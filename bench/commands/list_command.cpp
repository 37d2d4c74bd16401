// `convbench list`: what this build can run here. Each section is one function over the
// registry, the suites or the card table (convlab/cards.hpp).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands/commands.hpp"
#include "convlab/cards.hpp"
#include "convlab/registry.hpp"
#include "options/cli.hpp"
#include "sweep/suites.hpp"

namespace convbench {
namespace {

using Json = nlohmann::ordered_json;

Json algorithms_json() {
  Json list = Json::array();
  for (const convlab::Algorithm* a : convlab::registry().all()) {
    const convlab::Support available = a->available();
    list.push_back({{"name", a->name()},
                    {"device", convlab::to_string(a->device())},
                    {"available", available.ok},
                    {"why_not", available.ok ? "" : available.reason},
                    {"deterministic", a->deterministic()},
                    {"description", a->description()}});
  }
  return list;
}

Json missing_json() {
  Json list = Json::array();
  for (const auto& m : convlab::registry().missing()) {
    list.push_back({{"name", m.name}, {"reason", m.reason}});
  }
  return list;
}

Json suites_json() {
  Json list = Json::array();
  for (const std::string& name : suite_names()) {
    const Suite suite = load_suite(name);
    int64_t mb_min = 0, mb_max = 0;
    for (const auto& layer : suite.layers) {
      mb_min = mb_min ? std::min(mb_min, layer.problem.n) : layer.problem.n;
      mb_max = std::max(mb_max, layer.problem.n);
    }
    list.push_back({{"name", name},
                    {"layers", suite.layers.size()},
                    {"convolutions", suite.convolutions()},
                    {"mb_min", mb_min},
                    {"mb_max", mb_max}});
  }
  return list;
}

Json cards_json() {
  Json list = Json::array();
  for (const convlab::Card& c : convlab::card_database().all()) {
    list.push_back({{"id", c.id},
                    {"name", c.name},
                    {"memory_bytes", c.memory_bytes},
                    {"usable_bytes", c.usable_bytes},
                    {"bandwidth_gbs", c.bandwidth_bytes_per_s / 1e9},
                    {"fp32_tflops", c.fp32_flops_per_s / 1e12},
                    {"architecture", c.architecture},
                    {"year", c.year},
                    {"source", c.source}});
  }
  return list;
}

struct Section {
  const char* key;
  Json (*collect)();
};

// The sections of `convbench list`, in order.
const std::vector<Section>& list_sections() {
  static const std::vector<Section> sections = {
      {"algorithms", algorithms_json},
      {"not_built", missing_json},
      {"suites", suites_json},
      {"cards", cards_json},
  };
  return sections;
}

std::string pad(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

size_t widest(const Json& list, const char* key, size_t at_least) {
  size_t width = at_least;
  for (const auto& item : list) width = std::max(width, item[key].get<std::string>().size());
  return width;
}

// Unavailable algorithms usually share one reason (no CUDA device): each distinct reason is a
// numbered note under the table instead of a repeated line.
void print_algorithms(const Json& list) {
  std::cout << "algorithms (" << list.size() << " compiled in):\n";
  const size_t name_w = widest(list, "name", 9);
  std::vector<std::string> notes;
  std::cout << "  " << pad("name", name_w) << "  device  available  deterministic  description\n";
  for (const auto& a : list) {
    std::string available = "yes";
    if (!a["available"].get<bool>()) {
      const std::string why = a["why_not"].get<std::string>();
      auto it = std::find(notes.begin(), notes.end(), why);
      if (it == notes.end()) it = notes.insert(notes.end(), why);
      available = "no [" + std::to_string(it - notes.begin() + 1) + "]";
    }
    std::cout << "  " << pad(a["name"].get<std::string>(), name_w) << "  "
              << pad(a["device"].get<std::string>(), 6) << "  " << pad(available, 9) << "  "
              << pad(a["deterministic"].get<bool>() ? "yes" : "no", 13) << "  "
              << a["description"].get<std::string>() << "\n";
  }
  for (size_t i = 0; i < notes.size(); ++i) {
    std::cout << "  [" << i + 1 << "] not available: " << notes[i] << "\n";
  }
}

void print_missing(const Json& list) {
  if (list.empty()) {
    std::cout << "\nnot built: none (every optional backend was found at configure time)\n";
    return;
  }
  std::cout << "\nnot built:\n";
  const size_t name_w = widest(list, "name", 4);
  for (const auto& m : list) {
    std::cout << "  " << pad(m["name"].get<std::string>(), name_w) << "  "
              << m["reason"].get<std::string>() << "\n";
  }
}

void print_suites(const Json& list) {
  std::cout << "\nsuites (convbench run --suite NAME; 'all' for every one):\n";
  const size_t name_w = widest(list, "name", 4);
  for (const auto& s : list) {
    std::cout << "  " << pad(s["name"].get<std::string>(), name_w) << "  "
              << s["layers"].get<size_t>() << " layers, " << s["convolutions"].get<long long>()
              << " convolutions with repeats, batch " << s["mb_min"].get<long long>();
    if (s["mb_max"] != s["mb_min"]) std::cout << "-" << s["mb_max"].get<long long>();
    std::cout << "\n";
  }
}

void print_cards(const Json& list) {
  std::cout << "\ncards (convbench memory/predict --cards ID, run --card ID; usable = the "
               "memory a budget counts):\n";
  const size_t id_w = widest(list, "id", 2), name_w = widest(list, "name", 4);
  std::cout << "  " << pad("id", id_w) << "  " << pad("name", name_w)
            << "  memory      usable       GB/s  FP32 TFLOP/s  year  architecture\n";
  for (const auto& c : list) {
    char numbers[96];
    std::snprintf(numbers, sizeof numbers, "%-10s  %-10s  %5.0f  %12.2f  %4d",
                  convlab::format_size(c["memory_bytes"].get<int64_t>()).c_str(),
                  convlab::format_size(c["usable_bytes"].get<int64_t>()).c_str(),
                  c["bandwidth_gbs"].get<double>(), c["fp32_tflops"].get<double>(),
                  c["year"].get<int>());
    std::cout << "  " << pad(c["id"].get<std::string>(), id_w) << "  "
              << pad(c["name"].get<std::string>(), name_w) << "  " << numbers << "  "
              << c["architecture"].get<std::string>() << "\n";
  }
}

}  // namespace

int run_list(const ListOptions& options) {
  Json all = Json::object();
  for (const Section& section : list_sections()) all[section.key] = section.collect();
  if (options.format == "json") {
    std::cout << all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  print_algorithms(all["algorithms"]);
  print_missing(all["not_built"]);
  print_suites(all["suites"]);
  print_cards(all["cards"]);
  return 0;
}

}  // namespace convbench
