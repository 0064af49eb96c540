// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/src/capture/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rdmatel {

MappedFile::~MappedFile() {
  if (data_ && size_) munmap(const_cast<uint8_t*>(data_), size_);
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (data_ && size_) munmap(const_cast<uint8_t*>(data_), size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    released_ = std::exchange(o.released_, 0);
  }
  return *this;
}

void MappedFile::release_before(uint64_t offset) {
  const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  const uint64_t end = std::min<uint64_t>(offset, size_) / page * page;
  if (end <= released_) return;
  madvise(const_cast<uint8_t*>(data_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

bool MappedFile::open(const std::string& path, std::string& error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    error = "cannot read " + path + ": " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    error = path + " is a directory, not a capture file";
    ::close(fd);
    return false;
  }
  size_ = size_t(st.st_size);
  if (size_ > 0) {
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      error = "cannot read " + path + ": " + std::strerror(errno);
      ::close(fd);
      size_ = 0;
      return false;
    }
    madvise(p, size_, MADV_SEQUENTIAL);  // advice values are not flags: one call each
    madvise(p, size_, MADV_WILLNEED);
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return true;
}

}  // namespace rdmatel
