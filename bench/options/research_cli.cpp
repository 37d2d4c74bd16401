// The command line of the issue-5 commands and flags, and what memory and predict share.
#include <algorithm>
#include <ostream>

#include "convlab/error.hpp"
#include "output/reporters.hpp"
#include "options/research.hpp"

namespace convbench {

void write_fields_csv(std::ostream& out, const Context& context,
                      const std::vector<std::string>& columns, const std::vector<Fields>& rows) {
  for (const auto& [key, value] : context.items())
    out << "# " << key << ": " << context_text(value) << "\n";
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i];
  out << "\n";
  for (const Fields& row : rows) {
    for (size_t i = 0; i < columns.size(); ++i) {
      auto it = row.find(columns[i]);
      out << (i ? "," : "") << (it == row.end() ? "" : csv_field(it->second));
    }
    out << "\n";
  }
}

namespace {

void add_layer_options(CLI::App* app, LayerOptions& o, const char* algos_default) {
  repeatable(app->add_option("--shape", o.shapes, "A benchdnn descriptor, once per --shape"),
             "DESCRIPTOR")
      ->take_all()
      ->type_size(1)
      ->allow_extra_args(false);
  repeatable(app->add_option("--batch-file", o.batch_files, "A benchdnn shape file"), "FILE")
      ->allow_extra_args(false);
  repeatable(app->add_option("--suite", o.suites,
                             "A built-in suite, or 'all'; also comma-separated; see 'list'"),
             "NAME")
      ->delimiter(',')
      ->allow_extra_args(false);
  app->add_option("--mb", o.mb,
                  "Minibatch for every layer, 1 to 2^40 (overrides the shape's mb)")
      ->type_name("N")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40).description(""));
  app->add_option("--algos", o.algos,
                  std::string("Comma-separated algorithm names or globs (default: ") +
                      algos_default + ")")
      ->type_name("GLOBS");
  app->add_option("--match", o.match,
                  "Only the layers whose name contains a match of REGEX (ECMAScript), e.g. 'conv[45]_'")
      ->type_name("REGEX");
  app->add_option("--passes", o.passes, "Comma-separated passes: fwd, bwd_data, bwd_filter")
      ->type_name("LIST")
      ->capture_default_str();
}

}  // namespace

void add_research_run_options(CLI::App* run, RunOptions& o) {
  run->add_option("--memory-budget", o.memory_budget,
                  "Mark cases whose tensors + workspace exceed SIZE (e.g. 3.5GiB, 8GB) "
                  "over_budget instead of running them")
      ->type_name("BYTES");
  run->add_option("--card", o.card,
                  "Budget = the usable memory of this card (see 'list'; e.g. gtx970)")
      ->type_name("NAME");
  repeatable(run->add_option("--cards", o.cards, "Add the cards of FILE.json to the card table"),
             "FILE")
      ->allow_extra_args(false);
  run->add_flag("--select", o.select,
                "After each layer and pass, add a row 'select' naming the fastest measured "
                "algorithm that fits the budget");
  run->add_flag("--resume", o.resume,
                "Skip the cases already in --out FILE.csv and append the others");
  run->add_option("--shard", o.shard,
                  "Run part I of N of the cases (default: from SLURM_ARRAY_TASK_ID and "
                  "SLURM_ARRAY_TASK_COUNT)")
      ->type_name("I/N");
  repeatable(run->add_option("--vary", o.vary,
                             "STEP is +N or *N: the Cartesian product of every --vary over "
                             "each --shape, e.g. kh=3:15:2 or ih=16:256:*2"),
             "FIELD=START:STOP[:STEP]")
      ->allow_extra_args(false);
  run->add_option("--max-cases", o.max_cases,
                  "Refuse a sweep of more cases than this (layers x passes x algorithms, "
                  "--vary combinations included) before anything runs; 1 to 2^40")
      ->type_name("N")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40).description(""))
      ->capture_default_str();
  run->add_option("--devices", o.devices,
                  "Run the cases on these GPUs at once, one worker process per device, e.g. 0,1")
      ->type_name("LIST");
  run->add_option("--device", o.device,
                  "Run the GPU algorithms on device N: sets the `device` knob of every algorithm "
                  "that has one (recorded in the rows' knobs)")
      ->type_name("N");
  run->add_option("--worker", o.worker, "(internal) the part of the cases of a --devices worker")
      ->group("");
}

CLI::App* add_memory_command(CLI::App& app, MemoryOptions& o) {
  CLI::App* memory = app.add_subcommand(
      "memory", "Memory per layer x algorithm x pass and per network; fits per card");
  memory->footer(
      "Examples:\n"
      "  convbench memory --suite resnet50 --mb 64 --cards gtx970,titan-x\n"
      "  convbench memory --suite vgg16 --inference --cards all --format csv --out vgg16-memory.csv\n"
      "  convbench memory --shape mb32ic3ih224oc64kh7sh2ph3 --algos 'cpu.*' --passes fwd "
      "--memory-budget 3.5GiB\n");
  add_layer_options(memory, o.layers, "every available algorithm but the reference");
  repeatable(memory->add_option("--cards", o.cards,
                                "Cards to check: ids, comma lists, 'all', or FILE.json"),
             "LIST")
      ->allow_extra_args(false);
  memory->add_option("--memory-budget", o.memory_budget, "Flag everything over SIZE, e.g. 3.5GiB")
      ->type_name("BYTES");
  memory->add_flag("--inference", o.inference,
                   "Network memory for inference (forward only) instead of training");
  memory
      ->add_option("--optimizer-states", o.optimizer_states,
                   "Optimizer buffers per weight, 0 to 16: 0 SGD, 1 momentum, 2 Adam")
      ->type_name("N")
      ->check(CLI::Range(0, 16).description(""))
      ->capture_default_str();
  memory->add_option("--fallback", o.fallback,
                     "In the network totals, use this algorithm for the cases a strategy does "
                     "not support (default: none; the network is then incomplete)")
      ->type_name("NAME");
  memory
      ->add_option("--max-batch", o.max_batch,
                   "Largest batch the per-card search tries, 1 to 2^30")
      ->type_name("N")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30).description(""))
      ->capture_default_str();
  memory->add_option("--format", o.format, "Format on stdout (default table)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  memory->add_option("--out", o.out, "Also write FILE.csv or FILE.json")->type_name("FILE");
  return memory;
}

CLI::App* add_predict_command(CLI::App& app, PredictOptions& o) {
  CLI::App* predict = app.add_subcommand(
      "predict", "Roofline time per layer x algorithm x card, and a ranking of the cards");
  predict->footer(
      "Examples:\n"
      "  convbench predict --suite resnet50 --mb 32 --cards gtx970,titan-x,v100\n"
      "  convbench predict --shape mb64ic256ih14oc256kh3ph1 --algos 'cuda.*' --format json\n"
      "  convbench predict --suite alexnet --cards all --format csv --out alexnet-predict.csv\n");
  add_layer_options(predict, o.layers, "every registered algorithm but the reference");
  repeatable(predict->add_option("--cards", o.cards,
                                 "Cards: ids, comma lists, 'all' (default), or FILE.json"),
             "LIST")
      ->allow_extra_args(false);
  add_calibration_options(predict, o.calibration, "");
  predict->add_option("--format", o.format, "Format on stdout (default table)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  predict->add_option("--out", o.out, "Also write FILE.csv or FILE.json")->type_name("FILE");
  return predict;
}

CLI::App* add_merge_command(CLI::App& app, MergeOptions& o) {
  CLI::App* merge = app.add_subcommand(
      "merge", "Concatenate the CSVs of a sharded sweep; report missing and duplicate cases");
  merge->footer(
      "Examples:\n"
      "  convbench merge resnet50.csv part-1.csv part-2.csv\n"
      "  convbench merge resnet50.csv part-*.csv --allow-incomplete\n");
  merge->add_option("OUT", o.out, "The merged CSV to write")->type_name("FILE")->required();
  merge->add_option("IN", o.inputs, "The shards' CSVs")
      ->type_name("FILE")
      ->required()
      ->expected(1, -1);
  merge->add_flag("--allow-incomplete", o.allow_incomplete,
                  "Exit 0 even when cases are missing (still reported)");
  return merge;
}

SweepSpec layer_spec(const LayerOptions& o) {
  SweepSpec spec;
  spec.shapes = o.shapes;
  spec.batch_files = o.batch_files;
  spec.suites = o.suites;
  spec.mb = o.mb;
  spec.algos = o.algos;
  spec.match = o.match;
  try {
    spec.passes = parse_passes(o.passes);
  } catch (const convlab::Error& e) {
    throw UsageError(e.what());
  }
  return spec;
}

std::vector<const convlab::Card*> resolve_cards(const std::vector<std::string>& values,
                                                convlab::CardDatabase& db,
                                                const std::string& fallback) {
  std::vector<std::string> lists, files;
  for (const std::string& v : values) {
    (v.size() > 5 && v.compare(v.size() - 5, 5, ".json") == 0 ? files : lists).push_back(v);
  }
  std::vector<std::string> from_files;
  try {
    for (const std::string& f : files) {
      convlab::CardDatabase one;
      one.add_json_file(f);
      for (const convlab::Card& c : one.all()) {
        db.add(c);
        from_files.push_back(c.id);
      }
    }
    if (lists.empty() && from_files.empty() && !fallback.empty()) lists.push_back(fallback);
    std::vector<const convlab::Card*> out;
    auto add = [&](const convlab::Card* c) {
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    };
    for (const std::string& id : from_files) add(&db.get(id));
    for (const std::string& list : lists) {
      for (const convlab::Card* c : db.select(list)) add(c);
    }
    return out;
  } catch (const convlab::Error& e) {
    throw UsageError(std::string("--cards: ") + e.what());
  }
}

std::vector<InputPath> card_file_inputs(const std::vector<std::string>& values) {
  std::vector<InputPath> inputs;
  for (const std::string& v : values) {
    if (v.size() > 5 && v.compare(v.size() - 5, 5, ".json") == 0) inputs.push_back({v, "--cards"});
  }
  return inputs;
}

namespace {

// Columns a cell takes on a terminal: UTF-8 continuation bytes (a range's en dash) take none.
size_t display_width(const std::string& cell) {
  size_t width = 0;
  for (unsigned char ch : cell) width += (ch & 0xC0) != 0x80;
  return width;
}

}  // namespace

void print_table(std::ostream& out, const std::vector<std::string>& titles,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(titles.size());
  std::vector<bool> numeric(titles.size(), true);
  for (size_t c = 0; c < titles.size(); ++c) width[c] = display_width(titles[c]);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < titles.size(); ++c) {
      width[c] = std::max(width[c], display_width(row[c]));
      if (!row[c].empty() && row[c].find_first_not_of("0123456789.-+e") != std::string::npos) {
        numeric[c] = false;
      }
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t c = 0; c < titles.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::string pad(width[c] - std::min(width[c], display_width(cell)), ' ');
      text += (c ? "  " : "") + (numeric[c] ? pad + cell : cell + pad);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line(titles);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& row : rows) line(row);
}

}  // namespace convbench
