#include "output/dump.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "convlab/error.hpp"

namespace convbench {

namespace fs = std::filesystem;
using convlab::Error;
using convlab::ErrorCode;

void write_npy(const std::string& path, const std::vector<int64_t>& shape, const float* data,
               size_t count) {
  static_assert(sizeof(float) == 4, "npy '<f4' needs 32-bit floats");
  // A Python tuple literal: "(2, 3, 5, 5)", "(7,)" for one dimension, "()" for none.
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of
  // 64 and ended by a newline, as NumPy writes it.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorCode::io, "cannot write '" + path + "': " + std::strerror(errno));
  const unsigned char preamble[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.write(reinterpret_cast<const char*>(preamble), sizeof preamble);
  const uint16_t length = static_cast<uint16_t>(header.size());
  const unsigned char length_le[2] = {static_cast<unsigned char>(length & 0xFF),
                                      static_cast<unsigned char>(length >> 8)};
  out.write(reinterpret_cast<const char*>(length_le), 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  // The data are written as the host holds them; convbench builds only for little-endian
  // hosts (checked below), which is what '<f4' promises.
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "npy writer assumes little-endian");
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * 4));
  out.close();
  if (!out) throw Error(ErrorCode::io, "writing '" + path + "' failed");
}

void check_dump_directory(const std::string& directory) {
  std::error_code ec;
  fs::path p(directory);
  if (fs::exists(p, ec)) {
    if (!fs::is_directory(p, ec)) {
      throw Error(ErrorCode::invalid_argument,
                  "--dump '" + directory + "' exists and is not a directory");
    }
    if (::access(p.c_str(), W_OK) != 0) {
      throw Error(ErrorCode::invalid_argument,
                  "--dump '" + directory + "' is not writable: " + std::strerror(errno));
    }
    return;
  }
  fs::path ancestor = fs::absolute(p, ec).parent_path();
  while (!ancestor.empty() && !fs::exists(ancestor, ec)) ancestor = ancestor.parent_path();
  if (ancestor.empty() || !fs::is_directory(ancestor, ec) ||
      ::access(ancestor.c_str(), W_OK) != 0) {
    throw Error(ErrorCode::invalid_argument,
                "--dump '" + directory + "' cannot be created under '" + ancestor.string() + "'");
  }
}

Dumper::Dumper(std::string directory) : directory_(std::move(directory)) {
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec) throw Error(ErrorCode::io, "cannot create --dump '" + directory_ + "': " + ec.message());
}

std::string Dumper::path(const std::string& file) const {
  return (fs::path(directory_) / file).string();
}

void Dumper::save_manifest() const {
  nlohmann::ordered_json manifest = {
      {"format", "convbench dump 1"},
      {"layout",
       "x: NCHW input (dx for bwd_data), w: KCRS filter with C per group (dw for "
       "bwd_filter), y: NCHW output (dy for the backward passes); float32"},
      {"cases", cases_}};
  const std::string final_path = path("manifest.json");
  const std::string temporary = final_path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    if (!out) throw Error(ErrorCode::io, "cannot write '" + temporary + "'");
  }
  std::error_code ec;
  fs::rename(temporary, final_path, ec);
  if (ec) throw Error(ErrorCode::io, "cannot write '" + final_path + "': " + ec.message());
}

void Dumper::write(const Case& c, const Row& row, const convlab::HostTensors& inputs,
                   const std::vector<float>& output, uint64_t seed) {
  const convlab::ConvProblem& p = c.layer.problem;
  const std::vector<int64_t> x_shape = {p.n, p.c, p.h, p.w};
  const std::vector<int64_t> w_shape = {p.k, p.c_per_group(), p.r, p.s};
  const std::vector<int64_t> y_shape = {p.n, p.k, p.out_h(), p.out_w()};
  const char* pass = convlab::to_string(c.pass);
  char stem[64];
  std::snprintf(stem, sizeof stem, "L%03zu_%s", c.layer_index, pass);

  // The roles of the pass: the two tensors it reads, and the one it writes.
  struct Role {
    const char* name;
    const std::vector<float>* host;
    std::vector<int64_t> shape;
  };
  std::vector<Role> reads, writes;
  const Role x{"x", &inputs.x, x_shape}, w{"w", &inputs.w, w_shape}, y{"y", &inputs.y, y_shape};
  switch (c.pass) {
    case convlab::Pass::forward:
      reads = {x, w};
      writes = {y};
      break;
    case convlab::Pass::backward_data:
      reads = {y, w};
      writes = {x};
      break;
    case convlab::Pass::backward_filter:
      reads = {x, y};
      writes = {w};
      break;
  }

  nlohmann::ordered_json files = nlohmann::ordered_json::object();
  const bool first = inputs_written_.insert({c.layer_index, static_cast<int>(c.pass)}).second;
  for (const Role& role : reads) {
    const std::string file = std::string(stem) + "_" + role.name + ".npy";
    if (first) write_npy(path(file), role.shape, role.host->data(), role.host->size());
    files[role.name] = file;
  }
  const Role& out = writes.front();
  const std::string out_file =
      std::string(stem) + "_" + c.algorithm->name() + "_" + out.name + ".npy";
  write_npy(path(out_file), out.shape, output.data(), output.size());
  files[out.name] = out_file;

  nlohmann::ordered_json entry = {{"case", c.index},
                                  {"suite", c.suite},
                                  {"layer", c.layer.name},
                                  {"descriptor", p.descriptor()},
                                  {"pass", pass},
                                  {"algorithm", c.algorithm->name()},
                                  {"status", to_string(row.status)},
                                  {"seed", seed},
                                  {"problem",
                                   {{"n", p.n},
                                    {"c", p.c},
                                    {"h", p.h},
                                    {"w", p.w},
                                    {"k", p.k},
                                    {"r", p.r},
                                    {"s", p.s},
                                    {"pad_h", p.pad_h},
                                    {"pad_w", p.pad_w},
                                    {"pad_h_end", p.end_pad_h()},
                                    {"pad_w_end", p.end_pad_w()},
                                    {"stride_h", p.stride_h},
                                    {"stride_w", p.stride_w},
                                    {"dilation_h", p.dilation_h},
                                    {"dilation_w", p.dilation_w},
                                    {"groups", p.groups}}},
                                  {"inputs", nlohmann::ordered_json::array()},
                                  {"output", out.name},
                                  {"files", files}};
  for (const Role& role : reads) entry["inputs"].push_back(role.name);
  cases_.push_back(std::move(entry));
  save_manifest();
}

}  // namespace convbench
