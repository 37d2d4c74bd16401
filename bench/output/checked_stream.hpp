#pragma once
// A stream buffer over a file descriptor that checks every write(2). std::ofstream reports a
// failed write only as a state bit, after the fact and without errno, so a full disk or
// `> /dev/full` would pass unnoticed; this buffer keeps the first failure's errno so that the
// message can name the file and the cause.

#include <ostream>
#include <streambuf>
#include <string>

namespace convbench {

class CheckedFdBuf : public std::streambuf {
 public:
  /// Writes to `fd` (not owned), named `name` in messages ("stdout", a file's path).
  CheckedFdBuf(int fd, std::string name);
  CheckedFdBuf(const CheckedFdBuf&) = delete;
  CheckedFdBuf& operator=(const CheckedFdBuf&) = delete;
  ~CheckedFdBuf() override;

  /// The errno of the first failed write, 0 while every write succeeded.
  int error() const { return error_; }
  const std::string& name() const { return name_; }
  /// Writes what is buffered; Error{io} naming the file and strerror when any write failed.
  void flush_or_throw();
  /// Whether flush_or_throw has thrown already (the failure was reported once).
  bool reported() const { return reported_; }

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;
  std::streamsize xsputn(const char* data, std::streamsize count) override;

 private:
  bool drain();
  bool write_all(const char* data, size_t count);

  int fd_;
  std::string name_;
  int error_ = 0;
  bool reported_ = false;
  char buffer_[1 << 16];
};

/// Error{io} "writing 'NAME' failed: CAUSE" when `out` writes through a CheckedFdBuf that saw
/// a failure, or when the stream itself is bad (then without a cause). Called after each row
/// so that a sweep stops at its first lost row rather than running on for hours.
void check_stream(std::ostream& out);

/// Puts std::cout on a CheckedFdBuf over fd 1 for the life of this object, so that every
/// command's stdout is checked; finish() flushes and throws on a failed write not reported
/// yet.
class CheckedStdout {
 public:
  CheckedStdout();
  ~CheckedStdout();
  CheckedStdout(const CheckedStdout&) = delete;
  CheckedStdout& operator=(const CheckedStdout&) = delete;
  void finish();

 private:
  CheckedFdBuf buffer_;
  std::streambuf* previous_;
};

}  // namespace convbench
