// SPDX-License-Identifier: GPL-2.0-or-later
// A cheap hash for FlatMap keys made of IP addresses and small integers, looked up once per
// record: one multiply per 64-bit word. FlatMap mixes whatever its functor gives over the bits it
// indexes with, so mixing each address in full first (hash_ip: two rounds of hash_mix) only
// costs, and cost most of such a lookup.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

#include "rdmatel/types.h"

namespace rdmatel {

/// Folds the word `w` into the hash `h`.
inline uint64_t fold_word(uint64_t h, uint64_t w) {
  return (h ^ w) * 0x9E3779B97F4A7C15ULL;
}

/// Folds an address (both words and its family) into `h`.
inline uint64_t fold_ip(uint64_t h, const IpAddress& a) {
  uint64_t lo, hi;
  std::memcpy(&lo, a.bytes.data(), 8);
  std::memcpy(&hi, a.bytes.data() + 8, 8);
  return fold_word(fold_word(h, lo), hi ^ uint64_t(a.v6));
}

/// An ordered pair of addresses ((src, dst), (host, storage)): the key of every per-IP-pair table.
using IpPair = std::pair<IpAddress, IpAddress>;
struct IpPairHash {
  uint64_t operator()(const IpPair& k) const noexcept { return fold_ip(fold_ip(0, k.first), k.second); }
};

}  // namespace rdmatel
