#include "options/calibration_flags.hpp"

#include <cctype>
#include <cstdio>
#include <fstream>

#include "convlab/error.hpp"
#include "options/cli.hpp"

namespace convbench {

namespace {

std::string normalized(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
  }
  return out;
}

std::string devices_line(const std::string& path) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line) && line.rfind("#", 0) == 0;) {
    if (line.rfind("# devices: ", 0) == 0) return line.substr(11);
  }
  return {};
}

// The card a sweep ran on, from its "devices" metadata: a GPU name that is part of exactly
// one card's name once case and punctuation are dropped ("NVIDIA H200" -> h200).
const convlab::Card& sweep_card(const std::string& path, const convlab::CardDatabase& db) {
  const std::string devices = devices_line(path);
  const convlab::Card* found = nullptr;
  size_t start = 0;
  while (start <= devices.size()) {
    size_t end = devices.find("; ", start);
    if (end == std::string::npos) end = devices.size();
    std::string device = devices.substr(start, end - start);
    const size_t colon = device.find(": ");
    if (colon != std::string::npos) device = device.substr(colon + 2);
    const size_t details = device.find(" (");  // "NVIDIA H200 (sm_90, 139.8 GiB, ...)"
    if (details != std::string::npos) device.resize(details);
    const std::string d = normalized(device);
    if (d.size() >= 4 && device.rfind("cpu", 0) != 0) {
      for (const convlab::Card& c : db.all()) {
        const std::string n = normalized(c.name);
        if (n.find(d) != std::string::npos || d.find(n) != std::string::npos) {
          if (found && found != &c && normalized(found->name).size() <= n.size()) continue;
          found = &c;
        }
      }
    }
    start = end + 2;
  }
  if (!found) {
    throw UsageError("--calibrate '" + path + "': cannot tell which card it ran on (devices: " +
                     (devices.empty() ? "not recorded" : devices) +
                     "); name it with --calibrate-card ID (describe a CPU in a --cards "
                     "FILE.json)");
  }
  return *found;
}

}  // namespace

void add_calibration_options(CLI::App* command, CalibrationFlags& flags,
                             const std::string& purpose) {
  command
      ->add_option("--calibrate", flags.sweep,
                   "Scale by each algorithm's efficiency measured in this convbench CSV" + purpose)
      ->type_name("FILE");
  command
      ->add_option("--calibrate-card", flags.card,
                   "The card the --calibrate sweep ran on (default: from its devices line; a "
                   "CPU needs a --cards FILE.json entry)")
      ->type_name("NAME");
  command
      ->add_option("--calibrate-device", flags.device,
                   "Use the --calibrate rows of this device column (cpu or gpu)")
      ->type_name("DEVICE")
      ->check(CLI::IsMember({"cpu", "gpu"}));
}

std::optional<convlab::Calibration> load_calibration(const CalibrationFlags& flags,
                                                     const convlab::CardDatabase& cards) {
  if (!flags.sweep) {
    if (flags.card || flags.device) {
      throw UsageError(std::string(flags.card ? "--calibrate-card" : "--calibrate-device") +
                       " names the card or device of a --calibrate SWEEP.csv: give one");
    }
    return std::nullopt;
  }
  std::vector<convlab::MeasuredTime> times;
  try {
    times = convlab::read_measured_times(*flags.sweep);
  } catch (const convlab::Error& e) {
    throw UsageError(std::string("--calibrate: ") + e.what());
  }
  bool cpu_rows = !times.empty();
  for (const convlab::MeasuredTime& t : times) {
    if (!flags.device || t.device == *flags.device) cpu_rows = cpu_rows && t.device == "cpu";
  }
  if (cpu_rows && !flags.card) {
    throw UsageError("--calibrate '" + *flags.sweep +
                     "' holds CPU rows: name the card that describes its CPU with "
                     "--calibrate-card ID (define it in a --cards FILE.json)");
  }
  const convlab::Card& measured_on = flags.card ? [&]() -> const convlab::Card& {
    try {
      return cards.get(*flags.card);
    } catch (const convlab::Error& e) {
      throw UsageError(std::string("--calibrate-card: ") + e.what());
    }
  }()
      : sweep_card(*flags.sweep, cards);
  try {
    return convlab::calibrate(times, measured_on, flags.device.value_or(""));
  } catch (const convlab::Error& e) {
    throw UsageError(std::string("--calibrate '") + *flags.sweep + "': " + e.what());
  }
}

std::string describe_calibration(const std::optional<convlab::Calibration>& calibration,
                                 const CalibrationFlags& flags) {
  if (!calibration) return "none";
  std::string text =
      flags.sweep.value_or("") + " on " + calibration->card_id + " (" + calibration->device + "):";
  for (const auto& [algo, e] : calibration->by_algorithm) {
    char entry[160];
    std::snprintf(entry, sizeof entry, " %s %.3g over %d cases (per-case %.3g..%.3g);",
                  algo.c_str(), e.efficiency, e.cases, e.min_ratio, e.max_ratio);
    text += entry;
  }
  text.pop_back();
  return text;
}

}  // namespace convbench
