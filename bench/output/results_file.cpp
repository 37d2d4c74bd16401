// Reading a convbench CSV back, torn last row included (output/results_file.hpp).
#include "output/results_file.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "convlab/error.hpp"
#include "convlab/text_input.hpp"
#include "sweep/sweep_identity.hpp"

namespace convbench {

const std::string* SweepFile::meta_value(const std::string& key) const {
  for (const auto& [k, v] : meta) {
    if (k == key) return &v;
  }
  return nullptr;
}

int SweepFile::column(const std::string& name) const {
  auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<int>(it - header.begin());
}

std::string SweepFile::key(std::size_t row) const {
  auto field = [&](const char* name) {
    const int c = column(name);
    return c < 0 ? std::string() : rows[row][c];
  };
  return case_key(field("suite"), field("layer"), field("descriptor"), field("pass"),
                  field("algorithm"), field("device"));
}

namespace {

// One RFC 4180 record from `pos`; `complete` says whether it ended in a line break.
std::vector<std::string> record(const std::string& text, size_t& pos, bool& complete,
                                bool& well_formed) {
  std::vector<std::string> fields(1);
  bool quoted = false, after_quote = false;
  complete = false;
  well_formed = true;
  while (pos < text.size()) {
    const char ch = text[pos++];
    if (quoted) {
      if (ch != '"') {
        fields.back() += ch;
      } else if (pos < text.size() && text[pos] == '"') {
        fields.back() += '"';
        ++pos;
      } else {
        quoted = false;
        after_quote = true;
      }
    } else if (ch == '"' && fields.back().empty() && !after_quote) {
      quoted = true;
    } else if (ch == ',') {
      fields.emplace_back();
      after_quote = false;
    } else if (ch == '\n') {
      complete = true;
      break;
    } else if (ch != '\r') {
      if (after_quote) well_formed = false;
      fields.back() += ch;
    }
  }
  if (quoted) well_formed = false;
  return fields;
}

}  // namespace

SweepFile read_sweep_file(const std::string& path) {
  // Bounded like every input (convlab/text_input.hpp): /dev/zero or a huge file given to
  // merge or --resume costs at most the limit, and is refused naming it.
  const std::string text = convlab::read_text_file(path, "sweep CSV");
  SweepFile f;
  f.path = path;
  size_t pos = 0;
  int line = 0;
  while (pos < text.size() && text[pos] == '#') {
    const size_t eol = text.find('\n', pos);
    const std::string l = text.substr(pos, eol == std::string::npos ? eol : eol - pos);
    pos = eol == std::string::npos ? text.size() : eol + 1;
    ++line;
    const size_t colon = l.find(": ");
    if (l.rfind("# ", 0) == 0 && colon != std::string::npos) {
      f.meta.emplace_back(l.substr(2, colon - 2), l.substr(colon + 2));
    }
  }
  bool complete = false, ok = true;
  ++line;
  f.header = record(text, pos, complete, ok);
  if (!complete || !ok || f.column("descriptor") < 0 || f.column("algorithm") < 0) {
    throw convlab::Error(convlab::ErrorCode::io,
                         path + ":" + std::to_string(line) + ": no convbench CSV header");
  }
  f.complete_bytes = pos;
  while (pos < text.size()) {
    ++line;
    const size_t start = pos;
    std::vector<std::string> fields = record(text, pos, complete, ok);
    if (fields.size() == 1 && fields[0].empty() && complete) {
      f.complete_bytes = pos;
      continue;
    }
    const bool good = ok && fields.size() == f.header.size();
    if (!complete || (!good && pos >= text.size())) {
      f.torn_bytes = text.size() - start;  // the last row, cut short by a kill
      break;
    }
    if (!good) {
      throw convlab::Error(convlab::ErrorCode::io,
                           path + ":" + std::to_string(line) + ": malformed row (" +
                               std::to_string(fields.size()) + " fields, the header has " +
                               std::to_string(f.header.size()) + ")");
    }
    f.rows.push_back(std::move(fields));
    f.complete_bytes = pos;
  }
  return f;
}

Row row_from_file(const SweepFile& f, std::size_t i) {
  const std::vector<std::string>& v = f.rows[i];
  auto text = [&](const char* name) {
    const int c = f.column(name);
    return c < 0 ? std::string() : v[c];
  };
  auto real = [&](const char* name) -> std::optional<double> {
    const std::string t = text(name);
    char* end = nullptr;
    const double d = std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size()) return std::nullopt;
    return d;
  };
  auto integer = [&](const char* name) -> std::optional<int64_t> {
    const std::string t = text(name);
    char* end = nullptr;
    const long long n = std::strtoll(t.c_str(), &end, 10);
    if (t.empty() || end != t.c_str() + t.size()) return std::nullopt;
    return static_cast<int64_t>(n);
  };
  Row r;
  r.suite = text("suite"), r.layer = text("layer"), r.descriptor = text("descriptor");
  r.pass = text("pass"), r.algorithm = text("algorithm"), r.device = text("device");
  const std::string status = text("status");
  r.status = status == "unsupported"   ? Status::unsupported
             : status == "over_budget" ? Status::over_budget
             : status == "error"       ? Status::error
                                       : Status::ok;
  r.reason = text("reason");
  r.plan_ms = real("plan_ms"), r.time_ms = real("time_ms");
  r.time_ms_min = real("time_ms_min"), r.time_ms_max = real("time_ms_max");
  r.cv = real("cv");
  r.reps = integer("reps"), r.gflops = real("gflops");
  r.workspace_bytes = integer("workspace_bytes"), r.total_bytes = integer("total_bytes");
  r.max_abs_err = real("max_abs_err"), r.max_rel_err = real("max_rel_err");
  r.plan_kernel = text("plan_kernel"), r.plan_transform = text("plan_transform");
  r.plan_tile = text("plan_tile"), r.plan_workspace_split = text("plan_workspace_split");
  r.plan_details = text("plan_details"), r.knobs = text("knobs");
  r.math_mode = text("math_mode"), r.family = text("family");
  return r;
}

}  // namespace convbench
