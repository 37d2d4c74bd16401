// The identity of cases and sweeps (sweep/sweep_identity.hpp).
#include "sweep/sweep_identity.hpp"

#include <cstdint>
#include <cstdio>
#include <set>

#include "output/row.hpp"

namespace convbench {

std::string group_key(const std::string& suite, const std::string& layer,
                      const std::string& descriptor, const std::string& pass) {
  return suite + "|" + layer + "|" + descriptor + "|" + pass;
}

std::string case_key(const std::string& suite, const std::string& layer,
                     const std::string& descriptor, const std::string& pass,
                     const std::string& algorithm, const std::string& device) {
  return group_key(suite, layer, descriptor, pass) + "|" + algorithm + "|" + device;
}

namespace {

uint64_t digest_of(const std::vector<Case>& cases) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a: stable across builds and platforms
  for (const Case& c : cases) {
    std::string key = c.identity;
    for (const auto& [name, value] : c.knobs) key += "|" + name + "=" + value;
    key += "\n";
    for (unsigned char ch : key) h = (h ^ ch) * 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

void add_sweep_context(Context& context, const RunOptions& o, const std::optional<Budget>& budget,
                       const std::optional<Shard>& shard, const std::optional<Shard>& worker,
                       const std::vector<Case>& sweep, const std::vector<Case>& part) {
  if (!o.vary.empty()) {
    std::string text;
    for (const std::string& v : o.vary) text += (text.empty() ? "" : "; ") + v;
    context["vary"] = text;
  }
  if (budget) context["memory_budget"] = budget->label;
  if (o.select) context["select"] = "on";
  context["sweep_cases"] = static_cast<int64_t>(sweep.size());
  char digest[24];
  std::snprintf(digest, sizeof digest, "%016llx",
                static_cast<unsigned long long>(digest_of(sweep)));
  context["sweep_digest"] = digest;
  if (shard || worker) {
    if (shard) context["shard"] = shard->text(), context["shard_source"] = shard->source;
    if (worker) context["worker"] = worker->text();
    context["shard_cases"] = static_cast<int64_t>(part.size());
  }
}

SweepFile context_as_file(const Context& context) {
  SweepFile f;
  for (const auto& [key, value] : context.items()) f.meta.emplace_back(key, context_text(value));
  for (const Column& c : row_columns()) f.header.push_back(c.name);
  return f;
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

std::string row_outside_sweep(const SweepFile& file, const std::vector<Case>& sweep) {
  std::set<std::string> keys;
  for (const Case& c : sweep) keys.insert(c.identity);
  const int algorithm = file.column("algorithm");
  for (std::size_t i = 0; i < file.rows.size(); ++i) {
    if (algorithm >= 0 && file.rows[i][algorithm] == "select") continue;
    if (!keys.count(file.key(i))) return file.key(i);
  }
  return {};
}

}  // namespace convbench
