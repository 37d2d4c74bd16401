// `convbench merge OUT IN...`: the CSVs of a sharded sweep as one, after checking that they
// were run with the same settings (exit 2 otherwise, nothing written). Missing and duplicate
// cases are reported on stderr (exit 1; the merged file keeps the first of duplicates).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "cli.hpp"
#include "convlab/error.hpp"
#include "research.hpp"
#include "sweep_control.hpp"
#include "workers.hpp"

namespace convbench {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

int run_merge(const MergeOptions& o, const std::string& command_line) {
  std::error_code ec;
  for (const std::string& in : o.inputs) {
    if (fs::exists(o.out, ec) && fs::exists(in, ec) && fs::equivalent(o.out, in, ec)) {
      throw UsageError("merge: OUT '" + o.out + "' is also an input");
    }
  }
  const bool json = o.out.size() > 5 && o.out.compare(o.out.size() - 5, 5, ".json") == 0;
  if (!json && !(o.out.size() > 4 && o.out.compare(o.out.size() - 4, 4, ".csv") == 0)) {
    throw UsageError("merge: OUT '" + o.out + "': name it .csv or .json");
  }
  check_writable(o.out, "merge: OUT");
  std::vector<SweepFile> files;
  for (const std::string& in : o.inputs) {
    try {
      files.push_back(read_sweep_file(in));
    } catch (const convlab::Error& e) {
      throw UsageError(std::string("merge: ") + e.what());
    }
    if (files.back().torn_bytes) {
      std::cerr << "convbench merge: " << in << ": dropped a torn last row ("
                << files.back().torn_bytes << " bytes)\n";
    }
  }
  for (size_t i = 1; i < files.size(); ++i) {
    const std::string difference = settings_difference(files[0], files[i]);
    if (!difference.empty()) {
      throw UsageError("merge: '" + files[i].path + "' was run with other settings than '" +
                       files[0].path + "' (" + difference + ")");
    }
  }

  // Duplicates: the same case (or select row) twice; the first is kept.
  std::vector<std::vector<bool>> skip(files.size());
  std::map<std::string, std::string> first_seen;  // key -> file
  std::vector<std::string> duplicates;
  // Groups present: suite|layer|descriptor|pass -> algorithms.
  std::map<std::string, std::set<std::string>> groups;
  std::map<std::string, std::string> group_file;
  size_t cases = 0;
  for (size_t f = 0; f < files.size(); ++f) {
    skip[f].assign(files[f].rows.size(), false);
    for (size_t i = 0; i < files[f].rows.size(); ++i) {
      const std::string key = files[f].key(i);
      auto [it, fresh] = first_seen.emplace(key, files[f].path);
      if (!fresh) {
        skip[f][i] = true;
        duplicates.push_back(key + " (in " + it->second + " and " + files[f].path + ")");
        continue;
      }
      const Row r = row_from_file(files[f], i);
      if (r.algorithm == "select") continue;
      ++cases;
      const std::string group = r.suite + "|" + r.layer + "|" + r.descriptor + "|" + r.pass;
      groups[group].insert(r.algorithm);
      group_file.emplace(group, files[f].path);
    }
  }

  // Missing: algorithms absent from a layer and pass that has others; shards without a file;
  // and the count against the sweep's own (sweep_cases), which covers whole lost groups.
  std::vector<std::string> missing;
  const std::string* algorithms = files[0].meta_value("algorithms");
  if (algorithms) {
    const std::vector<std::string> expected = split(*algorithms, ',');
    for (const auto& [group, present] : groups) {
      for (const std::string& a : expected) {
        if (!present.count(a))
          missing.push_back(group + "|" + a + " (its layer and pass are in " + group_file[group] +
                            ")");
      }
    }
  }
  std::string shards_text;
  const std::string* sweep_cases = files[0].meta_value("sweep_cases");
  if (const std::string* shard = files[0].meta_value("shard")) {
    const size_t slash = shard->find('/');
    const int64_t n = slash == std::string::npos ? 0 : std::stoll(shard->substr(slash + 1));
    std::set<int64_t> present;
    for (const SweepFile& f : files) {
      if (const std::string* s = f.meta_value("shard")) {
        present.insert(std::stoll(s->substr(0, s->find('/'))));
        shards_text += (shards_text.empty() ? "" : ", ") + *s;
      }
    }
    for (int64_t i = 1; i <= n; ++i) {
      if (!present.count(i)) {
        missing.push_back("shard " + std::to_string(i) + "/" + std::to_string(n) +
                          ": no file given");
      }
    }
  }
  int64_t unaccounted = 0;
  if (sweep_cases) {
    const int64_t expected = std::stoll(*sweep_cases);
    // Cases named above are among those the count misses; the rest are whole groups.
    unaccounted = expected - static_cast<int64_t>(cases);
    for (const std::string& m : missing) unaccounted -= m.rfind("shard ", 0) != 0;
  }

  std::vector<std::pair<std::string, std::string>> extra = {
      {"merged", std::to_string(files.size()) + " files" +
                     (shards_text.empty() ? "" : " (shards " + shards_text + ")")},
      {"merge_command", command_line}};
  // OUT.partial, renamed over OUT only when the merge succeeds: a merge with duplicate or
  // missing cases (exit 1) leaves an existing OUT as it was and its rows in OUT.partial.
  const bool incomplete = !missing.empty() || unaccounted > 0;
  const bool ok = duplicates.empty() && (!incomplete || o.allow_incomplete);
  const std::string partial = partial_path(o.out);
  std::ofstream out(partial, std::ios::out | std::ios::trunc);
  if (!out) throw convlab::Error(convlab::ErrorCode::io, "merge: cannot write '" + partial + "'");
  const Summary summary = write_sweep(out, json ? Format::json : Format::csv, files, skip,
                                      {"shard", "shard_cases", "worker"}, extra);
  out.close();
  if (!out) throw convlab::Error(convlab::ErrorCode::io, "merge: writing '" + partial + "' failed");
  if (ok) finish_partial(o.out);

  std::cerr << "convbench merge: " << summary.total() << " cases";
  if (sweep_cases) std::cerr << " of the sweep's " << *sweep_cases;
  std::cerr << " from " << files.size() << " files into " << (ok ? o.out : partial) << "\n";
  for (const std::string& d : duplicates) std::cerr << "convbench merge: duplicate: " << d << "\n";
  for (const std::string& m : missing) std::cerr << "convbench merge: missing: " << m << "\n";
  if (unaccounted > 0) {
    std::cerr << "convbench merge: missing: " << unaccounted
              << " more cases (whole layers and passes with no row at all)\n";
  }
  std::cerr << "convbench merge: " << duplicates.size() << " duplicate, "
            << (incomplete ? "incomplete" : "complete") << "\n";
  if (!ok) {
    std::cerr << "convbench merge: " << o.out << " not written; the merged rows are in "
              << partial << "\n";
  }
  return ok ? 0 : 1;
}

}  // namespace convbench
