#pragma once
/// \file
/// oneDNN benchdnn convolution problem descriptors and shape files.
///
/// A descriptor such as `g1mb32ic64ih56iw56oc64oh56ow56kh3kw3sh1sw1ph1pw1dh0dw0n"name"` is
/// read exactly as benchdnn reads it:
///  - entries are a key and a decimal number; `_` is ignored and may separate entries;
///  - `n"..."` (last) names the layer; a trailing `*K` in the name is its repeat count;
///  - mb defaults to 2, g to 1; ic, oc, a spatial input size and a kernel size are required;
///  - a dimension given only in h (or only in w) is copied to the other (iw<-ih, kw<-kh,
///    ow<-oh, sw<-sh, pw<-ph, dw<-dh);
///  - dilation 0 is dense (benchdnn's convention): ConvProblem::dilation = d + 1;
///  - padding not given is deduced from a given output size as benchdnn does: the floor of
///    half the total padding at the start (top/left), the rest at the end (bottom/right);
///    a given output size with a given padding sets the end padding that produces it; an
///    output size that needs a negative padding is refused (benchdnn would crop).
/// convlab is stricter than benchdnn in two ways: a key given twice is an error, and the
/// 3-D keys (id, od, kd, sd, pd, dd) and right padding keys (rh, rw) are refused here.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "convlab/problem.hpp"

namespace convlab {

/// A named layer as a shape file lists it.
struct Layer {
  ConvProblem problem;
  std::string name;    ///< the name without its `*K` suffix; may be empty
  int64_t repeat = 1;  ///< how often the layer occurs in its network (the `*K` suffix)
};

/// Parses one descriptor. Throws Error{invalid_argument} that quotes the descriptor and says
/// what was expected at which character (1-based), or Error{invalid_problem} when it parses
/// but is no valid convolution.
Layer parse_descriptor(std::string_view text);

/// The canonical descriptor: every key written, in benchdnn order, dilation as benchdnn's
/// d-1, the name (with `*K` when repeat > 1) last; the end paddings are carried by oh/ow.
/// parse_descriptor(format_descriptor(p)) gives back p whenever p's end padding is the one
/// nearest its start padding among those giving the same output size (always so for
/// symmetric problems and for parsed ones); otherwise it gives back the same convolution
/// with that end padding (the rows between them are never read).
std::string format_descriptor(const ConvProblem& problem, std::string_view name = {},
                              int64_t repeat = 1);
std::string format_descriptor(const Layer& layer);

/// The keys of a 2-D descriptor in canonical order: g mb ic ih iw oc oh ow kh kw sh sw ph pw
/// dh dw.
const std::vector<std::string>& descriptor_keys();

/// `text` with the given keys set, read by parse_descriptor's own tokenizer: a key given in
/// `text` keeps its place with the new value, a key not given is added after the others, and
/// the name becomes `name` (none when empty; a `*K` repeat goes with the old name). The result
/// is not validated: parse it. Throws Error{invalid_argument} for a malformed `text` (as
/// parse_descriptor does) or a key that is no descriptor key.
std::string edit_descriptor(std::string_view text,
                            const std::vector<std::pair<std::string, int64_t>>& values,
                            std::string_view name);

/// Parses the text of a benchdnn shape file: one descriptor per line, `#` starts a comment,
/// blank lines are skipped. Errors name `source` and the line number.
std::vector<Layer> parse_shape_text(std::string_view text, std::string_view source);

/// Reads a shape file. Errors: Error{io} for a missing, unreadable or non-regular file (a
/// directory), Error{invalid_argument} for a binary or empty file or a bad line.
std::vector<Layer> read_shape_file(const std::string& path);

}  // namespace convlab
