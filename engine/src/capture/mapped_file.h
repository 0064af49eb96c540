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

  /// The reader is at `offset`: the pages well behind it leave the process's resident set
  /// (MADV_DONTNEED; the mapping is read-only, so a page touched again is only read from the
  /// page cache again). Memory then grows with the state kept, not with the file. Cheap enough
  /// to call per packet: it acts once per kReleaseStep.
  void consumed(uint64_t offset) {
    if (offset >= released_ + kReleaseStep + kReleaseLag) release_before(offset - kReleaseLag);
  }

  static constexpr uint64_t kReleaseStep = 32ull << 20;
  static constexpr uint64_t kReleaseLag = 8ull << 20;  ///< what the engine may still look at

 private:
  void release_before(uint64_t offset);

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  uint64_t released_ = 0;  ///< pages before this offset were given back
};

}  // namespace rdmatel
