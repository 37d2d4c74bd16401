// The card table, the JSON reader that extends it, and byte sizes.
//
// Conventions of the table:
//  - memory: the installed capacity. Vendors' "GB" for GPU memory is binary (a "4 GB" GTX
//    980 has 4096 MiB, an "80 GB" A100 81920 MiB), so it is stored as GiB.
//  - usable: what a kernel can use at full speed. Equal to memory except the GTX 970, whose
//    last 0.5 GiB sits behind a shared, slower path (NVIDIA's statement of January 2015).
//    Neither subtracts the CUDA context (a few hundred MiB) or ECC/driver reservations:
//    pass --memory-budget for those.
//  - bandwidth: the datasheet's peak DRAM bandwidth, in 1e9 bytes/s.
//  - fp32: the peak of the CUDA cores at the boost clock (no tensor cores): either the
//    datasheet's figure, or cores x 2 flops (an FMA) x boost clock from the datasheet where
//    the datasheet gives no flop figure (the comment says which).
#include "convlab/cards.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "convlab/error.hpp"
#include "convlab/text_input.hpp"

namespace convlab {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;
constexpr double kGBs = 1e9;  // bandwidth unit
constexpr double kTflops = 1e12;

// cores x 2 x clock (MHz): the FP32 peak where a datasheet lists only cores and clocks.
constexpr double fma_peak(double cores, double mhz) { return cores * 2.0 * mhz * 1e6; }

Card card(const char* id, const char* name, int64_t memory, int64_t usable, double bandwidth,
          double flops, const char* architecture, int year, const char* source) {
  return Card{id, name, memory, usable, bandwidth, flops, architecture, year, source};
}

std::vector<Card> builtin_table() {
  return {
      // GeForce GTX 580 product page (nvidia.com, "GeForce GTX 580 specifications"): 512
      // CUDA cores, processor clock 1544 MHz (no boost), 1536 MB GDDR5, 384-bit, 192.4 GB/s.
      card("gtx580", "NVIDIA GeForce GTX 580", 1536 * kMiB, 1536 * kMiB, 192.4 * kGBs,
           fma_peak(512, 1544), "Fermi (GF110)", 2010,
           "nvidia.com GeForce GTX 580 specifications; fp32 = 512 cores x 2 x 1544 MHz"),
      // GeForce GTX 680 specifications: 1536 cores, base 1006 / boost 1058 MHz, 2 GB GDDR5,
      // 256-bit, 192.2 GB/s.
      card("gtx680", "NVIDIA GeForce GTX 680", 2 * kGiB, 2 * kGiB, 192.2 * kGBs,
           fma_peak(1536, 1058), "Kepler (GK104)", 2012,
           "nvidia.com GeForce GTX 680 specifications; fp32 = 1536 cores x 2 x 1058 MHz boost"),
      // GeForce GTX 960 specifications: 1024 cores, base 1127 / boost 1178 MHz, 2 GB GDDR5
      // (the reference board; 4 GB partner boards exist), 128-bit, 112 GB/s.
      card("gtx960", "NVIDIA GeForce GTX 960", 2 * kGiB, 2 * kGiB, 112 * kGBs, fma_peak(1024, 1178),
           "Maxwell (GM206)", 2015,
           "nvidia.com GeForce GTX 960 specifications; fp32 = 1024 cores x 2 x 1178 MHz boost"),
      // GeForce GTX 970 specifications: 1664 cores, base 1050 / boost 1178 MHz, 4 GB GDDR5,
      // 256-bit, 224 GB/s. NVIDIA (Jan 2015): the memory is a 3.5 GB segment and a 0.5 GB
      // segment that shares a crossbar port, so only 3.5 GiB run at full speed (the fast
      // segment alone reaches 7/8 of the 224 GB/s).
      card("gtx970", "NVIDIA GeForce GTX 970", 4 * kGiB, 3584 * kMiB, 224 * kGBs,
           fma_peak(1664, 1178), "Maxwell (GM204)", 2014,
           "nvidia.com GeForce GTX 970 specifications + NVIDIA statement on the 3.5+0.5 GB "
           "memory segments (Jan 2015); fp32 = 1664 cores x 2 x 1178 MHz boost"),
      // GeForce GTX 980 specifications: 2048 cores, base 1126 / boost 1216 MHz, 4 GB GDDR5,
      // 256-bit, 224 GB/s.
      card("gtx980", "NVIDIA GeForce GTX 980", 4 * kGiB, 4 * kGiB, 224 * kGBs, fma_peak(2048, 1216),
           "Maxwell (GM204)", 2014,
           "nvidia.com GeForce GTX 980 specifications; fp32 = 2048 cores x 2 x 1216 MHz boost"),
      // GeForce GTX 980 Ti specifications: 2816 cores, base 1000 / boost 1075 MHz, 6 GB
      // GDDR5, 384-bit, 336.5 GB/s.
      card("gtx980ti", "NVIDIA GeForce GTX 980 Ti", 6 * kGiB, 6 * kGiB, 336.5 * kGBs,
           fma_peak(2816, 1075), "Maxwell (GM200)", 2015,
           "nvidia.com GeForce GTX 980 Ti specifications; fp32 = 2816 cores x 2 x 1075 MHz "
           "boost"),
      // GeForce GTX TITAN specifications: 2688 cores, base 837 / boost 876 MHz, 6 GB GDDR5,
      // 384-bit, 288.4 GB/s.
      card("titan", "NVIDIA GeForce GTX TITAN", 6 * kGiB, 6 * kGiB, 288.4 * kGBs,
           fma_peak(2688, 876), "Kepler (GK110)", 2013,
           "nvidia.com GeForce GTX TITAN specifications; fp32 = 2688 cores x 2 x 876 MHz boost"),
      // GeForce GTX TITAN X (Maxwell) specifications: 3072 cores, base 1000 / boost 1075
      // MHz, 12 GB GDDR5, 384-bit, 336.5 GB/s.
      card("titan-x", "NVIDIA GeForce GTX TITAN X (Maxwell)", 12 * kGiB, 12 * kGiB, 336.5 * kGBs,
           fma_peak(3072, 1075), "Maxwell (GM200)", 2015,
           "nvidia.com GeForce GTX TITAN X specifications; fp32 = 3072 cores x 2 x 1075 MHz "
           "boost"),
      // One GPU of the GRID K520 board, which AWS exposed in its g2 instances (g2.2xlarge:
      // one GPU, g2.8xlarge: four). The board is two GK104s; per GPU 1536 cores, 4 GB
      // GDDR5, 256-bit at 5 Gbps = 160 GB/s (AWS G2 instance announcement, Nov 2013).
      // NVIDIA published no datasheet for the K520; its 800 MHz clock is from the
      // TechPowerUp GPU database.
      card("grid-k520", "NVIDIA GRID K520 (one GPU, AWS g2)", 4 * kGiB, 4 * kGiB, 160 * kGBs,
           fma_peak(1536, 800), "Kepler (GK104)", 2013,
           "AWS EC2 G2 announcement (per GPU: 1536 cores, 4 GB, 160 GB/s); clock 800 MHz from "
           "the TechPowerUp GPU database; fp32 = 1536 x 2 x 800 MHz"),
      // NVIDIA T4 Tensor Core GPU datasheet: 16 GB GDDR6, 320+ GB/s, FP32 8.1 TFLOPS.
      card("t4", "NVIDIA T4", 16 * kGiB, 16 * kGiB, 320 * kGBs, 8.1 * kTflops, "Turing (TU104)",
           2018, "NVIDIA T4 Tensor Core GPU datasheet"),
      // NVIDIA Tesla V100 datasheet, SXM2: 16 or 32 GB HBM2, 900 GB/s, FP32 15.7 TFLOPS.
      card("v100", "NVIDIA Tesla V100 SXM2 16 GB", 16 * kGiB, 16 * kGiB, 900 * kGBs, 15.7 * kTflops,
           "Volta (GV100)", 2017, "NVIDIA Tesla V100 datasheet (SXM2)"),
      card("v100-32gb", "NVIDIA Tesla V100 SXM2 32 GB", 32 * kGiB, 32 * kGiB, 900 * kGBs,
           15.7 * kTflops, "Volta (GV100)", 2018, "NVIDIA Tesla V100 datasheet (SXM2)"),
      // NVIDIA A100 Tensor Core GPU datasheet, SXM: 40 GB HBM2 at 1555 GB/s, 80 GB HBM2e at
      // 2039 GB/s; FP32 19.5 TFLOPS.
      card("a100-40gb", "NVIDIA A100 SXM4 40 GB", 40 * kGiB, 40 * kGiB, 1555 * kGBs, 19.5 * kTflops,
           "Ampere (GA100)", 2020, "NVIDIA A100 Tensor Core GPU datasheet (SXM)"),
      card("a100-80gb", "NVIDIA A100 SXM4 80 GB", 80 * kGiB, 80 * kGiB, 2039 * kGBs, 19.5 * kTflops,
           "Ampere (GA100)", 2020, "NVIDIA A100 Tensor Core GPU datasheet (SXM)"),
      // GeForce RTX 3090 specifications: 10496 cores, boost 1695 MHz, 24 GB GDDR6X, 384-bit
      // at 19.5 Gbps = 936 GB/s. NVIDIA quotes 35.6 "shader TFLOPS" = the product below.
      card("rtx3090", "NVIDIA GeForce RTX 3090", 24 * kGiB, 24 * kGiB, 936 * kGBs,
           fma_peak(10496, 1695), "Ampere (GA102)", 2020,
           "nvidia.com GeForce RTX 3090 specifications; fp32 = 10496 cores x 2 x 1695 MHz boost"),
      // GeForce RTX 4090 specifications: 16384 cores, boost 2520 MHz, 24 GB GDDR6X, 384-bit
      // at 21 Gbps = 1008 GB/s. NVIDIA quotes 82.6 "shader TFLOPS" = the product below.
      card("rtx4090", "NVIDIA GeForce RTX 4090", 24 * kGiB, 24 * kGiB, 1008 * kGBs,
           fma_peak(16384, 2520), "Ada Lovelace (AD102)", 2022,
           "nvidia.com GeForce RTX 4090 specifications; fp32 = 16384 cores x 2 x 2520 MHz boost"),
      // NVIDIA L4 Tensor Core GPU datasheet: 24 GB GDDR6, 300 GB/s, FP32 30.3 TFLOPS.
      card("l4", "NVIDIA L4", 24 * kGiB, 24 * kGiB, 300 * kGBs, 30.3 * kTflops,
           "Ada Lovelace (AD104)", 2023, "NVIDIA L4 Tensor Core GPU datasheet"),
      // NVIDIA H100 Tensor Core GPU datasheet, SXM: 80 GB HBM3, 3.35 TB/s, FP32 67 TFLOPS.
      card("h100-sxm", "NVIDIA H100 SXM5 80 GB", 80 * kGiB, 80 * kGiB, 3350 * kGBs, 67 * kTflops,
           "Hopper (GH100)", 2022, "NVIDIA H100 Tensor Core GPU datasheet (SXM)"),
      // NVIDIA H200 Tensor Core GPU datasheet, SXM: 141 GB HBM3e, 4.8 TB/s, FP32 67 TFLOPS.
      card("h200", "NVIDIA H200 SXM 141 GB", 141 * kGiB, 141 * kGiB, 4800 * kGBs, 67 * kTflops,
           "Hopper (GH100)", 2024, "NVIDIA H200 Tensor Core GPU datasheet (SXM)"),
  };
}

bool valid_id(std::string_view id) {
  if (id.empty()) return false;
  for (char ch : id) {
    const bool ok =
        (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
    if (!ok) return false;
  }
  return true;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::string trim(std::string_view text) {
  size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  return std::string(text.substr(b, e - b));
}

}  // namespace

void Card::validate() const {
  const std::string who = "card '" + id + "'";
  auto bad = [&](const std::string& what) {
    throw Error(ErrorCode::invalid_argument, who + ": " + what);
  };
  if (!valid_id(id)) bad("the id must be lowercase letters, digits, '-', '_' or '.'");
  if (name.empty()) bad("the name is empty");
  if (memory_bytes <= 0) bad("memory must be positive, got " + std::to_string(memory_bytes));
  if (usable_bytes <= 0) bad("usable memory must be positive, got " + std::to_string(usable_bytes));
  if (usable_bytes > memory_bytes) {
    bad("usable memory " + format_size(usable_bytes) + " exceeds its memory " +
        format_size(memory_bytes));
  }
  if (!(bandwidth_bytes_per_s > 0) || !std::isfinite(bandwidth_bytes_per_s)) {
    bad("bandwidth must be positive and finite");
  }
  if (!(fp32_flops_per_s > 0) || !std::isfinite(fp32_flops_per_s)) {
    bad("fp32 peak must be positive and finite");
  }
  if (architecture.empty()) bad("the architecture is empty");
  if (year < 1990 || year > 2100) bad("year " + std::to_string(year) + " is not plausible");
  if (source.empty()) bad("the source of its figures is empty");
}

CardDatabase CardDatabase::builtin() {
  CardDatabase db;
  for (Card& c : builtin_table()) db.add(std::move(c));
  return db;
}

const CardDatabase& card_database() {
  static const CardDatabase db = CardDatabase::builtin();
  return db;
}

void CardDatabase::add(Card card) {
  card.validate();
  for (Card& c : cards_) {
    if (c.id == card.id) {
      c = std::move(card);
      return;
    }
  }
  cards_.push_back(std::move(card));
}

const Card* CardDatabase::find(std::string_view id) const {
  for (const Card& c : cards_) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

std::string CardDatabase::known_ids() const {
  std::string ids;
  for (const Card& c : cards_) ids += (ids.empty() ? "" : ", ") + c.id;
  return ids;
}

const Card& CardDatabase::get(std::string_view id) const {
  if (const Card* c = find(id)) return *c;
  throw Error(ErrorCode::invalid_argument,
              "unknown card '" + std::string(id) + "'; known: " + known_ids());
}

std::vector<const Card*> CardDatabase::select(std::string_view list) const {
  std::vector<const Card*> out;
  if (trim(list) == "all") {
    for (const Card& c : cards_) out.push_back(&c);
    return out;
  }
  for (std::string_view item : split_list(list)) {
    const std::string id = trim(item);
    if (id.empty()) {
      throw Error(ErrorCode::invalid_argument,
                  "empty card id in '" + std::string(list) + "'; known: " + known_ids());
    }
    const Card* c = &get(id);
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

namespace {

using nlohmann::json;

// A JSON value as a message quotes it: cut short (a value may be a whole nested document).
std::string quoted(const json& value) { return excerpt(value.dump(), 60); }

int64_t json_size(const json& value, const std::string& where) {
  if (value.is_string()) {
    try {
      return parse_size(value.get<std::string>());
    } catch (const Error& e) {
      throw Error(ErrorCode::invalid_argument, where + ": " + e.what());
    }
  }
  if (value.is_number_integer() && value.get<int64_t>() > 0) return value.get<int64_t>();
  throw Error(ErrorCode::invalid_argument,
              where + ": expected a size such as \"4GiB\" or a positive number of bytes, got " +
                  quoted(value));
}

double json_positive(const json& value, const std::string& where) {
  if (value.is_number() && value.get<double>() > 0 && std::isfinite(value.get<double>())) {
    return value.get<double>();
  }
  throw Error(ErrorCode::invalid_argument,
              where + ": expected a positive finite number, got " + quoted(value));
}

std::string json_text(const json& value, const std::string& where) {
  if (value.is_string() && !value.get<std::string>().empty()) return value.get<std::string>();
  throw Error(ErrorCode::invalid_argument,
              where + ": expected a non-empty string, got " + quoted(value));
}

Card card_from_json(const json& object, const std::string& source, size_t index) {
  std::string who = source + ": card " + std::to_string(index + 1);
  if (!object.is_object()) {
    throw Error(ErrorCode::invalid_argument, who + ": expected an object, got " + quoted(object));
  }
  // memory_bytes and usable_bytes are the spellings `convbench list --format json` writes, so
  // that its cards read back; each is the same field as memory / usable_memory.
  static const char* const kKeys[] = {
      "id",           "name",          "memory",       "usable_memory", "memory_bytes",
      "usable_bytes", "bandwidth_gbs", "fp32_tflops",  "architecture",  "year",
      "source"};
  for (const auto& item : object.items()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), item.key()) == std::end(kKeys)) {
      throw Error(ErrorCode::invalid_argument,
                  who + ": unknown key '" + excerpt(item.key(), 40) +
                      "'; known: id, name, memory (or memory_bytes), usable_memory (or "
                      "usable_bytes), bandwidth_gbs, fp32_tflops, architecture, year, source");
    }
  }
  auto either = [&](const char* key, const char* bytes_key) -> const json* {
    const bool has_key = object.contains(key);
    const bool has_bytes = object.contains(bytes_key);
    if (has_key && has_bytes) {
      throw Error(ErrorCode::invalid_argument, who + ": both '" + key + "' and '" + bytes_key +
                                                   "' given; they are the same field");
    }
    if (has_key) return &object[key];
    if (has_bytes) return &object[bytes_key];
    return nullptr;
  };
  auto need = [&](const char* key) -> const json& {
    auto it = object.find(key);
    if (it == object.end()) {
      throw Error(ErrorCode::invalid_argument, who + ": missing key '" + key + "'");
    }
    return *it;
  };
  Card c;
  c.id = json_text(need("id"), who + " id");
  who = source + ": card '" + excerpt(c.id, 40) + "'";
  c.name = json_text(need("name"), who + " name");
  const json* memory = either("memory", "memory_bytes");
  if (memory == nullptr) {
    throw Error(ErrorCode::invalid_argument, who + ": missing key 'memory' (or 'memory_bytes')");
  }
  c.memory_bytes = json_size(*memory, who + " memory");
  const json* usable = either("usable_memory", "usable_bytes");
  c.usable_bytes = usable != nullptr ? json_size(*usable, who + " usable_memory") : c.memory_bytes;
  c.bandwidth_bytes_per_s = json_positive(need("bandwidth_gbs"), who + " bandwidth_gbs") * kGBs;
  c.fp32_flops_per_s = json_positive(need("fp32_tflops"), who + " fp32_tflops") * kTflops;
  c.architecture = json_text(need("architecture"), who + " architecture");
  const json& year = need("year");
  if (!year.is_number_integer()) {
    throw Error(ErrorCode::invalid_argument,
                who + " year: expected an integer, got " + quoted(year));
  }
  c.year = year.get<int>();
  c.source = object.contains("source") ? json_text(object["source"], who + " source")
                                       : std::string(source);
  try {
    c.validate();
  } catch (const Error& e) {
    throw Error(ErrorCode::invalid_argument, source + ": " + e.what());
  }
  return c;
}

}  // namespace

void CardDatabase::add_json_text(std::string_view text, std::string_view source_view) {
  const std::string source(source_view);
  const TextLimits limits;
  if (static_cast<int64_t>(text.size()) > limits.max_bytes) {
    throw Error(ErrorCode::invalid_argument, source + ": cards text is larger than the limit of " +
                                                 std::to_string(limits.max_bytes) + " bytes");
  }
  // Before parsing: printing or destroying a deeply nested value recurses once per level.
  check_json_depth(text, source, limits.max_json_depth);
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e999
    throw Error(ErrorCode::invalid_argument,
                source + ": not valid JSON: " + excerpt(e.what(), 200));
  }
  const json* list = &doc;
  if (doc.is_object()) {
    // The whole output of `convbench list --format json` is accepted: its other sections
    // describe the build, not cards, and are skipped.
    static const char* const kListSections[] = {"cards", "algorithms", "not_built", "suites"};
    bool only_list_sections = doc.contains("cards");
    for (const auto& item : doc.items()) {
      if (std::find(std::begin(kListSections), std::end(kListSections), item.key()) ==
          std::end(kListSections)) {
        only_list_sections = false;
      }
    }
    if (!only_list_sections) {
      throw Error(ErrorCode::invalid_argument,
                  source + ": expected an array of cards, an object {\"cards\": [...]}, or the "
                           "output of 'convbench list --format json'");
    }
    list = &doc["cards"];
  }
  if (!list->is_array()) {
    throw Error(ErrorCode::invalid_argument, source + ": the cards must be a JSON array");
  }
  // Parse everything before adding anything, so a bad file leaves the database unchanged.
  std::vector<Card> parsed;
  for (size_t i = 0; i < list->size(); ++i) parsed.push_back(card_from_json((*list)[i], source, i));
  for (Card& c : parsed) add(std::move(c));
}

void CardDatabase::add_json_file(const std::string& path) {
  add_json_text(read_text_file(path, "cards file"), path);
}

int64_t parse_size(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  auto bad = [&](const std::string& why) -> int64_t {
    throw Error(ErrorCode::invalid_argument,
                "invalid size " + quoted + ": " + why +
                    " (write e.g. 3.5GiB, 512MiB, 8GB or a number of bytes)");
  };
  const std::string t = trim(text);
  size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
  const std::string number = t.substr(0, i);
  if (number.empty()) return bad("no number");
  if (std::count(number.begin(), number.end(), '.') > 1 || number == ".") {
    return bad("'" + number + "' is not a number");
  }
  const std::string unit = lower(trim(t.substr(i)));
  static const std::pair<const char*, double> kUnits[] = {
      {"", 1},      {"b", 1},        {"kb", 1e3},     {"mb", 1e6},     {"gb", 1e9},
      {"tb", 1e12}, {"kib", 0x1p10}, {"mib", 0x1p20}, {"gib", 0x1p30}, {"tib", 0x1p40},
  };
  double scale = 0;
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) scale = factor;
  }
  if (scale == 0) {
    if (unit == "k" || unit == "m" || unit == "g" || unit == "t") {
      const std::string u(1, static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))));
      return bad("unit '" + t.substr(i) + "' is ambiguous: say " + u + "iB (1024) or " + u +
                 "B (1000)");
    }
    return bad("unknown unit '" + t.substr(i) + "'");
  }
  const double value = std::strtod(number.c_str(), nullptr) * scale;
  if (!(value >= 1)) return bad("a size must be at least one byte");
  if (value >= 0x1p63) return bad("too large");
  return static_cast<int64_t>(value);
}

std::string format_size(int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::fabs(value) >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  char text[48];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  } else {
    std::snprintf(text, sizeof text, "%.2f %s", value, kUnits[unit]);
  }
  return text;
}

}  // namespace convlab
