// The sweep files of --resume and merge: reading a convbench CSV back (torn rows included),
// comparing settings, and the --select rows built from a layer and pass's rows.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "convlab/text_input.hpp"
#include "runner.hpp"
#include "sweep_control.hpp"

namespace convbench {

std::string case_key(const std::string& descriptor, const std::string& pass,
                     const std::string& algorithm, const std::string& device) {
  return descriptor + "|" + pass + "|" + algorithm + "|" + device;
}

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
  // Suite and layer are part of the identity so a layer listed twice is two cases.
  return field("suite") + "|" + field("layer") + "|" +
         case_key(field("descriptor"), field("pass"), field("algorithm"), field("device"));
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

bool per_run_key(const std::string& key) {
  return key == "date" || key == "command" || key == "host" || key == "shard" ||
         key == "shard_source" || key == "shard_cases" || key == "worker";
}

std::string settings_difference(const SweepFile& a, const SweepFile& b, bool case_list) {
  std::set<std::string> keys;
  for (const auto& kv : a.meta) keys.insert(kv.first);
  for (const auto& kv : b.meta) keys.insert(kv.first);
  auto differs = [&](const std::string& key) -> std::string {
    const std::string* x = a.meta_value(key);
    const std::string* y = b.meta_value(key);
    if ((x && y && *x == *y) || (!x && !y)) return {};
    return key + ": '" + (x ? *x : "(absent)") + "' vs '" + (y ? *y : "(absent)") + "'";
  };
  const char* const case_keys[] = {"sweep_cases", "sweep_digest"};
  for (const std::string& key : keys) {
    if (per_run_key(key) || key == case_keys[0] || key == case_keys[1]) continue;
    if (std::string d = differs(key); !d.empty()) return d;
  }
  if (a.header != b.header) return "the columns differ";
  if (!case_list) return {};
  for (const char* key : case_keys) {
    if (std::string d = differs(key); !d.empty()) return "the list of cases differs (" + d + ")";
  }
  return {};
}

std::string case_identity(const Case& c) {
  const Row r = make_row(c);
  return r.suite + "|" + r.layer + "|" + case_key(r.descriptor, r.pass, r.algorithm, r.device);
}

std::string row_outside_sweep(const SweepFile& file, const std::vector<Case>& sweep) {
  std::set<std::string> keys;
  for (const Case& c : sweep) keys.insert(case_identity(c));
  const int algorithm = file.column("algorithm");
  for (std::size_t i = 0; i < file.rows.size(); ++i) {
    if (algorithm >= 0 && file.rows[i][algorithm] == "select") continue;
    if (!keys.count(file.key(i))) return file.key(i);
  }
  return {};
}

SelectTracker::SelectTracker(const std::vector<Case>& cases, std::optional<Budget> budget)
    : budget_(std::move(budget)) {
  for (const Case& c : cases) {
    Group& g = groups_[c.suite + "|" + c.layer.name + "|" + c.layer.problem.descriptor() + "|" +
                       convlab::to_string(c.pass)];
    if (!g.first) g.first = &c;
    g.expected.insert(c.algorithm->name());
  }
}

void SelectTracker::already_written(const Row& r) {
  auto it = groups_.find(r.suite + "|" + r.layer + "|" + r.descriptor + "|" + r.pass);
  if (it != groups_.end()) it->second.written = true;
}

std::optional<Row> SelectTracker::add(const Row& row) {
  auto it = groups_.find(row.suite + "|" + row.layer + "|" + row.descriptor + "|" + row.pass);
  if (it == groups_.end() || row.algorithm == "select") return std::nullopt;
  Group& g = it->second;
  g.rows.push_back(row);
  std::set<std::string> seen;
  for (const Row& r : g.rows) seen.insert(r.algorithm);
  if (g.written || seen != g.expected) return std::nullopt;
  g.written = true;
  return select_row(g);
}

Row SelectTracker::select_row(const Group& g) const {
  const Case& c = *g.first;
  Row out = g.rows.front();
  out.algorithm = "select";
  out.status = Status::ok;
  out.reason.clear();
  out.plan_ms = out.time_ms = out.time_ms_min = out.time_ms_max = out.gflops = std::nullopt;
  out.cv = std::nullopt;
  out.reps = out.workspace_bytes = out.total_bytes = std::nullopt;
  out.max_abs_err = out.max_rel_err = std::nullopt;
  out.plan_kernel = out.plan_transform = out.plan_tile = out.plan_workspace_split = "";
  out.plan_details = out.knobs = out.math_mode = out.family = "";
  convlab::TimingTable timings;
  convlab::SelectOptions options;
  for (const Row& r : g.rows) {
    if (r.algorithm == "reference") continue;
    options.candidates.push_back(&convlab::registry().get(r.algorithm));
    if (r.status == Status::ok && r.time_ms && *r.time_ms > 0) {
      timings.add(c.layer.problem, c.pass, r.algorithm, *r.time_ms);
    }
  }
  const int64_t budget = budget_ ? budget_->bytes : std::numeric_limits<int64_t>::max();
  const std::string within = budget_ ? " within " + budget_->label : "";
  if (options.candidates.empty() || timings.size() == 0) {
    const bool refused = std::any_of(g.rows.begin(), g.rows.end(),
                                     [](const Row& r) { return r.status == Status::over_budget; });
    out.status = refused ? Status::over_budget : Status::unsupported;
    out.reason = refused ? "nothing fits" + within
                         : "nothing to choose from: no algorithm of this layer and pass ran";
    return out;
  }
  try {
    const convlab::Selection s =
        convlab::select(c.layer.problem, c.pass, budget, &timings, options);
    if (!s.chosen) {
      out.status = Status::over_budget;
      out.reason = "nothing fits" + within + ": " + s.describe();
      return out;
    }
    for (const Row& r : g.rows) {
      if (r.algorithm != s.chosen->name()) continue;
      out.device = r.device;
      out.plan_ms = r.plan_ms, out.time_ms = r.time_ms, out.time_ms_min = r.time_ms_min;
      out.time_ms_max = r.time_ms_max, out.reps = r.reps, out.gflops = r.gflops;
      out.cv = r.cv;
      out.workspace_bytes = r.workspace_bytes, out.total_bytes = r.total_bytes;
      out.plan_kernel = r.plan_kernel, out.plan_transform = r.plan_transform;
      out.plan_tile = r.plan_tile, out.plan_workspace_split = r.plan_workspace_split;
      out.plan_details = r.plan_details, out.knobs = r.knobs;
      out.math_mode = r.math_mode, out.family = r.family;
    }
    out.reason = "chose " + s.describe() + within;
  } catch (const convlab::Error& e) {
    out.status = Status::error;
    out.reason = std::string("select: ") + e.what();
  }
  return out;
}

}  // namespace convbench
