#include "sweep/cases.hpp"

#include <algorithm>
#include <regex>

#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "convlab/text_input.hpp"
#include "sweep/suites.hpp"
#include "sweep/sweep_identity.hpp"

namespace convbench {

using convlab::Error;
using convlab::ErrorCode;

namespace {

void add_suite(const std::string& name, std::vector<SweepLayer>& out) {
  const Suite suite = load_suite(name);
  for (const auto& layer : suite.layers) out.push_back({suite.name, layer});
}

}  // namespace

SweepSpec layer_spec(const LayerOptions& layers) {
  SweepSpec spec;
  spec.layers = layers;
  try {
    spec.passes = parse_passes(layers.passes);
  } catch (const convlab::Error& e) {
    throw UsageError(e.what());
  }
  return spec;
}

std::vector<SweepLayer> collect_layers(const SweepSpec& spec) {
  std::vector<SweepLayer> layers;
  for (const std::string& name : spec.layers.suites) {
    if (name == "all") {
      for (const std::string& each : suite_names()) add_suite(each, layers);
    } else {
      add_suite(name, layers);
    }
  }
  for (const std::string& path : spec.layers.batch_files) {
    for (const auto& layer : convlab::read_shape_file(path)) layers.push_back({path, layer});
  }
  for (const std::string& text : spec.layers.shapes) {
    layers.push_back({"", convlab::parse_descriptor(text)});
  }
  const bool defaulted =
      spec.layers.suites.empty() && spec.layers.batch_files.empty() && spec.layers.shapes.empty();
  if (defaulted) add_suite("convnet-benchmarks", layers);
  if (spec.layers.match) {
    std::regex pattern;
    try {
      pattern = std::regex(*spec.layers.match, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw Error(ErrorCode::invalid_argument,
                  "--match '" + *spec.layers.match + "' is no regular expression: " + e.what());
    }
    const size_t given = layers.size();
    layers.erase(std::remove_if(layers.begin(), layers.end(),
                                [&](const SweepLayer& l) {
                                  return !std::regex_search(l.layer.name, pattern);
                                }),
                 layers.end());
    if (layers.empty()) {
      throw Error(ErrorCode::invalid_argument,
                  "--match '" + *spec.layers.match + "' matches none of the " +
                      std::to_string(given) +
                      " layer names of the sweep (a layer given without a name has none)");
    }
  }
  const std::optional<int64_t> mb = defaulted && !spec.layers.mb ? kDefaultSweepMb : spec.layers.mb;
  if (mb) {
    for (auto& entry : layers) {
      entry.layer.problem.n = *mb;
      entry.layer.problem.validate();  // a huge --mb can overflow a tensor's size
    }
  }
  return layers;
}

std::vector<const convlab::Algorithm*> select_algorithms(const SweepSpec& spec) {
  const convlab::Registry& registry = convlab::registry();
  if (spec.layers.algos) return registry.match(*spec.layers.algos);
  std::vector<const convlab::Algorithm*> chosen;
  for (const convlab::Algorithm* algorithm : registry.all()) {
    if (!algorithm->available()) continue;
    if (algorithm->name() == "reference" && !spec.check) continue;
    chosen.push_back(algorithm);
  }
  if (chosen.empty()) {
    throw Error(ErrorCode::invalid_argument,
                "no algorithm is available by default here (known: " + registry.known_names() +
                    "); choose some with --algos");
  }
  return chosen;
}

std::vector<convlab::Pass> parse_passes(const std::string& text) {
  std::vector<convlab::Pass> passes;
  for (std::string_view item : convlab::split_list(text)) {
    if (item.empty()) {
      throw Error(ErrorCode::invalid_argument,
                  "empty pass in --passes '" + text + "'; expected fwd, bwd_data, bwd_filter");
    }
    const convlab::Pass pass = convlab::parse_pass(item);
    bool seen = false;
    for (convlab::Pass p : passes) seen = seen || p == pass;
    if (!seen) passes.push_back(pass);
  }
  return passes;
}

std::vector<Case> build_cases(const SweepSpec& spec) {
  const std::vector<SweepLayer> layers = collect_layers(spec);
  const std::vector<const convlab::Algorithm*> algorithms = select_algorithms(spec);
  const uint64_t total = static_cast<uint64_t>(layers.size()) * spec.passes.size() *
                         algorithms.size();  // each factor < 2^20: no overflow
  if (spec.max_cases && total > static_cast<uint64_t>(*spec.max_cases)) {
    throw Error(ErrorCode::invalid_argument,
                "the sweep has " + std::to_string(total) + " cases (" +
                    std::to_string(layers.size()) + " layers x " +
                    std::to_string(spec.passes.size()) + " passes x " +
                    std::to_string(algorithms.size()) + " algorithms), more than --max-cases " +
                    std::to_string(*spec.max_cases) + "; give --max-cases " +
                    std::to_string(total) + " to run it, or fewer layers or algorithms");
  }
  std::vector<Case> cases;
  cases.reserve(static_cast<size_t>(total));
  for (size_t l = 0; l < layers.size(); ++l) {
    for (convlab::Pass pass : spec.passes) {
      for (const convlab::Algorithm* algorithm : algorithms) {
        Case c;
        c.index = cases.size();
        c.layer_index = l;
        c.suite = layers[l].suite;
        c.layer = layers[l].layer;
        c.pass = pass;
        c.algorithm = algorithm;
        c.identity =
            case_key(c.suite, c.layer.name, c.layer.problem.descriptor(), convlab::to_string(pass),
                     algorithm->name(), convlab::to_string(algorithm->device()));
        cases.push_back(std::move(c));
      }
    }
  }
  return cases;
}

namespace {

// splitmix64's finaliser: a bijective mix, so nearby inputs give unrelated seeds.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

bool same_layer_and_pass(const Case& a, const Case& b) {
  return a.layer_index == b.layer_index && a.pass == b.pass;
}

uint64_t case_seed(uint64_t sweep_seed, const convlab::ConvProblem& problem, convlab::Pass pass) {
  // FNV-1a over the canonical descriptor and the pass spelling: stable across builds and
  // platforms, unlike std::hash.
  uint64_t h = 0xcbf29ce484222325ULL;
  const std::string key = problem.descriptor() + " " + convlab::to_string(pass);
  for (unsigned char ch : key) h = (h ^ ch) * 0x100000001b3ULL;
  return mix(sweep_seed ^ mix(h));
}

}  // namespace convbench
