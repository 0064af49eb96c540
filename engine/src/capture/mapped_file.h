// SPDX-License-Identifier: GPL-2.0-or-later
// A read-only memory mapping of a whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace rdmatel {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& o) noexcept { *this = std::move(o); }
  MappedFile& operator=(MappedFile&& o) noexcept;

  /// Maps `path`; on failure returns false and sets `error` to a human sentence.
  bool open(const std::string& path, std::string& error);
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace rdmatel
