#pragma once
// Every file convbench writes (run --out, memory/predict --out, merge OUT, the --devices
// workers' merged rows) goes through OutputFile, the one writer with these guarantees
// (docs/reliability.md):
//  - the path is checked before any work: not a directory, device, FIFO, socket or symbolic
//    link, not one of the run's input files (same st_dev and st_ino), in a writable folder;
//  - the rows go to PATH.partial beside it (same folder, so the rename cannot cross file
//    systems), every write checked, then fsync, close checked, rename over PATH, fsync of
//    the folder; PATH is never opened for writing, so a failure leaves it as it was;
//  - PATH.partial is held under an exclusive flock while it is written, so a second convbench
//    writing the same PATH stops at once instead of interleaving rows. For `run` it is also
//    the journal that --resume continues, so the lock covers the journal too.
//
// Symbolic links are refused rather than written through: renaming into place would replace
// the link itself, not its target, and writing through it would defeat the rename.

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "output/checked_stream.hpp"

namespace convbench {

/// A file the command reads, for the check that no output overwrites an input.
struct InputPath {
  std::string path;
  std::string flag;  ///< how it was given, e.g. "--batch-file"
};

/// Where PATH's rows wait until they are complete (PATH.partial).
std::string partial_path(const std::string& path);

/// UsageError naming `flag` unless `path` can be an output: see the header comment. Inputs
/// that do not exist are ignored here (their own check reports them).
void check_output_path(const std::string& path, const std::string& flag,
                       const std::vector<InputPath>& inputs = {});

class OutputFile {
 public:
  /// What happens to PATH.partial when the object dies without commit() or keep(): a
  /// command's scratch is removed; a sweep's journal is kept for --resume.
  enum class OnAbandon { remove, keep };

  /// Opens and locks PATH.partial without changing it (creating it when absent). UsageError
  /// when another process holds the lock or PATH.partial is not a regular file; Error{io}
  /// when it cannot be opened.
  OutputFile(std::string path, std::string flag, OnAbandon on_abandon);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  const std::string& path() const { return path_; }
  std::string partial() const { return partial_path(path_); }
  /// The size PATH.partial had when it was opened (0 when it was made now).
  int64_t previous_bytes() const { return previous_bytes_; }

  /// Starts writing from byte `keep_bytes` of PATH.partial (0: a fresh file; its old size
  /// continues a journal; less drops a torn last row).
  std::ostream& begin(int64_t keep_bytes = 0);
  std::ostream& stream() { return *stream_; }

  /// Flush, fsync, close and rename over PATH; Error{io} naming the file and the cause.
  void commit();
  /// Flush, fsync and close, leaving PATH.partial in place (an interrupted sweep).
  void keep();

 private:
  void finish_writing();

  std::string path_, flag_;
  OnAbandon on_abandon_;
  int fd_ = -1;
  bool created_ = false, begun_ = false, done_ = false;
  int64_t previous_bytes_ = 0;
  std::unique_ptr<CheckedFdBuf> buffer_;
  std::unique_ptr<std::ostream> stream_;
};

}  // namespace convbench
