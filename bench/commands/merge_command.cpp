// `convbench merge OUT IN...`: the CSVs of a sharded sweep as one, after checking that they
// were run with the same settings (exit 2 otherwise, nothing written). Missing and duplicate
// cases are reported on stderr (exit 1; the merged file keeps the first of duplicates).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "commands/commands.hpp"
#include "convlab/error.hpp"
#include "options/cli.hpp"
#include "output/output_file.hpp"
#include "output/results_file.hpp"
#include "sweep/shards.hpp"
#include "sweep/sweep_identity.hpp"
#include "sweep/workers.hpp"

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

// The numbers merge reads from a file's metadata are checked like any input: a hand-edited
// or damaged file is bad input naming the file and the key, not an exception from stoll.
int64_t count_of(const SweepFile& f, const std::string& key) {
  const std::string& text = *f.meta_value(key);
  if (text.empty() || text.size() > 15 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError("merge: '" + f.path + "': the metadata " + key + " '" + text +
                     "' is not a count");
  }
  return std::stoll(text);
}

bool is_part(const SweepFile& f) { return f.meta_value("shard") || f.meta_value("worker"); }

std::optional<Shard> shard_of(const SweepFile& f) {
  const std::string* text = f.meta_value("shard");
  if (!text) return std::nullopt;
  return parse_shard(*text, "merge: '" + f.path + "': the metadata shard");
}

}  // namespace

int run_merge(const MergeOptions& o, const std::string& command_line) {
  const bool json = o.out.size() > 5 && o.out.compare(o.out.size() - 5, 5, ".json") == 0;
  if (!json && !(o.out.size() > 4 && o.out.compare(o.out.size() - 4, 4, ".csv") == 0)) {
    throw UsageError("merge: OUT '" + o.out + "': name it .csv or .json");
  }
  std::vector<InputPath> inputs;
  for (const std::string& in : o.inputs) inputs.push_back({in, "IN"});
  check_output_path(o.out, "merge: OUT", inputs);
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
    // Parts of one sweep (shards, workers) must share its case list; whole sweeps of other
    // layers with the same settings may be combined.
    const std::string difference =
        settings_difference(files[0], files[i], is_part(files[0]) || is_part(files[i]));
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
      const std::string group = group_key(r.suite, r.layer, r.descriptor, r.pass);
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
  const std::string* sweep_cases = is_part(files[0]) ? files[0].meta_value("sweep_cases") : nullptr;
  if (files[0].meta_value("shard")) {
    const int64_t n = shard_of(files[0])->count;
    std::set<int64_t> present;
    for (const SweepFile& f : files) {
      if (const std::optional<Shard> s = shard_of(f)) {
        present.insert(s->index);
        shards_text += (shards_text.empty() ? "" : ", ") + s->text();
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
    const int64_t expected = count_of(files[0], "sweep_cases");
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
  OutputFile output(o.out, "merge: OUT", OutputFile::OnAbandon::remove);
  const std::string partial = output.partial();
  const Summary summary =
      write_sweep(output.begin(), json ? Format::json : Format::csv, files, skip,
                  {"shard", "shard_source", "shard_cases", "worker"}, extra);
  if (ok) {
    output.commit();
  } else {
    output.keep();
  }

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
    std::cerr << "convbench merge: " << o.out << " not written; the merged rows are in " << partial
              << "\n";
  }
  return ok ? 0 : 1;
}

}  // namespace convbench
