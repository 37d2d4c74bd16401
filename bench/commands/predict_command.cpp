// `convbench predict`: the roofline of docs/prediction.md per layer x pass x algorithm x card,
// optionally calibrated by a measured sweep, and a ranking of the cards for each network.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>

#include "commands/commands.hpp"
#include "convlab/error.hpp"
#include "convlab/registry.hpp"
#include "options/calibration_flags.hpp"
#include "options/cards.hpp"
#include "output/context.hpp"
#include "output/fields.hpp"
#include "output/output_file.hpp"
#include "output/report.hpp"
#include "output/reporters.hpp"
#include "output/table.hpp"
#include "sweep/cases.hpp"

namespace convbench {

namespace {

std::string real(double v) { return format_real(v); }

const std::vector<FieldColumn>& predict_columns() {
  static const std::vector<FieldColumn> columns = case_columns({
      {FieldType::text, {"family", "card"}},
      {FieldType::real, {"flops", "bytes", "compute_ms", "memory_ms"}},
      {FieldType::text, {"bound"}},
      {FieldType::real, {"efficiency"}},
      {FieldType::text, {"calibrated"}},
      {FieldType::real, {"time_ms"}},
      {FieldType::integer, {"rank"}},
      // Last, so that readers of the earlier columns by position still work.
      {FieldType::real, {"predicted_ms_low", "predicted_ms_high"}},
  });
  return columns;
}

}  // namespace

int run_predict(const PredictOptions& o, const std::string& command_line) {
  const SweepSpec spec = layer_spec(o.layers);
  std::vector<SweepLayer> layers;
  std::vector<const convlab::Algorithm*> algorithms;
  try {
    layers = collect_layers(spec);
    if (o.layers.algos) {
      algorithms = convlab::registry().match(*o.layers.algos);
    } else {
      for (const convlab::Algorithm* a : convlab::registry().all()) {
        if (a->name() != "reference") algorithms.push_back(a);
      }
    }
  } catch (const convlab::Error& e) {
    throw UsageError(e.what());
  }
  convlab::CardDatabase db = convlab::CardDatabase::builtin();
  const std::vector<const convlab::Card*> cards = resolve_cards(o.cards, db, "all");
  const std::optional<convlab::Calibration> calibration = load_calibration(o.calibration, db);
  if (o.out) {
    std::vector<InputPath> inputs = card_file_inputs(o.cards);
    if (o.calibration.sweep) inputs.push_back({*o.calibration.sweep, "--calibrate"});
    check_output_path(*o.out, "--out", inputs);  // before the work: a typo is bad input (exit 2)
  }

  std::vector<Fields> rows;
  // Per network and card: the total with the fastest algorithm per case, and per algorithm.
  struct Total {
    double best = 0;
    std::map<std::string, double> by_algorithm;
  };
  std::map<std::pair<std::string, std::string>, Total> totals;
  std::vector<std::string> network_order;
  for (const SweepLayer& l : layers) {
    const std::string network = l.suite.empty() ? "shapes" : l.suite;
    if (std::find(network_order.begin(), network_order.end(), network) == network_order.end()) {
      network_order.push_back(network);
    }
    for (convlab::Pass pass : spec.passes) {
      for (const convlab::Card* card : cards) {
        double best = std::numeric_limits<double>::infinity();
        Total& total = totals[{network, card->id}];
        for (const convlab::Algorithm* a : algorithms) {
          const convlab::Prediction p = convlab::predict(a->name(), l.layer.problem, pass, *card,
                                                         calibration ? &*calibration : nullptr);
          best = std::min(best, p.time_ms);
          total.by_algorithm[a->name()] += p.time_ms * static_cast<double>(l.layer.repeat);
          rows.push_back({{"kind", "case"},
                          {"suite", l.suite},
                          {"layer", l.layer.name},
                          {"descriptor", l.layer.problem.descriptor()},
                          {"pass", convlab::to_string(pass)},
                          {"algorithm", a->name()},
                          {"family", convlab::to_string(convlab::algorithm_family(a->name()))},
                          {"card", card->id},
                          {"flops", real(p.work.flops)},
                          {"bytes", real(p.work.bytes)},
                          {"compute_ms", real(p.compute_ms)},
                          {"memory_ms", real(p.memory_ms)},
                          {"bound", p.memory_bound ? "memory" : "compute"},
                          {"efficiency", real(p.efficiency)},
                          {"calibrated", p.calibrated ? "yes" : "no"},
                          {"time_ms", real(p.time_ms)},
                          {"predicted_ms_low", p.range ? real(p.range->low_ms) : ""},
                          {"predicted_ms_high", p.range ? real(p.range->high_ms) : ""}});
        }
        total.best += best * static_cast<double>(l.layer.repeat);
      }
    }
  }
  std::vector<Fields> ranking;
  for (const std::string& network : network_order) {
    std::vector<const convlab::Card*> order = cards;
    std::stable_sort(order.begin(), order.end(), [&](const auto* a, const auto* b) {
      return totals[{network, a->id}].best < totals[{network, b->id}].best;
    });
    for (size_t i = 0; i < order.size(); ++i) {
      const Total& t = totals[{network, order[i]->id}];
      ranking.push_back({{"kind", "ranking"},
                         {"suite", network},
                         {"card", order[i]->id},
                         {"algorithm", "fastest per case"},
                         {"time_ms", real(t.best)},
                         {"rank", std::to_string(i + 1)}});
      for (const auto& [algo, ms] : t.by_algorithm) {
        ranking.push_back({{"kind", "ranking"},
                           {"suite", network},
                           {"card", order[i]->id},
                           {"algorithm", algo},
                           {"time_ms", real(ms)},
                           {"rank", std::to_string(i + 1)}});
      }
    }
  }
  rows.insert(rows.end(), ranking.begin(), ranking.end());

  Context context = collect_context({});
  context.erase("devices");
  context.erase("gpu_driver");
  add_layer_context(context, o.layers, algorithms);
  context["cards"] = card_ids(cards);
  context["calibration"] = describe_calibration(calibration, o.calibration);
  context["command"] = command_line;

  auto emit = [&](std::ostream& out, const std::string& format) {
    if (format == "csv") {
      write_fields_csv(out, context, predict_columns(), rows);
    } else if (format == "json") {
      write_fields_json(out, context, predict_columns(), rows, AbsentField::omitted,
                        EmptyText::empty_string, {{"case", "cases"}, {"ranking", "ranking"}});
    } else {
      out << "Ranking of the cards (predicted total ms: each layer x repeat x pass, the fastest "
             "algorithm per case"
          << (calibration ? ", calibrated" : ", uncalibrated roofline") << ")\n";
      std::vector<std::vector<std::string>> table;
      for (const Fields& r : ranking) {
        if (r.at("algorithm") != "fastest per case") continue;
        table.push_back({r.at("suite"), r.at("rank"), r.at("card"), r.at("time_ms")});
      }
      print_table(out, {"network", "rank", "card", "total_ms"}, table);
      out << "\nPer case (predicted ms"
          << (calibration ? ", * = calibrated, (low-high) = the calibration's per-case range" : "")
          << ")\n";
      std::vector<std::string> titles = {"layer", "pass", "algorithm",
                                         cards.empty() ? "bound" : "bound@" + cards[0]->id};
      for (const auto* c : cards) titles.push_back(c->id);
      std::map<std::string, std::vector<std::string>> by_case;
      std::vector<std::string> case_order;
      for (const Fields& r : rows) {
        if (r.at("kind") != "case") continue;
        const std::string key = r.at("suite") + "|" + r.at("descriptor") + "|" + r.at("layer") +
                                "|" + r.at("pass") + "|" + r.at("algorithm");
        auto& cells = by_case[key];
        if (cells.empty()) {
          case_order.push_back(key);
          cells = {r.at("layer").empty() ? r.at("descriptor") : r.at("layer"), r.at("pass"),
                   r.at("algorithm"), r.at("bound")};
        }
        std::string cell = r.at("time_ms") + (r.at("calibrated") == "yes" ? "*" : "");
        if (!r.at("predicted_ms_low").empty()) {
          cell += " " + format_range(std::stod(r.at("predicted_ms_low")),
                                     std::stod(r.at("predicted_ms_high")));
        }
        cells.push_back(cell);
      }
      std::vector<std::vector<std::string>> cases;
      for (const std::string& k : case_order) cases.push_back(by_case[k]);
      print_table(out, titles, cases);
    }
  };
  write_report(o.format, o.out, "--out", emit);
  return 0;
}

}  // namespace convbench
