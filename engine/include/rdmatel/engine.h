// SPDX-License-Identifier: GPL-2.0-or-later
// The measurement engine, fed one frame at a time. Front ends that drive their own loop (the
// Wireshark plugin) push frames here; everyone else uses a Session (rdmatel/session.h), which
// owns an Engine and feeds it from capture files, pipes or live sources.
//
// Frames may come in any order within the reorder window: per observation point the engine
// handles packets in stamp order. Clocks of different points are never compared: every metric
// is a difference of stamps of one point, and roles come from clock-independent evidence.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rdmatel/gpu_map.h"
#include "rdmatel/settings.h"
#include "rdmatel/sink.h"
#include "rdmatel/types.h"

namespace rdmatel {

struct DecodedFrame;  // engine-internal (engine/src/decode/decoded_frame.h)

/// One frame as the front end read it. The bytes need only stay valid during push().
struct FrameIn {
  uint64_t frame = 0;  ///< 1-based frame number, as Wireshark numbers frames
  TimeNs ts = 0;
  bool has_ts = true;  ///< false: the record has no timestamp (it is counted, not measured)
  PointId point = kNoPoint;  ///< from declare_point()
  LinkType link = LinkType::kEthernet;
  const uint8_t* data = nullptr;
  uint32_t cap_len = 0;
  uint32_t wire_len = 0;
  /// Which capture of the point the frame comes from (a file, or an interface of one): the same
  /// packet twice at one stamp from two captures is one packet given twice; from one capture it
  /// may be a NAK and its repeat (engine.cpp, given_twice).
  uint32_t source = 0;
  /// CapturedPacket::decoded, passed on (the session does): the engine takes the frame's headers,
  /// capsule and payload hash from it instead of decoding the bytes. Null: it decodes them.
  const DecodedFrame* decoded = nullptr;
};

/// What the engine counted.
struct EngineStats {
  uint64_t frames = 0;
  uint64_t roce = 0;
  uint64_t malformed = 0;
  uint64_t pfc = 0;
  uint64_t unsupported_link = 0;
  uint64_t without_point = 0;
  uint64_t without_timestamp = 0;
  uint64_t duplicates = 0;  ///< the same packet given twice at one point (counted once)
  uint64_t late = 0;        ///< later than the reorder window at their point (handled late)
  uint64_t mirror_copies = 0;  ///< the same RoCE packet again at one point within mirror_copy_window (counted once)
  /// RoCE packets not measured: of flows beyond max_flows, or of flows at points new to them
  /// once max_flows flow-points are tracked.
  uint64_t beyond_max_flows = 0;
};

/// An observation point as the engine sees it.
struct PointInfo {
  std::string name;
  PointRole configured = PointRole::kUnknown;  ///< from --point / the role table
  /// Summary for display: configured, else the role it has for most endpoints it was ranked
  /// for (a leaf mirror can be the compute side of its hosts and the storage side of its
  /// storage servers: then kCompute if compute-side ranks outnumber storage-side ones); kFabric
  /// when it was ranked for some endpoint but is the nearest side of none (a spine between them).
  PointRole role = PointRole::kUnknown;
  uint64_t compute_endpoints = 0;  ///< hosts this point is the compute side of
  uint64_t storage_endpoints = 0;  ///< storage servers it is the storage side of
  uint64_t packets = 0;
  uint64_t speed_bps = 0;
  /// Packets the capture itself dropped at this point, as its file's interface statistics say
  /// (0: none, or not recorded): packets missing here may be the capture's, not the network's.
  uint64_t capture_dropped = 0;
};

/// The RDMA endpoints of one frame, decoded statelessly (for front ends that show them).
struct RoceHeaders {
  IpAddress src, dst;
  uint32_t dst_qpn = 0;
  bool has_src_qpn = false;  ///< UD packets name their sender (DETH)
  uint32_t src_qpn = 0;
  uint16_t mirror_id = 0;  ///< ERSPAN session ID + 1 of a mirrored frame (0: none), see Engine::session_point
  IpAddress mirror_src;    ///< the mirror's address (the tunnel's source)
};
/// True when the frame is a RoCEv2 packet; fills `out`.
bool peek_roce(LinkType link, const uint8_t* data, uint32_t cap_len, uint32_t wire_len, RoceHeaders& out);

class Engine {
 public:
  explicit Engine(const Settings& settings);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Adds a receiver of records, notes and warnings (before the first frame).
  void subscribe(RecordSink& sink);

  /// Declares an observation point; the same name gives the same point. Declare every point a
  /// capture announces before its frames: results wait for points that have not carried a
  /// packet yet. `interface_id` lets a role override name the point by number. Returns
  /// kNoPoint (with a warning) beyond the limit on points.
  PointId declare_point(const std::string& name, uint32_t interface_id = 0, uint64_t speed_bps = 0);

  /// The capture itself dropped `dropped` packets at `point` (its file's interface statistics,
  /// known at the end of the file): kept as the largest told, for PointInfo and the front ends.
  void set_capture_dropped(PointId point, uint64_t dropped);

  /// `point` captured nothing after `from` until `to` (its stamps), though the capture went on:
  /// a ring file of its capture is missing. Copies that would have reached it then are not known
  /// lost. Tell it before the point's packets after the gap (the session does, at the end of
  /// the file before the gap).
  void capture_gap(PointId point, TimeNs from, TimeNs to);

  /// Handles one frame. Never throws on packet contents.
  void push(const FrameIn& frame);

  /// Ends the input: every outstanding record is finalized. Idempotent.
  void finish();
  bool finished() const;
  /// After finish(): frees what only measuring needed (the components' and record stages' state,
  /// the reorder buffers and mirror-copy tables), a reorder window's worth of packets, messages
  /// and I/Os. What the accessors below read stays: points, roles, flows, stats. For a front end
  /// that keeps the engine long after its input ended (the Wireshark plugin, for the rest of a
  /// GUI session). Nothing is measured after it (push ignores frames, as after finish). Does
  /// nothing before finish(); on two threads (`threads` > 1) the second thread's components stay.
  void release_measurement_state();

  size_t point_count() const;
  /// The point a frame of `interface_point` mirrored by ERSPAN session `mirror_id` (RoceHeaders)
  /// was measured at: one capture interface receiving several sessions holds a point per session.
  /// `interface_point` when the frame has no session or its session has no point of its own.
  PointId session_point(PointId interface_point, uint16_t mirror_id, const IpAddress& mirror_src) const;
  /// After finish(), with frame notes: the point frame `frame` of `interface_point` was measured at
  /// (its ERSPAN session's, see session_point), for front ends that link frames to points.
  PointId frame_point(uint64_t frame, PointId interface_point) const;
  PointInfo point(PointId id) const;
  const std::string& point_name(PointId id) const;
  /// The role of `point` for a packet between `a` and `b` (an I/O's host and storage in either
  /// order): compute when it is the compute side of the host among them, storage when it is the
  /// storage side of the storage server, fabric when ranked otherwise, kUnknown without evidence.
  PointRole role_for(PointId point, const IpAddress& a, const IpAddress& b) const;

  /// The sending QPN of a packet from `src` to `dst` queue pair `dst_qpn`, once the capture
  /// showed the reverse direction of the queue pair.
  std::optional<uint32_t> sending_qpn(const IpAddress& src, const IpAddress& dst, uint32_t dst_qpn) const;

  const EngineStats& stats() const;
  /// The GPU binding the engine was given (the `gpu` setting).
  const GpuMap& gpus() const;
  /// The last malformed-packet reason, or nullptr.
  const char* last_error() const;

  /// Role overrides (--point NAME=ROLE) whose NAME matches no declared point.
  std::vector<std::string> unmatched_role_overrides() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rdmatel
