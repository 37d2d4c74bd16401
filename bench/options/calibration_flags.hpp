#pragma once
// --calibrate SWEEP.csv, --calibrate-card ID, --calibrate-device cpu|gpu: a measured sweep
// that scales the roofline into a time (docs/prediction.md, "Calibration"). `predict` uses it
// for its predictions, `run --dry-run` for its estimates; both read it here, the same way.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "convlab/cards.hpp"

namespace convbench {

struct CalibrationFlags {
  std::optional<std::string> sweep;   ///< --calibrate SWEEP.csv
  std::optional<std::string> card;    ///< --calibrate-card ID
  std::optional<std::string> device;  ///< --calibrate-device cpu|gpu
};

/// Adds the three flags to a command; `purpose` ends --calibrate's help, e.g. "(predict)".
void add_calibration_options(CLI::App* command, CalibrationFlags& flags,
                             const std::string& purpose);

/// The calibration the flags name, or nullopt without --calibrate. The card the sweep ran on
/// is --calibrate-card (looked up in `cards`), else found from the sweep's devices line (a
/// GPU name that is part of exactly one card's name); a CPU sweep needs --calibrate-card.
/// UsageError for an unreadable sweep, an unknown or unfound card, or rows from several
/// devices without --calibrate-device.
std::optional<convlab::Calibration> load_calibration(const CalibrationFlags& flags,
                                                     const convlab::CardDatabase& cards);

/// The metadata line of a calibration: "SWEEP on CARD (DEVICE): ALGO EFF over N cases
/// (per-case LOW..HIGH); ...", or "none".
std::string describe_calibration(const std::optional<convlab::Calibration>& calibration,
                                 const CalibrationFlags& flags);

}  // namespace convbench
