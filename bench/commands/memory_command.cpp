// `convbench memory`: the memory model of docs/memory-model.md, per layer x algorithm x pass
// (every term: x, w, y, workspace, total) and per network (weights, gradients, optimizer
// state, kept activations, gradient buffers, workspace, total), with fits per card and the
// largest batch each card holds for each strategy.
#include <fstream>
#include <iostream>
#include <map>

#include "commands/commands.hpp"
#include "convlab/error.hpp"
#include "convlab/memory.hpp"
#include "convlab/registry.hpp"
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

using convlab::format_size;

// One output row; every field is text (empty = absent), by CSV column.

const std::vector<FieldColumn>& memory_columns() {
  static const std::vector<FieldColumn> columns = case_columns({
      {FieldType::text, {"source", "reason"}},
      {FieldType::integer,
       {"batch", "x_bytes", "w_bytes", "y_bytes", "weights_bytes", "weight_grad_bytes",
        "optimizer_bytes", "activation_bytes", "gradient_bytes", "workspace_bytes", "total_bytes"}},
      {FieldType::text, {"over_budget", "fits", "does_not_fit", "largest_batch"}},
  });
  return columns;
}

std::string mib(const std::string& bytes) {
  if (bytes.empty()) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", std::stod(bytes) / (1024.0 * 1024.0));
  return text;
}

void fit_fields(Fields& f, bool known, int64_t total,
                const std::vector<const convlab::Card*>& cards,
                const std::optional<int64_t>& budget) {
  if (!known) return;
  std::string fits, not_fits;
  for (const convlab::Card* c : cards) {
    std::string& list = total <= c->usable_bytes ? fits : not_fits;
    list += (list.empty() ? "" : ";") + c->id;
  }
  f["fits"] = fits;
  f["does_not_fit"] = not_fits;
  if (budget) f["over_budget"] = total > *budget ? "yes" : "no";
}

void write_table(std::ostream& out, const std::vector<Fields>& rows, bool cards,
                 const std::string& card_basis) {
  std::vector<std::vector<std::string>> layer_rows, net_rows;
  for (const Fields& r : rows) {
    auto get = [&](const char* k) {
      auto it = r.find(k);
      return it == r.end() ? std::string() : it->second;
    };
    const std::string name = get("layer").empty() ? get("descriptor") : get("layer");
    if (get("kind") == "layer") {
      std::vector<std::string> cells = {name,
                                        get("pass"),
                                        get("algorithm"),
                                        mib(get("x_bytes")),
                                        mib(get("w_bytes")),
                                        mib(get("y_bytes")),
                                        mib(get("workspace_bytes")),
                                        mib(get("total_bytes")),
                                        get("over_budget")};
      if (cards)
        cells.push_back(get("does_not_fit").empty() ? "all" : "not " + get("does_not_fit"));
      cells.push_back(get("source") == "plan" ? "" : get("source") + ": " + get("reason"));
      layer_rows.push_back(cells);
    } else {
      net_rows.push_back(
          {get("suite"), get("algorithm"), get("pass"), get("batch"), mib(get("weights_bytes")),
           mib(get("weight_grad_bytes")), mib(get("optimizer_bytes")), mib(get("activation_bytes")),
           mib(get("gradient_bytes")), mib(get("workspace_bytes")), mib(get("total_bytes")),
           get("over_budget"), get("largest_batch"), get("reason")});
    }
  }
  if (cards) out << card_basis << "\n\n";
  out << "Per layer (MiB; x, w, y are the pass's three tensors: x/dx, w/dw, y/dy)\n";
  std::vector<std::string> titles = {"layer", "pass",      "algorithm", "x",          "w",
                                     "y",     "workspace", "total",     "over budget"};
  if (cards) titles.push_back("fits");
  titles.push_back("note");
  print_table(out, titles, layer_rows);
  out << "\nPer network (MiB): total = weights + weight grads + optimizer + activations + "
         "gradient buffers + workspace\n";
  print_table(
      out,
      {"network", "strategy", "mode", "batch", "weights", "w grads", "optimizer", "activations",
       "grad bufs", "workspace", "total", "over budget", "largest batch per card", "note"},
      net_rows);
}

}  // namespace

int run_memory(const MemoryOptions& o, const std::string& command_line) {
  const SweepSpec spec = layer_spec(o.layers);
  std::vector<SweepLayer> layers;
  std::vector<const convlab::Algorithm*> algorithms;
  std::optional<int64_t> budget;
  try {
    layers = collect_layers(spec);
    algorithms = select_algorithms(spec);
    if (o.memory_budget) budget = convlab::parse_size(*o.memory_budget);
  } catch (const convlab::Error& e) {
    throw UsageError(e.what());
  }
  convlab::CardDatabase db = convlab::CardDatabase::builtin();
  const std::vector<const convlab::Card*> cards = resolve_cards(o.cards, db, "");
  if (o.out) {
    const std::string& p = *o.out;
    check_output_path(p, "--out", card_file_inputs(o.cards));  // now, not after the work: exit 2
    if (!(p.size() > 4 && (p.compare(p.size() - 4, 4, ".csv") == 0 ||
                           (p.size() > 5 && p.compare(p.size() - 5, 5, ".json") == 0)))) {
      throw UsageError("--out '" + p + "': name it .csv or .json");
    }
  }

  std::vector<Fields> rows;
  for (const SweepLayer& l : layers) {
    for (convlab::Pass pass : spec.passes) {
      for (const convlab::Algorithm* a : algorithms) {
        const convlab::PassMemory m = convlab::pass_memory(*a, l.layer.problem, pass);
        Fields f = {{"kind", "layer"},
                    {"suite", l.suite},
                    {"layer", l.layer.name},
                    {"descriptor", l.layer.problem.descriptor()},
                    {"pass", convlab::to_string(pass)},
                    {"algorithm", a->name()},
                    {"source", convlab::to_string(m.source)},
                    {"reason", m.reason},
                    {"batch", std::to_string(l.layer.problem.n)},
                    {"x_bytes", std::to_string(m.tensors.x)},
                    {"w_bytes", std::to_string(m.tensors.w)},
                    {"y_bytes", std::to_string(m.tensors.y)}};
        if (m.known()) {
          f["workspace_bytes"] = std::to_string(m.workspace);
          f["total_bytes"] = std::to_string(m.total());
        }
        fit_fields(f, m.known(), m.known() ? m.total() : 0, cards, budget);
        rows.push_back(std::move(f));
      }
    }
  }

  // Networks: the layers of each suite (or batch file, or the --shape layers together).
  std::vector<std::pair<std::string, std::vector<convlab::Layer>>> networks;
  for (const SweepLayer& l : layers) {
    const std::string name = l.suite.empty() ? "shapes" : l.suite;
    if (networks.empty() || networks.back().first != name) networks.push_back({name, {}});
    networks.back().second.push_back(l.layer);
  }
  std::vector<const convlab::Algorithm*> strategies;
  for (const convlab::Algorithm* a : algorithms) {
    if (a->name() != "reference" || algorithms.size() == 1) strategies.push_back(a);
  }
  const convlab::Algorithm* fallback = nullptr;
  if (o.fallback) {
    try {
      fallback = &convlab::registry().get(*o.fallback);
    } catch (const convlab::Error& e) {
      throw UsageError(std::string("--fallback: ") + e.what());
    }
  }
  convlab::NetworkOptions options;
  options.training = !o.inference;
  options.optimizer_states = o.optimizer_states;
  for (const auto& [name, net] : networks) {
    const int64_t batch = net.front().problem.n;
    for (const convlab::Algorithm* first : strategies) {
      // Each strategy alone, so that what it cannot do shows (e.g. a 32-bit index limit at
      // large batches); --fallback names the algorithm for the cases it does not support.
      std::vector<const convlab::Algorithm*> preference = {first};
      if (fallback && fallback != first) preference.push_back(fallback);
      const convlab::NetworkMemory m = convlab::network_memory(net, batch, preference, options);
      Fields f = {{"kind", "network"},
                  {"suite", name},
                  {"pass", options.training ? "training" : "inference"},
                  {"algorithm", first->name()},
                  {"source", m.complete() ? "plan" : "incomplete"},
                  {"batch", std::to_string(batch)},
                  {"weights_bytes", std::to_string(m.weights)},
                  {"weight_grad_bytes", std::to_string(m.weight_gradients)},
                  {"optimizer_bytes", std::to_string(m.optimizer_state)},
                  {"activation_bytes", std::to_string(m.activations)},
                  {"gradient_bytes", std::to_string(m.gradient_buffers)},
                  {"workspace_bytes", std::to_string(m.workspace)}};
      int fell_back = 0;
      for (const convlab::PassMemory& c : m.cases) fell_back += c.algorithm != first->name();
      std::string reason = "largest workspace: " + m.workspace_case;
      if (fell_back) {
        reason += "; " + std::to_string(fell_back) + " cases by " + fallback->name();
      }
      if (!m.complete()) reason = "no algorithm for: " + m.missing.front();
      f["reason"] = reason;
      if (m.complete()) {
        f["total_bytes"] = std::to_string(m.total());
        fit_fields(f, true, m.total(), cards, budget);
        std::string largest, limit;
        for (const convlab::Card* c : cards) {
          const convlab::BatchFit fit =
              convlab::largest_batch(net, preference, c->usable_bytes, options, o.max_batch);
          largest += (largest.empty() ? "" : ";") + c->id + "=" + std::to_string(fit.batch) +
                     (fit.capped ? "+" : "");
          if (!fit.capped && fit.limit != "memory" && fit.batch > 0) {
            // Not memory but a case no algorithm plans at the next batch stops this card.
            largest += "*";
            if (limit.empty()) limit = fit.limit;
          }
        }
        f["largest_batch"] = largest;
        if (!limit.empty()) {
          f["reason"] +=
              "; * = a limit of the algorithm on this machine, not of the card: the "
              "next batch cannot be planned: " +
              limit;
        }
      }
      rows.push_back(std::move(f));
    }
  }

  Context context = collect_context(algorithms);
  add_layer_context(context, o.layers, algorithms);
  context["cards"] = cards.empty() ? "none" : card_ids(cards);
  // The fits are arithmetic, never a measurement: no card is touched, and a host algorithm's
  // workspace says nothing of what a GPU algorithm would need on that card.
  std::string card_basis;
  if (!cards.empty()) {
    bool host_algorithms = false;
    for (const auto* a : algorithms) host_algorithms |= a->device() == convlab::Device::cpu;
    card_basis =
        "Fits per card are modelled, not measured: the sizes below are what this "
        "machine's algorithms plan, compared with each card's usable memory in the card "
        "table; nothing ran on a card.";
    if (host_algorithms) {
      card_basis +=
          " Host (CPU) algorithms do not run on a card: for them the fit is a size "
          "comparison only.";
    }
    context["card_fits"] = card_basis;
  }
  context["memory_budget"] = budget ? format_size(*budget) : "none";
  context["network_mode"] = options.training
                                ? "training, optimizer states " + std::to_string(o.optimizer_states)
                                : "inference";
  context["command"] = command_line;

  write_report(o.format, o.out, "--out", [&](std::ostream& out, const std::string& format) {
    if (format == "csv") write_fields_csv(out, context, memory_columns(), rows);
    if (format == "json") {
      write_fields_json(out, context, memory_columns(), rows, AbsentField::null, EmptyText::null,
                        {{"layer", "layers"}, {"network", "networks"}});
    }
    if (format == "table") write_table(out, rows, !cards.empty(), card_basis);
  });
  return 0;
}

}  // namespace convbench
