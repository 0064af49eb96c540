// SPDX-License-Identifier: GPL-2.0-or-later
// Replays every input under tests/fuzz/regressions/<target>/ through the same entry point the
// libFuzzer target uses (tests/fuzz/fuzz_entries.h), so past findings stay fixed in the normal
// build, with any compiler. A sanitizer build (scripts/ci-sanitize.sh) also catches memory and
// undefined-behaviour errors on them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_entries.h"
#include "tests/support/capture_builder.h"

namespace rdmatel {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs(const std::string& target) {
  std::vector<fs::path> out;
  fs::path dir = fs::path(RDMATEL_SOURCE_DIR) / "tests/fuzz/regressions" / target;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.' && e.path().extension() != ".md")
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void replay(const std::string& target, int (*entry)(const uint8_t*, size_t)) {
  for (const fs::path& p : inputs(target)) {
    SCOPED_TRACE(p.string());
    test::Bytes b = test::read_file_bytes(p.string());
    // An exactly-sized heap copy, as libFuzzer passes it.
    std::unique_ptr<uint8_t[]> copy(new uint8_t[b.size() ? b.size() : 1]);
    std::copy(b.begin(), b.end(), copy.get());
    EXPECT_EQ(entry(copy.get(), b.size()), 0);
  }
}

TEST(FuzzRegressions, FrameDecoder) { replay("frame_decoder", fuzz::fuzz_frame_decoder); }
TEST(FuzzRegressions, NvmeCapsule) { replay("nvme_capsule", fuzz::fuzz_nvme_capsule); }
TEST(FuzzRegressions, CaptureReader) { replay("capture_reader", fuzz::fuzz_capture_reader); }
TEST(FuzzRegressions, Engine) { replay("engine", fuzz::fuzz_engine); }

// The entry points themselves on degenerate inputs (empty, one byte, all zeros, all ones).
TEST(FuzzRegressions, DegenerateInputs) {
  for (int (*entry)(const uint8_t*, size_t) :
       {fuzz::fuzz_frame_decoder, fuzz::fuzz_nvme_capsule, fuzz::fuzz_capture_reader, fuzz::fuzz_engine}) {
    std::vector<uint8_t> zeros(4096, 0), ones(4096, 0xFF);
    EXPECT_EQ(entry(nullptr, 0), 0);
    EXPECT_EQ(entry(zeros.data(), 1), 0);
    EXPECT_EQ(entry(zeros.data(), zeros.size()), 0);
    EXPECT_EQ(entry(ones.data(), ones.size()), 0);
  }
}

}  // namespace
}  // namespace rdmatel
