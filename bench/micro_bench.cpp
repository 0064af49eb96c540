// SPDX-License-Identifier: GPL-2.0-or-later
// Micro-benchmarks of the hot paths (Google Benchmark; -DRDMATEL_BUILD_MICROBENCH=ON, off by
// default): the frame decoder, the flat map, distributions, address text and the record writer.
// Whole-capture numbers come from bench/run.sh; these say what one call costs.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "engine/src/decode/roce_frame.h"
#include "engine/src/util/flat_map.h"
#include "rdmatel/report.h"
#include "rdmatel/schema.h"
#include "rdmatel/writers.h"

namespace rdmatel {
namespace {

// Ethernet + IPv4 + UDP 4791 + BTH (RDMA WRITE ONLY) + RETH + 64 bytes of payload + ICRC.
std::vector<uint8_t> roce_write_frame() {
  std::vector<uint8_t> f(14 + 20 + 8 + 12 + 16 + 64 + 4, 0);
  f[12] = 0x08;                                              // IPv4
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  const uint16_t ip_len = uint16_t(f.size() - 14);
  ip[2] = uint8_t(ip_len >> 8), ip[3] = uint8_t(ip_len);
  ip[8] = 64, ip[9] = 17;                                    // TTL, UDP
  ip[12] = 10, ip[13] = 1, ip[15] = 1;                       // 10.1.0.1
  ip[16] = 10, ip[17] = 2, ip[19] = 1;                       // 10.2.0.1
  uint8_t* udp = ip + 20;
  udp[0] = 0xC0, udp[2] = 0x12, udp[3] = 0xB7;               // port 4791
  const uint16_t udp_len = uint16_t(ip_len - 20);
  udp[4] = uint8_t(udp_len >> 8), udp[5] = uint8_t(udp_len);
  uint8_t* bth = udp + 8;
  bth[0] = 0x0A;                                             // RC RDMA WRITE ONLY
  bth[2] = 0xFF, bth[3] = 0xFF;                              // P_Key
  bth[7] = 0x11;                                             // dest QP
  bth[11] = 0x42;                                            // PSN
  bth[12 + 15] = 64;                                         // RETH DMA length
  return f;
}

// `decode`: decode_roce_frame (the straight path for this common layout) or
// decode_roce_frame_general (every layout: what the straight path saves).
template <FrameKind (*decode)(LinkType, const uint8_t*, uint32_t, uint32_t, RoceFrame&)>
void BM_DecodeRoceWrite(benchmark::State& state) {
  const std::vector<uint8_t> f = roce_write_frame();
  RoceFrame out;
  if (decode(LinkType::kEthernet, f.data(), uint32_t(f.size()), uint32_t(f.size()), out) != FrameKind::kRoce) {
    state.SkipWithError("the hand-made frame does not decode as RoCEv2");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(decode(LinkType::kEthernet, f.data(), uint32_t(f.size()), uint32_t(f.size()), out));
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_DecodeRoceWrite<decode_roce_frame>)->Name("BM_DecodeRoceWrite");
BENCHMARK(BM_DecodeRoceWrite<decode_roce_frame_general>)->Name("BM_DecodeRoceWrite_general");

struct U64Hash {
  uint64_t operator()(uint64_t k) const { return hash_mix(k); }
};

void BM_FlatMapFind(benchmark::State& state) {
  FlatMap<uint64_t, uint64_t, U64Hash> m;
  const uint64_t n = uint64_t(state.range(0));
  for (uint64_t i = 0; i < n; ++i) m[i * 7919] = i;
  uint64_t i = 0, sum = 0;
  for (auto _ : state) {
    sum += *m.find((i++ % n) * 7919);
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_FlatMapFind)->Arg(1 << 10)->Arg(1 << 20);

void BM_DistributionAdd(benchmark::State& state) {
  // Past the exact limit: the fixed-size histogram.
  Distribution d;
  std::mt19937_64 rng(1);
  for (size_t i = 0; i <= Distribution::kExactLimit; ++i) d.add(DurationNs(rng() % 1000000));
  for (auto _ : state) d.add(DurationNs(rng() % 1000000));
  benchmark::DoNotOptimize(d.percentile(99));
}
BENCHMARK(BM_DistributionAdd);

void BM_Ipv4Text(benchmark::State& state) {
  const uint8_t b[4] = {192, 168, 20, 109};
  const IpAddress a = IpAddress::from_v4(b);
  char out[64];
  for (auto _ : state) benchmark::DoNotOptimize(a.format(out));
}
BENCHMARK(BM_Ipv4Text);

void BM_WriteMessageJsonl(benchmark::State& state) {
  std::FILE* null = std::fopen("/dev/null", "w");
  const std::string point = "leafA-gpu";
  RecordWriter w(null, RecordFormat::kJsonl, kMessageSchema, [&](PointId) -> const std::string& { return point; });
  MessageRecord m;
  const uint8_t s[4] = {10, 1, 0, 1}, d[4] = {10, 2, 0, 1};
  m.src = IpAddress::from_v4(s), m.dst = IpAddress::from_v4(d);
  m.point = 0, m.complete = true, m.first_psn = 100, m.last_psn = 131;
  for (auto _ : state) w.write(&m);
  std::fclose(null);
}
BENCHMARK(BM_WriteMessageJsonl);

}  // namespace
}  // namespace rdmatel

BENCHMARK_MAIN();
