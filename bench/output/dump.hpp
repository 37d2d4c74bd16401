#pragma once
// --dump DIR: per case, the inputs and the algorithm's output as NumPy .npy files, and a JSON
// manifest (manifest.json) naming them, so any result can be cross-checked in a framework:
//
//     m = json.load(open("DIR/manifest.json")); c = m["cases"][0]
//     x = np.load("DIR/" + c["files"]["x"]); w = np.load("DIR/" + c["files"]["w"])
//     y = torch.conv2d(torch.from_numpy(x), torch.from_numpy(w), stride=..., padding=...)
//
// Inputs depend only on the layer, pass and seed (case_seed), so they are written once per
// layer and pass and shared by the algorithms' cases; each case has its own output file.

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/cases.hpp"
#include "convlab/accuracy.hpp"
#include "output/row.hpp"

namespace convbench {

/// Writes a float32 array in NumPy's .npy format (version 1.0, little-endian, C order).
/// Throws Error{io} naming the path.
void write_npy(const std::string& path, const std::vector<int64_t>& shape, const float* data,
               size_t count);

class Dumper {
 public:
  /// Creates `directory` (and its parents) if needed. Throws Error{io}.
  explicit Dumper(std::string directory);
  /// Writes the case's inputs (once per layer and pass), its output and its manifest entry,
  /// then rewrites manifest.json (via a temporary file and a rename, so the manifest on disk
  /// is always whole).
  void write(const Case& c, const Row& row, const convlab::HostTensors& inputs,
             const std::vector<float>& output, uint64_t seed);

 private:
  std::string path(const std::string& file) const;
  void save_manifest() const;

  std::string directory_;
  nlohmann::ordered_json cases_ = nlohmann::ordered_json::array();
  std::set<std::pair<size_t, int>> inputs_written_;  // (layer index, pass)
};

/// Checks that `directory` can be used for --dump (it is a directory or can be created: its
/// nearest existing ancestor is a writable directory). Throws Error{invalid_argument}.
void check_dump_directory(const std::string& directory);

}  // namespace convbench
