// libFuzzer target: the benchdnn descriptor parser, problem validation and the geometry the
// strategies derive from a problem. Built two ways from this one file:
//   - fuzz/CMakeLists.txt (clang, -fsanitize=fuzzer,address,undefined): the fuzzer itself;
//   - fuzz/replay.cmake (the normal build, any compiler): fuzz_replay, which feeds every file
//     of fuzz/corpus to LLVMFuzzerTestOneInput, so the test command replays the corpus.
//
// Not just "does not crash": each input is checked against the properties the rest of the
// library relies on, and a violation aborts with a message (a finding, in either build):
//   - the parser throws only convlab::Error, with code invalid_argument or invalid_problem
//     and a message that quotes the input (any other exception escapes and aborts);
//   - a parsed problem validates, and parse(format(parse(x))) gives back the same layer;
//     format is a fixed point (format(parse(format(p))) == format(p));
//   - a problem that validates has positive element, byte and flop counts whose sums fit;
//   - the im2col geometry of a valid problem maps every sampled column element inside x;
//   - the FFT geometry of every pass: smooth sizes at or above the bound of its file comment
//     (recomputed here), one-to-one placements, no wraparound onto a kept output (checked
//     exhaustively per axis), aligned workspace buffers that do not overlap and add up to
//     total_bytes, and per-bin GEMM operands inside their spectra. (Sizes are not checked
//     against the padded extent L + 2P: by design padding shares wrapped slots.)
//
// An input is read in one of two modes, by its first byte:
//   0x01: a binary ConvProblem (14 fields, see read_fields) and FFT geometry options (5 more
//         fields) -> validate -> the checks above;
//   else: text, parsed as one descriptor and as a shape file (one descriptor per line).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "convlab/descriptor.hpp"
#include "convlab/error.hpp"
#include "convlab/problem.hpp"
#include "strategy/fft_geometry.hpp"
#include "strategy/im2col_index.hpp"

namespace {

using convlab::ConvProblem;
using convlab::Error;
using convlab::ErrorCode;
using convlab::Layer;
using convlab::Pass;

[[noreturn]] void violated(const std::string& what, const std::string& input) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n  input: '%s'\n", what.c_str(), input.c_str());
  std::fflush(stderr);
  std::abort();
}

// The message is built only when the check fails: the target runs thousands of checks per
// input, and eager strings would dominate its speed.
#define CHECK(ok, what, input)          \
  do {                                  \
    if (!(ok)) violated((what), input); \
  } while (0)

// A printable copy of the input for messages (control bytes as \xNN).
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char ch : text.substr(0, 300)) {
    if (ch >= 0x20 && ch < 0x7f) {
      out += static_cast<char>(ch);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", ch);
      out += buf;
    }
  }
  return out;
}

// An Error from parsing or validation: one of the two input codes, and a message.
void check_input_error(const Error& e, const std::string& input) {
  CHECK(e.code() == ErrorCode::invalid_argument || e.code() == ErrorCode::invalid_problem,
        std::string("parse/validate threw code ") + convlab::to_string(e.code()) + ": " + e.what(),
        input);
  CHECK(std::strlen(e.what()) > 0, "an Error with an empty message", input);
}

// Positive counts, bytes = 4 * elements, and every sum the memory model forms fits.
void check_counts(const ConvProblem& p, const std::string& input) {
  CHECK(
      p.out_h() >= 1 && p.out_w() >= 1,
      "a valid problem with output " + std::to_string(p.out_h()) + "x" + std::to_string(p.out_w()),
      input);
  CHECK(p.x_elems() >= 1 && p.w_elems() >= 1 && p.y_elems() >= 1, "non-positive elements", input);
  CHECK(p.x_bytes() == 4 * p.x_elems() && p.w_bytes() == 4 * p.w_elems() &&
            p.y_bytes() == 4 * p.y_elems(),
        "bytes != 4 * elements", input);
  const convlab::TensorBytes t = p.tensor_bytes();
  int64_t total = 0;
  try {
    total = t.total();
  } catch (const Error& e) {
    violated(std::string("a valid problem whose total tensor bytes overflow: ") + e.what(), input);
  }
  CHECK(total >= t.x && total >= t.w && total >= t.y, "total bytes < a tensor's bytes", input);
  for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
    CHECK(p.flops(pass) >= 2, "non-positive flops", input);
  }
  // The output size formula of DESIGN.md, evaluated without overflow (validate bounds it).
  const int64_t span_h = p.h + p.pad_h + p.end_pad_h() - p.dilated_r();
  CHECK(span_h >= 0 && p.out_h() == span_h / p.stride_h + 1, "out_h disagrees with the formula",
        input);
  const int64_t span_w = p.w + p.pad_w + p.end_pad_w() - p.dilated_s();
  CHECK(span_w >= 0 && p.out_w() == span_w / p.stride_w + 1, "out_w disagrees with the formula",
        input);
}

// The im2col geometry (shared by cpu.im2col and cuda.im2col): offsets of sampled column
// elements stay inside the group's slice of x, and the tap ranges agree with input_coord.
void check_im2col(const ConvProblem& p, const std::string& input) {
  for (int64_t images : {int64_t{1}, p.n}) {
    convlab::Im2colGeometry g;
    try {
      g = convlab::make_im2col_geometry(p, images);
    } catch (const Error& e) {
      // Only a column buffer too large for int64 may be refused.
      CHECK(e.code() == ErrorCode::invalid_problem,
            std::string("im2col geometry refused a valid problem: ") + e.what(), input);
      continue;
    }
    CHECK(convlab::col_rows(g) == p.c_per_group() * p.r * p.s, "col_rows", input);
    CHECK(convlab::col_pixels(g) == p.out_h() * p.out_w(), "col_pixels", input);
    const int64_t group_span = p.c_per_group() * p.h * p.w;
    const int64_t x_span = (images - 1) * g.image_stride + group_span;
    // Sample the corners and the middle of the column buffer.
    const int64_t rows = convlab::col_rows(g), cols = convlab::col_cols(g);
    for (int64_t row : {int64_t{0}, rows / 2, rows - 1}) {
      for (int64_t col : {int64_t{0}, cols / 2, cols - 1}) {
        const int64_t src = convlab::im2col_source(g, row, col);
        CHECK(src >= -1 && src < x_span,
              "im2col_source(" + std::to_string(row) + ", " + std::to_string(col) +
                  ") = " + std::to_string(src) + " outside [0, " + std::to_string(x_span) + ")",
              input);
      }
    }
    for (int64_t tap : {int64_t{0}, p.r - 1}) {
      const convlab::OutputRange range =
          convlab::valid_outputs(p.h, p.out_h(), tap, p.pad_h, p.stride_h, p.dilation_h);
      CHECK(range.begin >= 0 && range.begin <= range.end && range.end <= p.out_h(),
            "valid_outputs range outside [0, out_h)", input);
      for (int64_t o : {range.begin, range.end - 1}) {
        if (o < range.begin || o >= range.end) continue;
        const int64_t in = convlab::input_coord(o, tap, p.pad_h, p.stride_h, p.dilation_h);
        CHECK(in >= 0 && in < p.h, "valid_outputs yields an output reading padding", input);
        CHECK(convlab::output_coord(in, tap, p.pad_h, p.stride_h, p.dilation_h, p.out_h()) == o,
              "output_coord is not the inverse of input_coord", input);
      }
    }
  }
}

// One axis of the FFT geometry against the file comment of fft_geometry.hpp, recomputed.
void check_fft_axis(const char* axis_name, const convlab::FftAxis& axis, int64_t size, int64_t pad,
                    int64_t stride, int64_t dilation, int64_t taps, int64_t outputs,
                    const convlab::FftAxisPlacement& x, const convlab::FftAxisPlacement& w,
                    const convlab::FftAxisPlacement& y, const std::string& input) {
  const std::string where = std::string("fft ") + axis_name + ": ";
  const int64_t f = axis.size;
  CHECK(f >= axis.needed && convlab::fft_is_smooth(f),
        where + "size " + std::to_string(f) + " is not a smooth size >= needed " +
            std::to_string(axis.needed),
        input);
  const int64_t dilated = (taps - 1) * dilation + 1;
  const int64_t e = (outputs - 1) * stride + dilated - pad;
  const int64_t used = e < 0 ? 0 : (e > size ? size : e);
  CHECK(x.offset == pad && x.step == 1 && x.count == used,
        where + "x placement (" + std::to_string(x.offset) + ", " + std::to_string(x.step) + ", " +
            std::to_string(x.count) + ") != (pad, 1, used " + std::to_string(used) + ")",
        input);
  CHECK(w.offset == 0 && w.step == dilation && w.count == taps, where + "w placement", input);
  CHECK(y.offset == 0 && y.step == stride && y.count == outputs, where + "y placement", input);
  CHECK(
      f >= dilated && f >= (outputs - 1) * stride + 1 && (used == 0 || (f >= e && f >= used + pad)),
      where + "size " + std::to_string(f) + " below the no-wraparound bound", input);
  // One-to-one placements: each tensor's last slot inside the plane.
  CHECK(used == 0 || convlab::fft_slot(x, used - 1) < f, where + "x overflows the plane", input);
  CHECK(convlab::fft_slot(w, taps - 1) < f, where + "w overflows the plane", input);
  CHECK(convlab::fft_slot(y, outputs - 1) < f, where + "y overflows the plane", input);
  // No wraparound: no (output o, tap u) meets a placed input t = i + pad modulo f unless it
  // meets it exactly. Per (o, u) the only candidate is t0 = pad + ((v - pad) mod f).
  if (used == 0 || outputs > 4096 || taps > 4096 || outputs * taps > (1 << 14)) return;
  for (int64_t o = 0; o < outputs; ++o) {
    for (int64_t u = 0; u < taps; ++u) {
      const int64_t v = o * stride + u * dilation;
      const int64_t t0 = pad + (((v - pad) % f) + f) % f;
      CHECK(t0 >= pad + used || t0 == v,
            where + "wraparound: output " + std::to_string(o) + " tap " + std::to_string(u) +
                " meets input " + std::to_string(t0 - pad) + " modulo " + std::to_string(f),
            input);
    }
  }
}

void check_fft(const ConvProblem& p, const convlab::FftGeometryOptions& options,
               const std::string& input) {
  using convlab::FftTensor;
  for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_filter}) {
    convlab::FftGeometry g;
    try {
      g = convlab::fft_geometry(p, pass, options);
    } catch (const Error& e) {
      // A workspace too large for int64 (invalid_problem) or options it refuses.
      CHECK(e.code() == ErrorCode::invalid_problem || e.code() == ErrorCode::invalid_argument,
            std::string("fft_geometry threw ") + convlab::to_string(e.code()) + ": " + e.what(),
            input);
      continue;
    }
    check_fft_axis("h", g.h, p.h, p.pad_h, p.stride_h, p.dilation_h, p.r, p.out_h(), g.x.h, g.wt.h,
                   g.y.h, input);
    check_fft_axis("w", g.w, p.w, p.pad_w, p.stride_w, p.dilation_w, p.s, p.out_w(), g.x.w, g.wt.w,
                   g.y.w, input);
    CHECK(g.half_w == g.w.size / 2 + 1 && g.bins == g.h.size * g.half_w, "fft bins", input);
    CHECK(!options.even_w || g.w.size % 2 == 0, "fft even_w gave an odd width", input);
    CHECK(g.x_planes == p.n * p.c && g.w_planes == p.k * p.c_per_group() && g.y_planes == p.n * p.k,
          "fft plane counts", input);
    CHECK(g.plane_stride >= g.bins, "fft plane stride < bins", input);
    if (options.layout == convlab::FftSpectrumLayout::plane_major) {
      CHECK(g.plane_stride % options.bin_multiple == 0, "fft plane stride not a multiple", input);
    }
    // The workspace: in order, aligned, disjoint, sized by the formula, summing to total.
    const convlab::FftBuffer* buffers[] = {&g.spectra_x, &g.spectra_w, &g.spectra_y, &g.staging,
                                           &g.library_work};
    const int64_t expected_bytes[] = {
        g.x_planes * g.plane_stride * 8, g.w_planes * g.plane_stride * 8,
        g.y_planes * g.plane_stride * 8, g.staging_planes * g.h.size * g.w.size * 4,
        options.library_work_bytes};
    int64_t end = 0;
    for (int i = 0; i < 5; ++i) {
      const convlab::FftBuffer& b = *buffers[i];
      CHECK(b.bytes >= 0 && b.offset >= end && b.offset % options.alignment == 0,
            "fft buffer " + std::to_string(i) + " at " + std::to_string(b.offset) + " (" +
                std::to_string(b.bytes) + " bytes) overlaps, is misaligned or negative",
            input);
      CHECK(b.bytes == expected_bytes[i],
            "fft buffer " + std::to_string(i) + " has " + std::to_string(b.bytes) +
                " bytes, expected " + std::to_string(expected_bytes[i]),
            input);
      end = b.offset + b.bytes;
    }
    CHECK(g.total_bytes == end, "fft total_bytes != end of the last buffer", input);
    CHECK(g.staging_planes >= 1, "fft staging planes < 1", input);
    // The per-bin product reads and writes planes inside each operand's spectra.
    const convlab::FftGemm& m = g.gemm;
    auto in_range = [&](const convlab::FftOperand& o, int64_t rows, int64_t cols) {
      const int64_t last = convlab::fft_operand_plane(o, m.groups - 1, rows - 1, cols - 1);
      return convlab::fft_operand_plane(o, 0, 0, 0) == 0 && last < convlab::fft_planes(g, o.tensor);
    };
    CHECK(m.groups == p.groups && in_range(m.a, m.m, m.l) && in_range(m.b, m.l, m.n) &&
              in_range(m.out, m.m, m.n),
          "fft gemm operand outside its spectra", input);
    CHECK(m.out.tensor == g.output, "fft gemm writes a tensor other than the output", input);
  }
}

void check_valid_problem(const ConvProblem& p, const std::string& input,
                         const convlab::FftGeometryOptions& options) {
  check_counts(p, input);
  check_im2col(p, input);
  check_fft(p, options, input);
}

// Options for text inputs: the defaults, and the plane-major layout cpu.fft uses.
void check_valid_problem(const ConvProblem& p, const std::string& input) {
  check_counts(p, input);
  check_im2col(p, input);
  check_fft(p, {}, input);
  convlab::FftGeometryOptions plane_major;
  plane_major.layout = convlab::FftSpectrumLayout::plane_major;
  plane_major.bin_multiple = 16;
  plane_major.alignment = 64;
  plane_major.staging_planes = 2;
  plane_major.library_work_bytes = 1000;
  check_fft(p, plane_major, input);
}

// A layer that parsed: it validates and survives format -> parse unchanged.
void check_layer(const Layer& layer, const std::string& input) {
  try {
    layer.problem.validate();
  } catch (const Error& e) {
    violated(std::string("a parsed problem does not validate: ") + e.what(), input);
  }
  const std::string canonical = convlab::format_descriptor(layer);
  Layer back;
  try {
    back = convlab::parse_descriptor(canonical);
  } catch (const Error& e) {
    violated("the canonical form '" + canonical + "' does not parse: " + e.what(), input);
  }
  CHECK(back.problem == layer.problem,
        "parse(format(p)) != p: '" + canonical + "' parses to " + back.problem.descriptor(), input);
  CHECK(back.name == layer.name && back.repeat == layer.repeat,
        "parse(format(p)) changes the name or repeat of '" + canonical + "'", input);
  CHECK(convlab::format_descriptor(back) == canonical, "format is not a fixed point", input);
  CHECK(layer.problem.descriptor() == convlab::format_descriptor(layer.problem),
        "descriptor() != format_descriptor()", input);
  CHECK(layer.repeat >= 1, "repeat < 1", input);
  check_valid_problem(layer.problem, input);
}

void fuzz_text(std::string_view text) {
  const std::string input = printable(text);
  try {
    check_layer(convlab::parse_descriptor(text), input);
  } catch (const Error& e) {
    check_input_error(e, input);
  }
  try {
    for (const Layer& layer : convlab::parse_shape_text(text, "fuzz")) check_layer(layer, input);
  } catch (const Error& e) {
    check_input_error(e, input);
    CHECK(std::string_view(e.what()).rfind("fuzz:", 0) == 0,
          std::string("a shape-text error that does not name the source: ") + e.what(), input);
  }
}

// Binary mode: 19 fields (14 of the problem, 5 of the FFT options), each a tag byte then its value:
// tag>>6 == 0: tag & 63; 1: -(tag & 63); 2: the next 2 bytes (little endian, 0..65535); 3: the next
// 8 bytes as an int64.
std::vector<int64_t> read_fields(const uint8_t* data, size_t size) {
  std::vector<int64_t> fields;
  size_t pos = 0;
  while (fields.size() < 19) {
    if (pos >= size) {
      fields.push_back(1);
      continue;
    }
    const uint8_t tag = data[pos++];
    const int64_t small = tag & 63;
    switch (tag >> 6) {
      case 0:
        fields.push_back(small);
        break;
      case 1:
        fields.push_back(-small);
        break;
      case 2: {
        uint64_t v = 0;
        for (int i = 0; i < 2 && pos < size; ++i) v |= uint64_t{data[pos++]} << (8 * i);
        fields.push_back(static_cast<int64_t>(v));
        break;
      }
      default: {
        uint64_t v = 0;
        for (int i = 0; i < 8 && pos < size; ++i) v |= uint64_t{data[pos++]} << (8 * i);
        int64_t s = 0;
        std::memcpy(&s, &v, sizeof s);
        fields.push_back(s);
        break;
      }
    }
  }
  return fields;
}

void fuzz_binary(const uint8_t* data, size_t size) {
  const std::vector<int64_t> f = read_fields(data, size);
  ConvProblem p;
  p.n = f[0], p.c = f[1], p.h = f[2], p.w = f[3], p.k = f[4], p.r = f[5], p.s = f[6];
  p.pad_h = f[7], p.pad_w = f[8], p.stride_h = f[9], p.stride_w = f[10];
  p.dilation_h = f[11], p.dilation_w = f[12], p.groups = f[13];
  std::string input = "binary problem";
  for (int64_t v : f) input += " " + std::to_string(v);
  // descriptor() must be safe on any problem: every error message uses it.
  const std::string descriptor = p.descriptor();
  try {
    p.validate();
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_problem,
          std::string("validate threw code ") + convlab::to_string(e.code()), input);
    CHECK(std::string_view(e.what()).find(descriptor) != std::string_view::npos,
          std::string("validate's message does not name the problem: ") + e.what(), input);
    return;
  }
  Layer layer;
  layer.problem = p;
  check_layer(layer, input);
  // The same problem under fuzzed FFT geometry options (refused ones must throw
  // invalid_argument, which check_fft accepts).
  convlab::FftGeometryOptions options;
  options.layout = (f[14] & 1) ? convlab::FftSpectrumLayout::plane_major
                               : convlab::FftSpectrumLayout::frequency_major;
  options.even_w = (f[14] & 2) != 0;
  options.staging_planes = f[15];
  options.library_work_bytes = f[16];
  options.alignment = f[17];
  options.bin_multiple = f[18];
  check_valid_problem(p, input, options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // descriptors are short; long inputs only slow the search
  if (size >= 1 && data[0] == 0x01) {
    fuzz_binary(data + 1, size - 1);
  } else {
    fuzz_text(std::string_view(reinterpret_cast<const char*>(data), size));
  }
  return 0;
}
