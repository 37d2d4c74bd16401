#include "convlab/descriptor.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <sstream>

#include "convlab/error.hpp"
#include "convlab/text_input.hpp"

namespace convlab {
namespace {

// The keys of a 2-D benchdnn conv descriptor, in canonical order.
enum Key { kG, kMb, kIc, kIh, kIw, kOc, kOh, kOw, kKh, kKw, kSh, kSw, kPh, kPw, kDh, kDw, kCount };
constexpr std::array<const char*, kCount> kKeyNames = {"g",  "mb", "ic", "ih", "iw", "oc",
                                                       "oh", "ow", "kh", "kw", "sh", "sw",
                                                       "ph", "pw", "dh", "dw"};

// The keys as messages list them: "g mb ic ... dw".
std::string key_list() {
  std::string list;
  for (const char* k : kKeyNames) list += (list.empty() ? "" : " ") + std::string(k);
  return list;
}

// Descriptors are quoted in messages up to this length (a shape-file line may be long).
constexpr size_t kQuotedChars = 200;

[[noreturn]] void parse_error(std::string_view text, size_t pos, const std::string& what) {
  throw Error(ErrorCode::invalid_argument, "bad descriptor '" + excerpt(text, kQuotedChars) +
                                               "': at character " + std::to_string(pos + 1) + ": " +
                                               what);
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Layer parse() {
    scan();
    return build();
  }

  // Where each given key's entry (key and number) and the name (n"...") stand in the text.
  struct Span {
    size_t begin = 0, end = 0;
  };
  const std::array<Span, kCount>& entries() const { return spans_; }
  bool given(int key) const { return given_[key]; }
  std::optional<Span> name_span() const { return name_span_; }

  // Reads every entry and the name without building the problem.
  void scan() {
    if (text_.empty()) parse_error(text_, 0, "expected a descriptor, got an empty string");
    size_t pos = 0;
    while (pos < text_.size()) {
      const char ch = text_[pos];
      if (ch == '_') {
        ++pos;
        continue;
      }
      if (!std::isalpha(static_cast<unsigned char>(ch))) {
        parse_error(text_, pos, std::string("expected a key such as 'mb' or 'ic', got '") + ch +
                                    "'");
      }
      const size_t key_start = pos;
      std::string_view key = read_key(pos);
      pos += key.size();
      if (key == "n") {
        const size_t end = parse_name(pos);
        name_span_ = Span{key_start, end};
        pos = end;
        continue;
      }
      const int index = key_index(key, key_start);
      if (given_[index]) {
        parse_error(text_, key_start, "key '" + std::string(key) + "' given twice");
      }
      pos = parse_number(pos, key, &values_[index]);
      given_[index] = true;
      spans_[index] = Span{key_start, pos};
    }
  }

 private:
  // Keys are one or two letters; like benchdnn, take the known key the text starts with, so
  // that "icX" reads as key "ic" followed by a bad number.
  std::string_view read_key(size_t pos) const {
    static constexpr std::array<const char*, 24> kAll = {
        "mb", "ic", "ih", "iw", "oc", "oh", "ow", "kh", "kw", "sh", "sw", "ph",
        "pw", "dh", "dw", "id", "od", "kd", "sd", "pd", "dd", "rh", "rw", "g"};
    for (const char* k : kAll) {
      const std::string_view key(k);
      if (text_.substr(pos, key.size()) == key) return text_.substr(pos, key.size());
    }
    if (text_[pos] == 'n') return text_.substr(pos, 1);
    size_t end = pos;
    while (end < text_.size() && std::isalpha(static_cast<unsigned char>(text_[end]))) ++end;
    return text_.substr(pos, end - pos);
  }

  int key_index(std::string_view key, size_t pos) const {
    for (int i = 0; i < kCount; ++i) {
      if (key == kKeyNames[i]) return i;
    }
    static constexpr std::array<const char*, 6> k3d = {"id", "od", "kd", "sd", "pd", "dd"};
    for (const char* k : k3d) {
      if (key == k) {
        parse_error(text_, pos, "key '" + std::string(key) +
                                    "' describes a 3-D convolution; convlab supports 2-D only");
      }
    }
    if (key == "rh" || key == "rw") {
      parse_error(text_, pos,
                  "key '" + std::string(key) +
                      "' (right padding) is not supported: as in benchdnn, the end "
                      "padding follows from a given output size (oh, ow)");
    }
    parse_error(text_, pos,
                "unknown key '" + excerpt(key, 20) + "': expected one of " + key_list() + " n");
  }

  size_t parse_number(size_t pos, std::string_view key, int64_t* out) const {
    const size_t start = pos;
    bool negative = false;
    if (pos < text_.size() && text_[pos] == '-') {
      negative = true;
      ++pos;
    }
    if (pos >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos]))) {
      parse_error(text_, pos, "expected a number after '" + std::string(key) + "'");
    }
    int64_t value = 0;
    while (pos < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos]))) {
      const int digit = text_[pos] - '0';
      if (__builtin_mul_overflow(value, int64_t{10}, &value) ||
          __builtin_add_overflow(value, negative ? -digit : digit, &value)) {
        parse_error(text_, start, "the number for '" + std::string(key) + "' overflows int64");
      }
      ++pos;
    }
    *out = value;
    return pos;
  }

  size_t parse_name(size_t pos) {
    if (has_name_) parse_error(text_, pos - 1, "key 'n' given twice");
    if (pos >= text_.size() || text_[pos] != '"') {
      parse_error(text_, pos, "expected '\"' to open the name after 'n'");
    }
    const size_t close = text_.find('"', pos + 1);
    if (close == std::string_view::npos) {
      parse_error(text_, pos, "unterminated name: no closing '\"'");
    }
    std::string_view name = text_.substr(pos + 1, close - pos - 1);
    // A name is one field of a CSV row and of a resume journal line: no line breaks there.
    for (size_t i = 0; i < name.size(); ++i) {
      const unsigned char ch = static_cast<unsigned char>(name[i]);
      if (ch < 0x20 || ch == 0x7f) {
        parse_error(text_, pos + 1 + i,
                    "the layer name holds a control character (" + excerpt(name.substr(i, 1)) +
                        "); names are printable text");
      }
    }
    const size_t star = name.rfind('*');
    if (star != std::string_view::npos && star + 1 < name.size() &&
        name.find_first_not_of("0123456789", star + 1) == std::string_view::npos) {
      int64_t repeat = 0;
      for (size_t i = star + 1; i < name.size(); ++i) {
        if (__builtin_mul_overflow(repeat, int64_t{10}, &repeat) ||
            __builtin_add_overflow(repeat, int64_t{name[i] - '0'}, &repeat)) {
          parse_error(text_, pos + 1 + star, "the repeat count '*N' overflows int64");
        }
      }
      if (repeat <= 0) parse_error(text_, pos + 1 + star, "the repeat count '*N' must be >= 1");
      layer_.repeat = repeat;
      name = name.substr(0, star);
    }
    layer_.name = std::string(name);
    has_name_ = true;
    size_t after = close + 1;
    if (after < text_.size()) {
      parse_error(text_, after,
                  "expected the end of the descriptor after the name, got '" +
                      excerpt(text_.substr(after), 40) + "'");
    }
    return after;
  }

  // Copies a spatial dimension given only in h to w (or the other way round), benchdnn's
  // promotion of square shapes.
  void promote() {
    // As in benchdnn, a dimension counts as given when one of its entries differs from the
    // default (so "dw0" or "sw1" alone does not stop the promotion).
    auto set = [&](Key key, int64_t default_value) {
      return given_[key] && values_[key] != default_value;
    };
    const bool any_h = given_[kIh] || given_[kOh] || given_[kKh] || set(kSh, 1) ||
                       set(kPh, 0) || set(kDh, 0);
    const bool any_w = given_[kIw] || given_[kOw] || given_[kKw] || set(kSw, 1) ||
                       set(kPw, 0) || set(kDw, 0);
    const std::array<std::pair<Key, Key>, 6> pairs = {
        {{kIh, kIw}, {kOh, kOw}, {kKh, kKw}, {kSh, kSw}, {kPh, kPw}, {kDh, kDw}}};
    for (auto [hk, wk] : pairs) {
      if (!any_w && given_[hk]) {
        values_[wk] = values_[hk];
        given_[wk] = true;
      } else if (!any_h && given_[wk]) {
        values_[hk] = values_[wk];
        given_[hk] = true;
      }
    }
  }

  Layer build() {
    promote();
    auto require = [&](Key key, const char* what) {
      if (!given_[key]) {
        parse_error(text_, text_.size(), std::string("missing '") + kKeyNames[key] + "' (" +
                                             what + ")");
      }
    };
    require(kIc, "input channels");
    require(kOc, "output channels");
    require(kIh, "input height");
    require(kIw, "input width");
    require(kKh, "kernel height");
    require(kKw, "kernel width");

    ConvProblem& p = layer_.problem;
    p.groups = given_[kG] ? values_[kG] : 1;
    p.n = given_[kMb] ? values_[kMb] : 2;
    p.c = values_[kIc];
    p.k = values_[kOc];
    p.h = values_[kIh];
    p.w = values_[kIw];
    p.r = values_[kKh];
    p.s = values_[kKw];
    p.stride_h = given_[kSh] ? values_[kSh] : 1;
    p.stride_w = given_[kSw] ? values_[kSw] : 1;
    // benchdnn's dilation 0 is dense; ours is 1. Overflow is left to validate().
    p.dilation_h = given_[kDh] ? values_[kDh] + (values_[kDh] < INT64_MAX ? 1 : 0) : 1;
    p.dilation_w = given_[kDw] ? values_[kDw] + (values_[kDw] < INT64_MAX ? 1 : 0) : 1;
    deduce_padding("h", kOh, kPh, p.h, p.r, p.stride_h, p.dilated_r(), &p.pad_h, &p.pad_h_end);
    deduce_padding("w", kOw, kPw, p.w, p.s, p.stride_w, p.dilated_s(), &p.pad_w, &p.pad_w_end);
    p.validate();
    check_output("oh", kOh, p.out_h());
    check_output("ow", kOw, p.out_w());
    return layer_;
  }

  // The paddings of one spatial axis, set as benchdnn's conv descriptor reader sets them
  // (tests/benchdnn/conv/conv_aux.cpp str2desc, desc_t::init_pad_r in conv.hpp):
  //   start: the given ph; else, when oh is given,
  //            ph = ((oh - 1) * sh - ih + ((kh - 1) * (dh + 1) + 1)) / 2   (C division);
  //          else 0.
  //   end:   ph_r = (oh - 1) * sh - ih + ((kh - 1) * (dh + 1) + 1) - ph.
  // So a given oh whose total padding is odd puts the floor on the start side and the rest on
  // the end side, and a given oh with a given ph sets the end padding to whatever makes oh.
  // Without a given oh the end padding equals the start one.
  // With stride s, every end padding in [ph_r, ph_r + s - 1] gives the same output size and
  // the same values (the extra rows are never read); convlab keeps the one nearest ph, so a
  // symmetric problem stays symmetric and parse(format(p)) == p.
  // benchdnn hands a negative padding to oneDNN, which then crops the input; convlab only
  // pads, so an oh that needs a negative padding is refused, naming it.
  void deduce_padding(const char* axis, Key out_key, Key pad_key, int64_t in, int64_t kernel,
                      int64_t stride, int64_t dilated, int64_t* pad,
                      std::optional<int64_t>* pad_end) const {
    *pad = given_[pad_key] ? values_[pad_key] : 0;
    pad_end->reset();
    const int64_t out = values_[out_key];
    // Invalid sizes are reported by validate(); the given output size is checked after it.
    if (!given_[out_key] || out <= 0 || in <= 0 || kernel <= 0 || stride <= 0 ||
        dilated == INT64_MAX || *pad < 0) {
      return;
    }
    const std::string out_name = std::string("o") + axis;
    int64_t total = 0;  // (out - 1) * stride - in + dilated: both paddings together
    if (__builtin_mul_overflow(out - 1, stride, &total) ||
        __builtin_sub_overflow(total, in, &total) ||
        __builtin_add_overflow(total, dilated, &total)) {
      throw Error(ErrorCode::invalid_problem, quoted() + ": the given " + out_name + " " +
                                                  std::to_string(out) +
                                                  " needs a padding that overflows int64");
    }
    if (!given_[pad_key]) *pad = total / 2;
    int64_t end_min = 0, end_max = 0;  // the end paddings that give `out`
    if (__builtin_sub_overflow(total, *pad, &end_min)) {
      throw Error(ErrorCode::invalid_problem, quoted() + ": the given " + out_name + " " +
                                                  std::to_string(out) +
                                                  " needs an end padding that overflows int64");
    }
    if (__builtin_add_overflow(end_min, stride - 1, &end_max)) end_max = INT64_MAX;
    if (*pad < 0 || end_max < 0) {
      throw Error(ErrorCode::invalid_problem,
                  quoted() + ": no padding gives the given " + out_name + " " +
                      std::to_string(out) + " (input " + std::to_string(in) + ", dilated kernel " +
                      std::to_string(dilated) + ", stride " + std::to_string(stride) +
                      "): benchdnn's rule needs padding " + std::to_string(*pad) +
                      " at the start and " + std::to_string(end_min) +
                      " at the end, and convlab pads, it does not crop");
    }
    const int64_t end = *pad < end_min ? end_min : (*pad > end_max ? end_max : *pad);
    if (end != *pad) *pad_end = end;
  }

  std::string quoted() const { return "bad descriptor '" + excerpt(text_, kQuotedChars) + "'"; }

  void check_output(const char* key, Key index, int64_t computed) const {
    if (given_[index] && values_[index] != computed) {
      throw Error(ErrorCode::invalid_problem,
                  "invalid problem " + layer_.problem.descriptor() + " (from '" +
                      excerpt(text_, kQuotedChars) + "'): given " + key + " " +
                      std::to_string(values_[index]) + " does not match the computed " +
                      std::to_string(computed));
    }
  }

  std::string_view text_;
  std::array<int64_t, kCount> values_{};
  std::array<bool, kCount> given_{};
  bool has_name_ = false;
  std::array<Span, kCount> spans_{};
  std::optional<Span> name_span_;
  Layer layer_;
};

std::string trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

Layer parse_descriptor(std::string_view text) { return Parser(text).parse(); }

const std::vector<std::string>& descriptor_keys() {
  static const std::vector<std::string> keys(kKeyNames.begin(), kKeyNames.end());
  return keys;
}

std::string edit_descriptor(std::string_view text,
                            const std::vector<std::pair<std::string, int64_t>>& values,
                            std::string_view name) {
  Parser parser(text);
  parser.scan();
  std::array<std::optional<int64_t>, kCount> wanted;
  for (const auto& [key, value] : values) {
    const auto* at = std::find(kKeyNames.begin(), kKeyNames.end(), key);
    if (at == kKeyNames.end()) {
      throw Error(ErrorCode::invalid_argument,
                  "unknown descriptor key '" + excerpt(key, 20) + "'; known: " + key_list());
    }
    wanted[at - kKeyNames.begin()] = value;  // a key set twice: the last value holds
  }
  const auto name_span = parser.name_span();
  std::string out(text.substr(0, name_span ? name_span->begin : text.size()));
  std::string appended;
  // From the last entry to the first, so that the offsets of the earlier ones stay valid.
  std::array<int, kCount> order;
  for (int i = 0; i < kCount; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return parser.entries()[a].begin > parser.entries()[b].begin; });
  for (int i : order) {
    if (!wanted[i]) continue;
    const std::string entry = kKeyNames[i] + std::to_string(*wanted[i]);
    if (parser.given(i)) {
      const auto& span = parser.entries()[i];
      out.replace(span.begin, span.end - span.begin, entry);
    }
  }
  for (int i = 0; i < kCount; ++i) {
    if (wanted[i] && !parser.given(i)) appended += kKeyNames[i] + std::to_string(*wanted[i]);
  }
  out += appended;
  if (!name.empty()) out += "n\"" + std::string(name) + "\"";
  return out;
}

// benchdnn's dilation, d - 1, written exactly even for the d = INT64_MIN of an invalid
// problem (every error message formats its problem; found by fuzz/).
static std::string benchdnn_dilation(int64_t d) {
  return d == INT64_MIN ? "-9223372036854775809" : std::to_string(d - 1);
}

std::string format_descriptor(const ConvProblem& p, std::string_view name, int64_t repeat) {
  std::ostringstream out;
  out << "g" << p.groups << "mb" << p.n << "ic" << p.c << "ih" << p.h << "iw" << p.w << "oc"
      << p.k << "oh" << p.out_h() << "ow" << p.out_w() << "kh" << p.r << "kw" << p.s << "sh"
      << p.stride_h << "sw" << p.stride_w << "ph" << p.pad_h << "pw" << p.pad_w << "dh"
      << benchdnn_dilation(p.dilation_h) << "dw" << benchdnn_dilation(p.dilation_w);
  if (!name.empty() || repeat != 1) {
    out << "n\"" << name;
    if (repeat != 1) out << "*" << repeat;
    out << "\"";
  }
  return out.str();
}

std::string format_descriptor(const Layer& layer) {
  return format_descriptor(layer.problem, layer.name, layer.repeat);
}

namespace {

// Shape files list a network's layers: the largest shipped one holds a few hundred lines of
// well under 200 characters. The limits keep a wrong file (/dev/zero, a 100 MB log) from
// costing more than a few tens of MB.
constexpr TextLimits kShapeFileLimits{int64_t{16} << 20, 4096, 0};
constexpr size_t kMaxShapeLayers = 100000;
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

}  // namespace

std::vector<Layer> parse_shape_text(std::string_view text, std::string_view source) {
  std::vector<Layer> layers;
  // Editors on Windows write a byte-order mark and CRLF line ends: both are accepted.
  if (text.substr(0, kUtf8Bom.size()) == kUtf8Bom) text.remove_prefix(kUtf8Bom.size());
  size_t line_start = 0;
  int64_t line_number = 0;
  while (line_start <= text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    ++line_number;
    std::string_view line = text.substr(line_start, line_end - line_start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string where = std::string(source) + ":" + std::to_string(line_number) + ": ";
    if (static_cast<int64_t>(line.size()) > kShapeFileLimits.max_line_bytes) {
      throw Error(ErrorCode::invalid_argument, where + "line of " + std::to_string(line.size()) +
                                                   " characters, more than the limit of " +
                                                   std::to_string(kShapeFileLimits.max_line_bytes) +
                                                   " ('" + excerpt(line, 40) + "')");
    }
    // '#' starts a comment unless it sits inside a quoted name.
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '"') quoted = !quoted;
      if (line[i] == '#' && !quoted) {
        line = line.substr(0, i);
        break;
      }
    }
    std::istringstream tokens{std::string(line)};
    std::string token;
    while (tokens >> token) {
      if (token.rfind("--", 0) == 0) {
        throw Error(ErrorCode::invalid_argument, where + "'" + excerpt(token, 40) +
                                                     "' is a benchdnn option; shape files " +
                                                     "for convbench hold descriptors only");
      }
      if (layers.size() >= kMaxShapeLayers) {
        throw Error(ErrorCode::invalid_argument, where + "more than " +
                                                     std::to_string(kMaxShapeLayers) +
                                                     " descriptors; split the file");
      }
      try {
        layers.push_back(parse_descriptor(token));
      } catch (const Error& e) {
        throw Error(e.code(), where + e.what());
      }
    }
    line_start = line_end + 1;
  }
  return layers;
}

std::vector<Layer> read_shape_file(const std::string& path) {
  const std::string text = read_text_file(path, "shape file", kShapeFileLimits);
  for (unsigned char ch : text) {
    if (ch == 0 || (ch < 0x20 && ch != '\n' && ch != '\r' && ch != '\t')) {
      throw Error(ErrorCode::invalid_argument,
                  "shape file '" + path + "' is not text (it holds control bytes)");
    }
  }
  std::vector<Layer> layers = parse_shape_text(text, path);
  if (layers.empty()) {
    throw Error(
        ErrorCode::invalid_argument,
        "shape file '" + path + "' holds no descriptors" +
            (trim(text).empty() || trim(text) == kUtf8Bom ? " (it is empty)" : " (only comments)"));
  }
  return layers;
}

}  // namespace convlab
