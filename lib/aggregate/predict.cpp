// Roofline prediction: each algorithm family's own flop and byte counts, the roofline on a
// card, and calibration from a measured sweep.
//
// The counts (docs/prediction.md derives them; n, c, h, w, k, r, s, g as in ConvProblem,
// OH x OW the output, D = 2 n k OH OW (c/g) r s the direct-convolution flops, T = the bytes
// of x, w and y, each read or written once):
//
// Which count an algorithm gets follows its AlgorithmInfo::family (algorithm_family()):
//   direct:  flops = D                      bytes = T
//            The least any strategy moves; vendor, direct and Winograd kernels are
//            predicted with it, so their roofline is a lower bound.
//   im2col (family gemm):
//            flops = D (+ n c r s OH OW adds for col2im in backward-data)
//            bytes = T + 2 * COL, COL = 4 n c r s OH OW (the column buffer of every image,
//            written by im2col and read by the GEMM, or written by the GEMM and read by
//            col2im); COL = 0 for 1x1 stride-1 unpadded layers, which skip im2col.
//            The GEMM is taken to read its operands once (blocked GEMMs come close).
//   fft:     Hf x Wf = the transform size of the executors' shared geometry
//            (lib/strategy/fft_geometry.hpp: the smallest 2,3,5,7-smooth sizes with no
//            wraparound reaching a kept output); M = Hf Wf; B = Hf (Wf/2 + 1) bins.
//            transforms  P = n c + k c/g + n k      (the same count in every pass: two
//                        tensors forward, one back, e.g. forward x, w -> y)
//            flops = P * 2.5 M log2 M               (a real FFT costs half the classic
//                                                    5 N log2 N of a complex one)
//                  + 8 B n (c/g) (k/g) g            (complex multiply-add = 8 flops per
//                                                    bin, per group [n x c/g][c/g x k/g])
//            bytes = T + P * (2 * 8 B + 2 * 4 M)    (each spectrum written once and read
//                                                    once; each real staging plane too)
//
// The roofline of a count on a card is max(flops / fp32 peak, bytes / bandwidth). A
// calibration divides it by the efficiency the algorithm reached on the card a sweep was
// measured on, efficiency = sum(roofline) / sum(measured) over the sweep's cases, and the
// range divides it by the largest and smallest per-case ratio roofline / measured.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <set>

#include "convlab/cards.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/enum_names.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "convlab/text_input.hpp"
#include "strategy/fft_geometry.hpp"

namespace convlab {

constexpr auto kAlgorithmFamilyNames = enum_names<AlgorithmFamily::fft>({
    {AlgorithmFamily::direct, "direct"},
    {AlgorithmFamily::im2col, "im2col"},
    {AlgorithmFamily::fft, "fft"},
});

const char* to_string(AlgorithmFamily family) noexcept {
  return name_of(kAlgorithmFamilyNames, family);
}

AlgorithmFamily algorithm_family(const AlgorithmInfo& info) { return algorithm_family(info.family); }

AlgorithmFamily algorithm_family(Family family) {
  switch (family) {
    case Family::gemm: return AlgorithmFamily::im2col;
    case Family::fft:
    case Family::fft_tiled: return AlgorithmFamily::fft;
    case Family::reference:
    case Family::direct:
    case Family::winograd:
    case Family::vendor: return AlgorithmFamily::direct;
  }
  return AlgorithmFamily::direct;
}

AlgorithmFamily algorithm_family(std::string_view algorithm) {
  return algorithm_family(registry().get(algorithm).info());
}

WorkCount work_count(AlgorithmFamily family, const ConvProblem& p, Pass pass) {
  p.validate();
  const double n = p.n, c = p.c, k = p.k, g = p.groups, r = p.r, s = p.s;
  const double oh = p.out_h(), ow = p.out_w();
  const double direct = static_cast<double>(p.flops(pass));
  const double tensors = static_cast<double>(p.tensor_bytes().total());
  WorkCount work;
  switch (family) {
    case AlgorithmFamily::direct:
      work.flops = direct;
      work.bytes = tensors;
      work.model = "direct";
      break;
    case AlgorithmFamily::im2col: {
      const bool pointwise = p.r == 1 && p.s == 1 && p.stride_h == 1 && p.stride_w == 1 &&
                             p.pad_h == 0 && p.pad_w == 0 && p.end_pad_h() == 0 &&
                             p.end_pad_w() == 0;
      const double col = pointwise ? 0.0 : 4.0 * n * c * r * s * oh * ow;
      work.flops = direct + (pass == Pass::backward_data && !pointwise ? col / 4.0 : 0.0);
      work.bytes = tensors + 2.0 * col;
      work.model = pointwise ? "im2col 1x1 (no column buffer)" : "im2col";
      break;
    }
    case AlgorithmFamily::fft: {
      // The transform size and bins of the executors' shared geometry.
      const FftGeometry geo = fft_geometry(p, pass);
      const double m = static_cast<double>(geo.h.size) * static_cast<double>(geo.w.size);
      const double bins = static_cast<double>(geo.bins);
      const double transforms = n * c + k * (c / g) + n * k;
      work.flops = transforms * 2.5 * m * std::log2(std::max(m, 2.0)) +
                   8.0 * bins * n * (c / g) * (k / g) * g;
      work.bytes = tensors + transforms * (2.0 * 8.0 * bins + 2.0 * 4.0 * m);
      work.model = "fft " + std::to_string(geo.h.size) + "x" + std::to_string(geo.w.size);
      break;
    }
  }
  return work;
}

WorkCount work_count(std::string_view algorithm, const ConvProblem& problem, Pass pass) {
  return work_count(algorithm_family(algorithm), problem, pass);
}

Prediction roofline(const WorkCount& work, const Card& card) {
  Prediction p;
  p.work = work;
  p.compute_ms = work.flops / card.fp32_flops_per_s * 1e3;
  p.memory_ms = work.bytes / card.bandwidth_bytes_per_s * 1e3;
  p.memory_bound = p.memory_ms > p.compute_ms;
  p.time_ms = std::max(p.compute_ms, p.memory_ms);
  return p;
}

Prediction predict(const AlgorithmInfo& algorithm, const ConvProblem& problem, Pass pass,
                   const Card& card, const Calibration* calibration) {
  Prediction p = roofline(work_count(algorithm_family(algorithm), problem, pass), card);
  if (calibration) {
    if (const Calibration::Entry* e = calibration->find(algorithm.name)) {
      const double roofline_ms = p.time_ms;
      p.efficiency = e->efficiency;
      p.calibrated = true;
      p.time_ms = roofline_ms / e->efficiency;
      if (e->min_ratio > 0 && e->max_ratio >= e->min_ratio) {
        // The efficiency is a time-weighted mean of the per-case ratios, so it lies between
        // them; min/max with the point only absorbs rounding when every ratio is the same.
        p.range = PredictedRange{std::min(p.time_ms, roofline_ms / e->max_ratio),
                                 std::max(p.time_ms, roofline_ms / e->min_ratio)};
      }
    }
  }
  return p;
}

Prediction predict(std::string_view algorithm, const ConvProblem& problem, Pass pass,
                   const Card& card, const Calibration* calibration) {
  return predict(registry().get(algorithm).info(), problem, pass, card, calibration);
}

const Calibration::Entry* Calibration::find(std::string_view algorithm) const {
  auto it = by_algorithm.find(std::string(algorithm));
  return it == by_algorithm.end() ? nullptr : &it->second;
}

Calibration calibrate(const std::vector<MeasuredTime>& times, const Card& measured_on,
                      std::string_view device) {
  std::set<std::string> devices;
  for (const MeasuredTime& t : times) {
    if (device.empty() || t.device == device) devices.insert(t.device);
  }
  if (devices.size() > 1) {
    std::string list;
    for (const std::string& d : devices) list += (list.empty() ? "" : ", ") + ("'" + d + "'");
    throw Error(ErrorCode::invalid_argument, "the measured times come from several devices (" +
                                                 list + "): calibrate on one of them");
  }
  if (devices.empty()) {
    throw Error(ErrorCode::invalid_argument,
                device.empty() ? std::string("no measured time to calibrate on")
                               : "no measured time from device '" + std::string(device) + "'");
  }
  Calibration cal;
  cal.card_id = measured_on.id;
  cal.device = *devices.begin();
  std::map<std::string, std::pair<double, double>> sums;  // predicted, measured
  for (const MeasuredTime& t : times) {
    if (t.device != cal.device) continue;
    if (!(t.time_ms > 0)) {
      throw Error(ErrorCode::invalid_argument,
                  "measured time of " + t.algorithm + " " + to_string(t.pass) + " " +
                      t.problem.descriptor() + " is not positive: " + std::to_string(t.time_ms));
    }
    const AlgorithmFamily family =
        t.family ? algorithm_family(*t.family) : algorithm_family(t.algorithm);
    const double predicted =
        roofline(work_count(family, t.problem, t.pass), measured_on).time_ms;
    const double ratio = predicted / t.time_ms;
    Calibration::Entry& e = cal.by_algorithm[t.algorithm];
    e.min_ratio = e.cases == 0 ? ratio : std::min(e.min_ratio, ratio);
    e.max_ratio = e.cases == 0 ? ratio : std::max(e.max_ratio, ratio);
    ++e.cases;
    sums[t.algorithm].first += predicted;
    sums[t.algorithm].second += t.time_ms;
  }
  for (auto& [name, entry] : cal.by_algorithm) {
    entry.efficiency = sums[name].first / sums[name].second;
  }
  return cal;
}

namespace {

// RFC 4180 fields of one record starting at `pos`; advances `pos` past the record and its
// line break. Quoted fields may hold commas, quotes ("") and line breaks.
std::vector<std::string> csv_record(std::string_view text, size_t& pos, bool& ok) {
  std::vector<std::string> fields(1);
  bool quoted = false, was_quoted = false;
  ok = true;
  while (pos < text.size()) {
    const char ch = text[pos++];
    if (quoted) {
      if (ch == '"') {
        if (pos < text.size() && text[pos] == '"') {
          fields.back() += '"';
          ++pos;
        } else {
          quoted = false;
        }
      } else {
        fields.back() += ch;
      }
    } else if (ch == '"' && fields.back().empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (ch == ',') {
      fields.emplace_back();
      was_quoted = false;
    } else if (ch == '\n') {
      break;
    } else if (ch == '\r') {
      if (pos < text.size() && text[pos] == '\n') ++pos;
      break;
    } else {
      if (was_quoted) ok = false;  // text after a closing quote
      fields.back() += ch;
    }
  }
  if (quoted) ok = false;  // unterminated quote: a torn last row
  return fields;
}

double parse_real(const std::string& text, const std::string& where) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    throw Error(ErrorCode::invalid_argument,
                where + ": '" + excerpt(text, 40) + "' is not a number");
  }
  if (!std::isfinite(v)) {  // inf, nan, or beyond double's range such as 1e400
    throw Error(ErrorCode::invalid_argument,
                where + ": '" + excerpt(text, 40) + "' is not a finite number");
  }
  return v;
}

}  // namespace

std::vector<MeasuredTime> parse_measured_times(std::string_view text, std::string_view source) {
  const std::string src(source);
  size_t pos = 0;
  int line = 0;
  // Skip the metadata block: lines starting with '#' before the header.
  while (pos < text.size() && text[pos] == '#') {
    const size_t eol = text.find('\n', pos);
    pos = eol == std::string_view::npos ? text.size() : eol + 1;
    ++line;
  }
  bool ok = true;
  ++line;
  const std::vector<std::string> header = csv_record(text, pos, ok);
  auto column = [&](const char* name, bool required) -> int {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) {
      if (!required) return -1;
      throw Error(ErrorCode::invalid_argument,
                  src + ":" + std::to_string(line) + ": the header has no '" + name + "' column");
    }
    return static_cast<int>(it - header.begin());
  };
  const int c_desc = column("descriptor", true), c_pass = column("pass", true);
  const int c_algo = column("algorithm", true), c_time = column("time_ms", true);
  const int c_dev = column("device", false), c_status = column("status", false);
  const int c_min = column("time_ms_min", false), c_max = column("time_ms_max", false);
  const int c_family = column("family", false);
  std::vector<MeasuredTime> out;
  while (pos < text.size()) {
    ++line;
    const std::vector<std::string> f = csv_record(text, pos, ok);
    const std::string where = src + ":" + std::to_string(line);
    if (f.size() == 1 && f[0].empty()) continue;  // blank line
    if (!f[0].empty() && f[0][0] == '#') continue;
    if (!ok || f.size() != header.size()) {
      throw Error(ErrorCode::invalid_argument,
                  where + ": malformed row (" + std::to_string(f.size()) + " fields, header has " +
                      std::to_string(header.size()) + ")");
    }
    if (c_status >= 0 && f[c_status] != "ok") continue;
    MeasuredTime t;
    try {
      t.problem = parse_descriptor(f[c_desc]).problem;
      t.pass = parse_pass(f[c_pass]);
      if (c_family >= 0 && !f[c_family].empty()) t.family = parse_family(f[c_family]);
    } catch (const Error& e) {
      throw Error(ErrorCode::invalid_argument, where + ": " + e.what());
    }
    t.algorithm = f[c_algo];
    t.device = c_dev >= 0 ? f[c_dev] : std::string();
    t.time_ms = parse_real(f[c_time], where + " time_ms");
    t.time_ms_min = c_min >= 0 && !f[c_min].empty() ? parse_real(f[c_min], where) : t.time_ms;
    t.time_ms_max = c_max >= 0 && !f[c_max].empty() ? parse_real(f[c_max], where) : t.time_ms;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<MeasuredTime> read_measured_times(const std::string& path) {
  return parse_measured_times(read_text_file(path, "sweep file"), path);
}

}  // namespace convlab
