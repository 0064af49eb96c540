// SPDX-License-Identifier: GPL-2.0-or-later
// Record export findings of the corruption campaign, each fixed ("Fixed bug" comments). A new
// finding comes in as a DISABLED_ test until its fix.
#include <gtest/gtest.h>

#include <string>

#include "rdmatel/writers.h"

namespace rdmatel {
namespace {

std::string json_quote(const std::string& s) {
  std::string o;
  append_json_string(o, s);
  return o;
}

// Strict UTF-8 (RFC 3629): no overlongs, no surrogates, nothing above U+10FFFF.
bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : 9;
    if (n == 9 || i + n >= s.size() + (n ? 0 : 1)) return false;
    uint32_t cp = n == 0 ? c : n == 1 ? (c & 0x1F) : n == 2 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k <= n; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 0x2) return false;
      cp = cp << 6 | (d & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n + 1;
  }
  return true;
}

TEST(ReportRegressions, Utf8CheckerSanity) {
  EXPECT_TRUE(valid_utf8("leafA-gpu"));
  EXPECT_TRUE(valid_utf8("port \xC3\xA9t\xC3\xA9"));
  EXPECT_FALSE(valid_utf8("eth\xB9"));
  EXPECT_FALSE(valid_utf8("\xC3"));
  EXPECT_TRUE(json_quote("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"");
}

// Fixed bug (engine/report/record_writer.cpp json_quote): bytes >= 0x80 were copied as they
// are, so an interface name that is not UTF-8 (a corrupted or foreign capture: if_name
// "eth\xb9") made `rdmatel export io` print invalid JSON text (Python: UnicodeDecodeError; jq:
// "Invalid string"). Found by the corruption campaign (raw-corrupted nvme_3point and
// nvme_a_noloss: compute_point/storage_point names). Now valid UTF-8 comes out: valid sequences
// kept, invalid bytes as U+FFFD.
TEST(ReportRegressions, JsonOfNonUtf8NameIsValidUtf8) {
  for (const char* name : {"eth\xB9", "\xFF\xFE", "a\xC3", "\xED\xA0\x80", "ok \xC3\xA9"}) {
    std::string q = json_quote(name);
    EXPECT_TRUE(valid_utf8(q)) << "json_quote(\"" << name << "\")";
  }
}

}  // namespace
}  // namespace rdmatel
