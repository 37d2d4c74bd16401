#pragma once
/// \file
/// The card database, byte sizes, and the roofline prediction of an algorithm's time.
///
///     const Card& card = card_database().get("gtx970");
///     Prediction p = predict("cpu.fft", problem, Pass::forward, card);
///
/// Figures come from vendor datasheets (lib/src/cards.cpp names each one's source); users add
/// or override cards with a JSON file (CardDatabase::add_json_file). The prediction is a
/// roofline, max(flops / peak, bytes / bandwidth), from each algorithm's own flop and byte
/// counts (work_count), optionally scaled by the efficiency each algorithm reached in a
/// measured sweep (calibrate). docs/prediction.md states the model and its limits.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convlab/algorithm.hpp"
#include "convlab/problem.hpp"

namespace convlab {

/// One accelerator, as its vendor's datasheet describes it.
struct Card {
  std::string id;                    ///< short id for the command line, e.g. "gtx970"
  std::string name;                  ///< e.g. "NVIDIA GeForce GTX 970"
  int64_t memory_bytes = 0;          ///< installed memory
  int64_t usable_bytes = 0;          ///< memory usable at full speed (GTX 970: 3.5 GiB)
  double bandwidth_bytes_per_s = 0;  ///< peak memory bandwidth
  double fp32_flops_per_s = 0;       ///< peak FP32 rate of the CUDA cores (no tensor cores)
  std::string architecture;          ///< e.g. "Maxwell (GM204)"
  int year = 0;                      ///< launch year
  std::string source;                ///< where the figures come from
  /// Throws Error{invalid_argument} naming the card and the field unless the id is a valid
  /// short id, every figure is present and positive, and usable <= memory.
  void validate() const;
};

/// A set of cards: the built-in table, extendable from JSON.
class CardDatabase {
 public:
  /// The built-in table of lib/src/cards.cpp.
  static CardDatabase builtin();
  /// Adds a card, replacing one with the same id. Validates it first.
  void add(Card card);
  /// Reads cards from JSON text: an array of card objects, or {"cards": [...]}. Each object
  /// has id, name, memory (bytes as a number or a size string such as "4GiB"),
  /// bandwidth_gbs (1e9 bytes/s), fp32_tflops, architecture, year; optionally
  /// usable_memory (default: memory) and source (default: `source`). Unknown keys and bad
  /// values are Error{invalid_argument} naming `source`, the card and the key.
  void add_json_text(std::string_view text, std::string_view source);
  /// add_json_text of a file; Error{io} when it cannot be read.
  void add_json_file(const std::string& path);
  /// The card with that id, or nullptr.
  const Card* find(std::string_view id) const;
  /// The card with that id; Error{invalid_argument} naming the id and listing the known ones.
  const Card& get(std::string_view id) const;
  /// "all", or a comma-separated list of ids, in the order given.
  std::vector<const Card*> select(std::string_view list) const;
  const std::vector<Card>& all() const { return cards_; }
  /// The known ids, comma-separated, for messages.
  std::string known_ids() const;

 private:
  std::vector<Card> cards_;
};

/// The process-wide built-in database (CardDatabase::builtin(), made once).
const CardDatabase& card_database();

/// Parses a byte size: a number (a decimal point allowed) and a unit, B, KB, MB, GB, TB
/// (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), case-insensitive, spaces
/// allowed between. A bare number is bytes. "3.5GiB" -> 3758096384. Fractional bytes are
/// rounded down. Error{invalid_argument} quoting the text for anything else (an ambiguous
/// "8G" included) or a size that is not positive or overflows int64.
int64_t parse_size(std::string_view text);

/// Formats bytes for people: "512 B", "1.50 KiB", "3.50 GiB".
std::string format_size(int64_t bytes);

/// How an algorithm's work is counted (docs/prediction.md).
enum class AlgorithmFamily {
  direct,  ///< direct convolution: the direct flops, each tensor moved once (a lower bound)
  im2col,  ///< im2col/col2im + GEMM: the direct flops, tensors + column buffer traffic
  fft,     ///< FFT + per-bin complex GEMM + inverse FFT, tensors + spectra traffic
};
const char* to_string(AlgorithmFamily family) noexcept;

/// How an algorithm's work is counted, from what it says it is (AlgorithmInfo::family):
/// gemm -> im2col; fft and fft_tiled -> fft; everything else (reference, direct, winograd,
/// vendor) -> direct, the least any strategy moves.
AlgorithmFamily algorithm_family(const AlgorithmInfo& info);
AlgorithmFamily algorithm_family(Family family);
/// algorithm_family() of the registered algorithm of that name; Error{invalid_argument}
/// naming an unknown one.
AlgorithmFamily algorithm_family(std::string_view algorithm);

/// The work of one pass by an algorithm family's own count.
struct WorkCount {
  double flops = 0;   ///< floating-point operations
  double bytes = 0;   ///< bytes moved to and from memory
  std::string model;  ///< which count, e.g. "fft 64x64" or "im2col col 1.2 MiB"
};
WorkCount work_count(AlgorithmFamily family, const ConvProblem& problem, Pass pass);
/// work_count(algorithm_family(algorithm), problem, pass).
WorkCount work_count(std::string_view algorithm, const ConvProblem& problem, Pass pass);

/// One measured time from a sweep (a row of a convbench CSV with status ok).
struct MeasuredTime {
  ConvProblem problem;
  Pass pass = Pass::forward;
  std::string algorithm;
  /// The algorithm's family as the row recorded it (a `family` column), so that a sweep made
  /// with algorithms this build lacks (a GPU sweep read on a CPU-only build) can still be
  /// counted; nullopt: the registered algorithm's.
  std::optional<Family> family;
  std::string device;      ///< as the sweep wrote it, e.g. "cpu (2 threads)"
  double time_ms = 0;      ///< median
  double time_ms_min = 0;  ///< fastest repetition (= time_ms when the file has no column)
  double time_ms_max = 0;  ///< slowest repetition (= time_ms when the file has no column)
};

/// Reads the status-ok rows of a convbench CSV (docs/convbench.md): `#` metadata lines are
/// skipped, columns are found by name in the header (descriptor, pass, algorithm, time_ms
/// required; device, status, family, time_ms_min, time_ms_max used when present; others
/// ignored).
/// Error{io} when the file cannot be read, Error{invalid_argument} naming the file and line
/// for a missing column or a bad value.
std::vector<MeasuredTime> read_measured_times(const std::string& path);
/// The same from CSV text; `source` names it in errors.
std::vector<MeasuredTime> parse_measured_times(std::string_view text, std::string_view source);

/// Per-algorithm efficiency measured on one card: efficiency = sum(predicted) /
/// sum(measured) over that algorithm's cases, so that calibrated = roofline / efficiency
/// reproduces the sweep's total time per algorithm.
struct Calibration {
  struct Entry {
    double efficiency = 1;  ///< fraction of the roofline the algorithm reached
    int cases = 0;          ///< measured cases it is based on
    double min_ratio = 0;   ///< smallest per-case predicted/measured ratio
    double max_ratio = 0;   ///< largest per-case predicted/measured ratio
  };
  std::string card_id;  ///< the card the sweep was measured on
  std::string device;   ///< the sweep's device column
  std::map<std::string, Entry> by_algorithm;
  /// The entry of an algorithm, or nullptr when the sweep did not measure it.
  const Entry* find(std::string_view algorithm) const;
};

/// Builds a calibration from measured times taken on `measured_on`. The times must all come
/// from one device (Error{invalid_argument} listing the devices otherwise); pass `device`
/// to pick one of several. Error{invalid_argument} when no time is left to calibrate on.
Calibration calibrate(const std::vector<MeasuredTime>& times, const Card& measured_on,
                      std::string_view device = {});

/// The times a calibrated prediction spans: the roofline divided by the largest and by the
/// smallest per-case ratio of the calibration entry, so each case of the calibrating sweep,
/// predicted with its own ratio, lies inside.
struct PredictedRange {
  double low_ms = 0;   ///< roofline / max_ratio (the case the roofline fit best)
  double high_ms = 0;  ///< roofline / min_ratio (the case the roofline fit worst)
};

/// A predicted time.
struct Prediction {
  double time_ms = 0;         ///< the roofline (divided by the efficiency when calibrated)
  double compute_ms = 0;      ///< flops / peak
  double memory_ms = 0;       ///< bytes / bandwidth
  bool memory_bound = false;  ///< memory_ms > compute_ms
  double efficiency = 1;      ///< the calibration applied (1 when none)
  bool calibrated = false;    ///< whether a calibration entry for the algorithm was applied
  /// Set when calibrated from an entry with per-case ratios; it holds time_ms. An
  /// uncalibrated roofline has none: a bound is not a spread.
  std::optional<PredictedRange> range;
  WorkCount work;
};

/// The roofline of a count on a card.
Prediction roofline(const WorkCount& work, const Card& card);
/// The roofline of an algorithm's pass on a card, divided by the algorithm's efficiency in
/// `calibration` when it has one (an algorithm the calibration lacks stays uncalibrated), with
/// the range of its per-case ratios.
Prediction predict(const AlgorithmInfo& algorithm, const ConvProblem& problem, Pass pass,
                   const Card& card, const Calibration* calibration = nullptr);
/// predict() of the registered algorithm of that name.
Prediction predict(std::string_view algorithm, const ConvProblem& problem, Pass pass,
                   const Card& card, const Calibration* calibration = nullptr);

}  // namespace convlab
