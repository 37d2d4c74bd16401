#include "output/checked_stream.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "convlab/error.hpp"

namespace convbench {

CheckedFdBuf::CheckedFdBuf(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
  setp(buffer_, buffer_ + sizeof buffer_);
}

CheckedFdBuf::~CheckedFdBuf() { drain(); }

bool CheckedFdBuf::write_all(const char* data, size_t count) {
  if (error_) return false;  // after a failure nothing more is written: no holes in a file
  while (count > 0) {
    const ssize_t n = ::write(fd_, data, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      return false;
    }
    data += n;
    count -= static_cast<size_t>(n);
  }
  return true;
}

bool CheckedFdBuf::drain() {
  const bool ok = write_all(pbase(), static_cast<size_t>(pptr() - pbase()));
  setp(buffer_, buffer_ + sizeof buffer_);
  return ok;
}

CheckedFdBuf::int_type CheckedFdBuf::overflow(int_type ch) {
  if (!drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(ch, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
  }
  return traits_type::not_eof(ch);
}

int CheckedFdBuf::sync() { return drain() ? 0 : -1; }

std::streamsize CheckedFdBuf::xsputn(const char* data, std::streamsize count) {
  if (count <= epptr() - pptr()) {
    std::memcpy(pptr(), data, static_cast<size_t>(count));
    pbump(static_cast<int>(count));
    return count;
  }
  if (!drain() || !write_all(data, static_cast<size_t>(count))) return 0;
  return count;
}

void CheckedFdBuf::flush_or_throw() {
  drain();
  if (error_) {
    reported_ = true;
    throw convlab::Error(convlab::ErrorCode::io,
                         "writing '" + name_ + "' failed: " + std::strerror(error_));
  }
}

void check_stream(std::ostream& out) {
  if (auto* checked = dynamic_cast<CheckedFdBuf*>(out.rdbuf())) {
    if (checked->error()) checked->flush_or_throw();
  }
  if (out.bad()) throw convlab::Error(convlab::ErrorCode::io, "writing an output failed");
}

CheckedStdout::CheckedStdout() : buffer_(STDOUT_FILENO, "stdout") {
  std::cout.flush();
  previous_ = std::cout.rdbuf(&buffer_);
}

CheckedStdout::~CheckedStdout() {
  std::cout.flush();
  std::cout.rdbuf(previous_);
}

void CheckedStdout::finish() {
  std::cout.flush();
  if (buffer_.reported()) return;
  buffer_.flush_or_throw();
}

}  // namespace convbench
