// `convbench compare A B`: reads both files with the sweep reader of --resume and merge, and
// writes the comparison as a table (stdout), CSV or JSON. The verdict rule is in compare.hpp.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands/commands.hpp"
#include "commands/compare.hpp"
#include "convlab/error.hpp"
#include "options/cli.hpp"
#include "output/fields.hpp"
#include "output/output_file.hpp"
#include "output/report.hpp"
#include "output/reporters.hpp"
#include "output/table.hpp"

namespace convbench {

namespace {

namespace fs = std::filesystem;

// What identifies a run, shown beside the comparison so the reader knows what was compared.
const char* const kRunKeys[] = {"git_commit", "date",      "host", "cpu",
                                "threads",    "libraries", "reps", "command"};

std::string real_or_empty(const std::optional<double>& value) {
  return value ? format_real(*value) : "";
}

std::string integer_or_empty(const std::optional<int64_t>& value) {
  return value ? std::to_string(*value) : "";
}

const std::vector<FieldColumn>& csv_columns() {
  static const std::vector<FieldColumn> columns = [] {
    std::vector<FieldColumn> c = {{"suite"}, {"layer"},     {"descriptor"},
                                  {"pass"},  {"algorithm"}, {"device"}};
    for (const std::string side : {"a_", "b_"}) {
      c.push_back({side + "status"});
      for (const char* name : {"time_ms", "time_ms_min", "time_ms_max"}) {
        c.push_back({side + name, FieldType::real});
      }
      c.push_back({side + "reps", FieldType::integer});
      c.push_back({side + "cv", FieldType::real});
    }
    c.push_back({"ratio", FieldType::real});
    c.push_back({"p_value", FieldType::real});
    c.push_back({"verdict"});
    c.push_back({"note"});
    return c;
  }();
  return columns;
}

Fields fields_of(const CaseComparison& c) {
  const Row& id = c.row();
  Fields f = {{"suite", id.suite},
              {"layer", id.layer},
              {"descriptor", id.descriptor},
              {"pass", id.pass},
              {"algorithm", id.algorithm},
              {"device", id.device},
              {"ratio", real_or_empty(c.ratio)},
              {"p_value", real_or_empty(c.p_value)},
              {"verdict", to_string(c.verdict)},
              {"note", c.note}};
  auto side = [&f](const std::string& p, const std::optional<Row>& r) {
    if (!r) return;
    f[p + "status"] = to_string(r->status);
    f[p + "time_ms"] = real_or_empty(r->time_ms);
    f[p + "time_ms_min"] = real_or_empty(r->time_ms_min);
    f[p + "time_ms_max"] = real_or_empty(r->time_ms_max);
    f[p + "reps"] = integer_or_empty(r->reps);
    f[p + "cv"] = real_or_empty(r->cv);
  };
  side("a_", c.a);
  side("b_", c.b);
  return f;
}

nlohmann::ordered_json summary_json(const RatioSummary& s) {
  nlohmann::ordered_json j;
  j["geomean"] = s.geomean ? nlohmann::ordered_json(*s.geomean) : nlohmann::ordered_json();
  j["compared"] = s.compared;
  for (const Verdict v : {Verdict::faster, Verdict::slower, Verdict::within_noise,
                          Verdict::too_few_reps, Verdict::not_compared}) {
    j[to_string(v)] = s.verdicts.count(v) ? s.verdicts.at(v) : 0;
  }
  return j;
}

// "1.043 over 12 cases: 2 slower, 0 faster, 10 within_noise, ..."
std::string summary_line(const RatioSummary& s) {
  std::string text = (s.geomean ? format_real(*s.geomean) : std::string("none")) + " over " +
                     std::to_string(s.compared) + " cases:";
  bool first = true;
  for (const Verdict v : {Verdict::slower, Verdict::faster, Verdict::within_noise,
                          Verdict::too_few_reps, Verdict::not_compared}) {
    const int64_t n = s.verdicts.count(v) ? s.verdicts.at(v) : 0;
    if (!n && (v == Verdict::too_few_reps || v == Verdict::not_compared)) continue;
    text += std::string(first ? " " : ", ") + std::to_string(n) + " " + to_string(v);
    first = false;
  }
  return text;
}

Context compare_context(const SweepFile& a, const SweepFile& b, const CompareOptions& o,
                        const Comparison& cmp, const std::string& command_line) {
  Context context;
  context["compare_a"] = a.path;
  context["compare_b"] = b.path;
  for (const auto& [prefix, file] :
       {std::pair<const char*, const SweepFile*>{"a_", &a}, {"b_", &b}}) {
    for (const char* key : kRunKeys) {
      if (const std::string* v = file->meta_value(key)) context[prefix + std::string(key)] = *v;
    }
  }
  context["alpha"] = format_real(o.alpha);
  context["geomean_ratio"] = cmp.overall.geomean ? format_real(*cmp.overall.geomean) : "none";
  context["compare_command"] = command_line;
  return context;
}

std::string time_with_range(const std::optional<Row>& r) {
  if (!r) return "-";
  if (r->status != Status::ok || !r->time_ms) return to_string(r->status);
  std::string text = format_real(*r->time_ms);
  if (r->time_ms_min && r->time_ms_max) {
    text += " [" + format_real(*r->time_ms_min) + ", " + format_real(*r->time_ms_max) + "]";
  }
  return text;
}

void write_table(std::ostream& out, const Context& context, const Comparison& cmp) {
  for (const auto& [key, value] : context.items()) {
    if (key != "compare_command") out << key << ": " << context_text(value) << "\n";
  }
  out << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const CaseComparison& c : cmp.cases) {
    const Row& id = c.row();
    auto cv = [](const std::optional<Row>& r) { return r ? real_or_empty(r->cv) : ""; };
    rows.push_back({id.layer.empty() ? id.descriptor : id.layer, id.pass, id.algorithm,
                    time_with_range(c.a), time_with_range(c.b), real_or_empty(c.ratio), cv(c.a),
                    cv(c.b), c.note.empty() ? to_string(c.verdict) : c.note});
  }
  print_table(out,
              {"layer", "pass", "algorithm", "A ms [min, max]", "B ms [min, max]", "B/A", "cv A",
               "cv B", "verdict"},
              rows);
  out << "\ngeometric mean of B/A: " << summary_line(cmp.overall) << "\n";
  if (cmp.by_algorithm.size() > 1) {
    for (const auto& [name, s] : cmp.by_algorithm) {
      out << "  " << name << ": " << summary_line(s) << "\n";
    }
  }
}

void write_json(std::ostream& out, const Context& context, const Comparison& cmp) {
  nlohmann::ordered_json j;
  j["context"] = context;
  j["summary"] = summary_json(cmp.overall);
  for (const auto& [name, s] : cmp.by_algorithm) j["by_algorithm"][name] = summary_json(s);
  j["cases"] = nlohmann::ordered_json::array();
  for (const CaseComparison& c : cmp.cases) {
    const nlohmann::ordered_json row = fields_json(fields_of(c), csv_columns(), AbsentField::null);
    j["cases"].push_back(row);
  }
  out << j.dump(1) << "\n";
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() > suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

SweepFile read_input(const std::string& path, const char* which) {
  try {
    SweepFile file = read_sweep_file(path);
    for (const char* column : {"descriptor", "pass", "algorithm", "status", "time_ms"}) {
      if (file.column(column) < 0) {
        throw UsageError(std::string("compare: ") + which + " '" + path +
                         "' is not a convbench run CSV: no column '" + column + "'");
      }
    }
    if (file.torn_bytes) {
      std::cerr << "convbench compare: " << path << ": ignored a torn last row (" << file.torn_bytes
                << " bytes)\n";
    }
    return file;
  } catch (const convlab::Error& e) {
    throw UsageError(std::string("compare: ") + which + ": " + e.what());
  }
}

}  // namespace

int run_compare(const CompareOptions& o, const std::string& command_line) {
  std::error_code ec;
  if (o.out) {
    if (!ends_with(*o.out, ".csv") && !ends_with(*o.out, ".json")) {
      throw UsageError("compare: --out '" + *o.out + "': name it .csv or .json");
    }
    check_output_path(*o.out, "compare: --out", {{o.a, "A"}, {o.b, "B"}});
  }
  const SweepFile a = read_input(o.a, "A");
  const SweepFile b = read_input(o.b, "B");
  const Comparison cmp = compare_sweeps(a, b, o.alpha);
  const bool any_common = std::any_of(cmp.cases.begin(), cmp.cases.end(),
                                      [](const CaseComparison& c) { return c.a && c.b; });
  if (!any_common) {
    throw UsageError("compare: '" + o.a + "' and '" + o.b +
                     "' have no case in common (suite, layer, descriptor, pass, algorithm, "
                     "device)");
  }
  for (const std::string& d : cmp.duplicates) {
    std::cerr << "convbench compare: duplicate case, the first is used: " << d << "\n";
  }
  const Context context = compare_context(a, b, o, cmp, command_line);
  std::vector<Fields> rows;
  for (const CaseComparison& c : cmp.cases) rows.push_back(fields_of(c));

  write_report(o.format, o.out, "compare: --out",
               [&](std::ostream& out, const std::string& format) {
                 if (format == "table") write_table(out, context, cmp);
                 if (format == "csv") write_fields_csv(out, context, csv_columns(), rows);
                 if (format == "json") write_json(out, context, cmp);
               });
  return 0;
}

}  // namespace convbench
