// SPDX-License-Identifier: GPL-2.0-or-later
// Fuzz entry points shared by the libFuzzer targets (tests/fuzz/fuzz_*.cpp, built with clang when
// RDMATEL_FUZZ is on) and by the regression replay test (tests/robustness/fuzz_replay_test.cpp,
// built in the normal suite with any compiler). Each takes arbitrary bytes, must never crash,
// hang or grow memory without bound, and aborts (a finding) when an invariant of the code under
// test is violated.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rdmatel::fuzz {

/// The frame decoder: `data` is one captured frame, decoded as every LinkType, fully captured and
/// cut by a snap length, with invariants on what the decoder returns.
int fuzz_frame_decoder(const uint8_t* data, size_t size);

/// The NVMe capsule parsers (SQE, CQE) and the opcode names, on `data` as a SEND payload.
int fuzz_nvme_capsule(const uint8_t* data, size_t size);

/// The fast pcap/pcapng reader: `data` is a whole file (written to a memfd and opened by path).
/// Every packet it returns must lie inside the file; then the packets go through the engine as
/// the CLI feeds them.
int fuzz_capture_reader(const uint8_t* data, size_t size);

/// The whole engine on a stream of frames (format below), then finish(); checks that every I/O
/// gets exactly one final record and that records are self-consistent.
///
/// Input: one configuration byte, then frames until the input ends:
///   config  bit 0    frame_notes (the Wireshark plugin's mode)
///           bit 1    tiny limits: max_ios 8, max_flows 8, max_messages 8, max_reorder_packets 16
///           bit 2    short timeouts: io_timeout 1 ms, reorder window 0, idle point 10 ms
///           bit 3    role overrides: point "p0" compute, "p1" storage, "p2" fabric
///           bits 4-6 link type of every frame: 0 Ethernet, 1 SLL, 2 SLL2, 3 raw IP, 4 BSD null,
///                    5 unsupported, 6-7 Ethernet
///           bit 7    call push() again after finish() (must be ignored) and finish() twice
///   frame   u8       bits 0-1 point index (3 = an undeclared point), bits 2-3 unit of the
///                    time step (0 ns, 1 us, 2 ms, 3 days), bit 4 step backwards, bits 5-7 r:
///                    the frame is fed 4^r times (1 ... 16384), the time step applied each time
///           u16 BE   time step (in the unit above); the first frame starts at 2023-11-14
///           u16 BE   captured length (cut to what is left of the input)
///           u16 BE   bytes the frame had on the wire beyond the captured ones (snap length)
///           bytes    the captured frame
/// At most kMaxEnginePackets frames are fed per input (repeats included).
int fuzz_engine(const uint8_t* data, size_t size);

inline constexpr size_t kMaxEnginePackets = 8192;
/// Start of the synthetic clock of fuzz_engine (ns since the epoch).
inline constexpr int64_t kFuzzEpochNs = 1700000000000000000LL;

}  // namespace rdmatel::fuzz
