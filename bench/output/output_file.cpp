#include "output/output_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "options/cli.hpp"
#include "convlab/error.hpp"

namespace convbench {

namespace {

convlab::Error io_error(const std::string& what, const std::string& path, int error) {
  return convlab::Error(convlab::ErrorCode::io,
                        what + " '" + path + "' failed: " + std::strerror(error));
}

const char* kind_of(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string folder_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// The folder's own entry must reach the disk too, or a crash can lose the rename.
void sync_folder(const std::string& path) {
  const int dir = ::open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;  // the rename happened; only its durability is not forced
  (void)::fsync(dir);
  ::close(dir);
}

}  // namespace

std::string partial_path(const std::string& path) { return path + ".partial"; }

void check_output_path(const std::string& path, const std::string& flag,
                       const std::vector<InputPath>& inputs) {
  const std::string named = flag + " '" + path + "'";
  if (path.empty()) throw UsageError(flag + ": the file name is empty");
  struct stat out {};
  const bool exists = ::lstat(path.c_str(), &out) == 0;
  if (!exists && errno != ENOENT) {
    throw UsageError(named + " cannot be used: " + std::strerror(errno));
  }
  if (exists) {
    if (S_ISLNK(out.st_mode)) {
      throw UsageError(named +
                       " is a symbolic link: an output is replaced by renaming the finished "
                       "file into place, which would replace the link, not its target; give "
                       "the target's path");
    }
    if (S_ISDIR(out.st_mode)) throw UsageError(named + " is a directory");
    if (!S_ISREG(out.st_mode)) {
      throw UsageError(named + " is " + kind_of(out.st_mode) +
                       ", not a regular file; convbench writes only regular files (give "
                       "--format to write to stdout)");
    }
    if (::access(path.c_str(), W_OK) != 0) {
      throw UsageError(named + " is not writable: " + std::strerror(errno));
    }
  }
  const std::string folder = folder_of(path);
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode)) {
    throw UsageError(named + ": directory '" + folder + "' does not exist");
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    throw UsageError(named + ": directory '" + folder +
                     "' is not writable: " + std::strerror(errno));
  }
  struct stat partial {};
  const std::string journal = partial_path(path);
  const bool has_partial = ::lstat(journal.c_str(), &partial) == 0;
  if (has_partial && !S_ISREG(partial.st_mode)) {
    throw UsageError(named + ": its working file '" + journal + "' is " +
                     (S_ISLNK(partial.st_mode) ? "a symbolic link" : kind_of(partial.st_mode)) +
                     "; remove it or give another " + flag);
  }
  for (const InputPath& input : inputs) {
    struct stat in {};
    if (::stat(input.path.c_str(), &in) != 0) continue;
    const bool same_as_out = exists && in.st_dev == out.st_dev && in.st_ino == out.st_ino;
    const bool same_as_partial =
        has_partial && in.st_dev == partial.st_dev && in.st_ino == partial.st_ino;
    if (same_as_out || same_as_partial) {
      throw UsageError(named + " is also an input (" + input.flag + " '" + input.path +
                       "'): writing it would destroy what is being read; give another " + flag);
    }
  }
}

OutputFile::OutputFile(std::string path, std::string flag, OnAbandon on_abandon)
    : path_(std::move(path)), flag_(std::move(flag)), on_abandon_(on_abandon) {
  const std::string p = partial();
  // Open, lock, then check that the locked file is still the one at that name: a holder that
  // finished renamed it into place, and a lock on the renamed file guards nothing.
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    const bool created = fd >= 0;
    if (fd < 0 && errno == EEXIST) {
      fd = ::open(p.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    }
    if (fd < 0) {
      if (errno == ENOENT) continue;  // removed between the two opens
      if (errno == ELOOP) {
        throw UsageError(flag_ + " '" + path_ + "': its working file '" + p +
                         "' is a symbolic link; remove it or give another " + flag_);
      }
      throw io_error("opening", p, errno);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw UsageError(flag_ + " '" + path_ + "': its working file '" + p +
                       "' is not a regular file; remove it or give another " + flag_);
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd);
      if (error == EWOULDBLOCK) {
        throw UsageError(flag_ + " '" + path_ +
                         "' is being written by another convbench process (it holds the "
                         "lock on '" +
                         p + "'); wait for it to finish or give another " + flag_);
      }
      throw io_error("locking", p, error);
    }
    struct stat now {};
    if (::stat(p.c_str(), &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
      ::close(fd);
      continue;
    }
    fd_ = fd;
    created_ = created;
    previous_bytes_ = static_cast<int64_t>(st.st_size);
    return;
  }
  throw convlab::Error(convlab::ErrorCode::io, "cannot lock '" + p + "': it keeps changing");
}

OutputFile::~OutputFile() {
  if (done_ || fd_ < 0) return;
  if (stream_) stream_->flush();  // a journal keeps what was written; errors were reported
  if ((begun_ && on_abandon_ == OnAbandon::remove) || (created_ && !begun_)) {
    ::unlink(partial().c_str());  // still locked, so no other writer's file
  }
  ::close(fd_);
}

std::ostream& OutputFile::begin(int64_t keep_bytes) {
  if (::ftruncate(fd_, keep_bytes) != 0) throw io_error("truncating", partial(), errno);
  if (::lseek(fd_, keep_bytes, SEEK_SET) < 0) throw io_error("seeking in", partial(), errno);
  buffer_ = std::make_unique<CheckedFdBuf>(fd_, partial());
  stream_ = std::make_unique<std::ostream>(buffer_.get());
  begun_ = true;
  return *stream_;
}

void OutputFile::finish_writing() {
  if (!begun_) begin();
  stream_->flush();
  buffer_->flush_or_throw();
  if (::fsync(fd_) != 0) throw io_error("writing (fsync)", partial(), errno);
}

void OutputFile::commit() {
  finish_writing();
  // Renamed while still locked: no second writer can open the name in between.
  if (std::rename(partial().c_str(), path_.c_str()) != 0) {
    throw convlab::Error(convlab::ErrorCode::io, "cannot rename '" + partial() + "' to '" + path_ +
                                                     "': " + std::strerror(errno));
  }
  done_ = true;
  sync_folder(path_);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw io_error("closing", path_, errno);
}

void OutputFile::keep() {
  finish_writing();
  done_ = true;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw io_error("closing", partial(), errno);
}

}  // namespace convbench
