// SPDX-License-Identifier: GPL-2.0-or-later
// io_quality: tags NVMe-oF-over-RoCEv2 I/Os and measures DAL, DPL, IOL1, IOL2, RTT and iol from
// the first copy of each packet seen at each observation point (SPEC §4).
//
// Matching happens per point, from that point's packets alone, in its stamp order:
//  - command: SEND FIRST/ONLY carrying a valid SQE, host→storage. Its identity (queue, CID, PSN)
//    is the same packet at every point; a new PSN with a known CID is a new I/O (CIDs are reused).
//  - data (read) and READ REQUEST (write): storage→host, RETH r_key = an SGL key of the command;
//    the oldest I/O whose command this point saw and whose stage it has not seen yet.
//  - first READ RESPONSE (write): host→storage, PSN = the READ REQUEST's PSN.
//  - completion: a 16-byte SEND storage→host, CID on the paired queue (while the two directions
//    are not paired yet, the unique queue with that CID outstanding here; the IETH key decides
//    between several); the oldest I/O with that CID whose command this point saw.
// A point that missed the command attaches its copy of a later packet by that packet's identity
// (flow, PSN) once another point has matched it.
//
// Joining across points never compares clocks: each metric is a difference of two stamps of one
// point, and which point is the compute side and which the storage side comes from the core's
// role evidence, which this component feeds with each I/O's command-to-completion spans. An I/O
// is final once every point that may still add to it has moved past it: points whose clocks are
// related to its points (by packets seen at both) past it on their own clock, points not seen yet
// or still being discovered by waiting, idle and unrelated points not at all.
#pragma once

#include <deque>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/metrics/io_quality/io_state.h"
#include "engine/src/core/component.h"
#include "engine/src/core/point_progress.h"
#include "engine/src/util/flat_map.h"
#include "engine/src/util/small_vector.h"
#include "engine/src/util/stable_pool.h"
#include "engine/src/util/word_hash.h"
#include "rdmatel/records.h"

namespace rdmatel::io_quality {

extern const ComponentSpec kSpec;

struct IoQualityStats {
  uint64_t commands = 0;
  uint64_t completions_matched = 0;
  uint64_t orphan_completions = 0;
  uint64_t ambiguous_completions = 0;
  uint64_t unparseable_capsules = 0;
  uint64_t unconfirmed_dropped = 0;  ///< commands on queues never confirmed as NVMe
  uint64_t evicted = 0;
  uint64_t late_copies = 0;  ///< packets of I/Os already reported
  uint64_t attached = 0;     ///< packets attached by identity at a point that missed the command
  uint64_t impossible = 0;   ///< I/Os reported with a negative metric (warned about)
  uint64_t missed_completions = 0;  ///< commands whose CID a point saw reused before their completion
};

class IoQuality final : public Component {
 public:
  explicit IoQuality(Ctx& ctx);
  void on_packet(const Packet& p, Ctx& ctx) override;
  void on_advance(PointId point, Ctx& ctx) override;
  void finish(Ctx& ctx) override;
  const IoQualityStats& stats() const { return stats_; }

 private:
  /// Emits a final I/O record, warning when one of its metrics is negative.
  void emit_final(const IoRecord& r, Ctx& ctx);
  // ---- matching (io_quality.cpp) ----
  /// The packet to its handler (most packets here are middles of messages: no handler).
  void dispatch(const Packet& p, Ctx& ctx);
  /// on_packet while completions are held (out of line: the common path keeps no registers).
  [[gnu::noinline]] void on_packet_holding(const Packet& p, Ctx& ctx);
  void on_command(const Packet& p, Ctx& ctx);
  /// A completion may be held for echoes (see held_): first with `until` kTimeMin (its hold then
  /// starts), again until its hold's end `until`; with `may_hold` false it is taken at its guess.
  void on_completion(const Packet& p, Ctx& ctx, TimeNs until = kTimeMin, bool may_hold = true);
  /// Whether a completion on an unpaired flow with its CID outstanding on queue `q` alone is
  /// that queue's: the IETH key or echoes say so (kShown); no other flow between the hosts may
  /// be a queue the capture saw no command of (kUncontested); or one may (kDoubted).
  enum class Evidence : uint8_t { kShown, kUncontested, kDoubted };
  Evidence corroborated(const Flow& cpl_flow, const Queue& q, const Entry* e, const Packet& p, const Ctx& ctx) const;
  /// Tries the held completions again (all of them taken at their guess with `all`).
  void retry_held(Ctx& ctx, bool all);
  /// Tries again, in order, the completions held on `flow` at `point` (before a newer one there).
  void retry_held_on(FlowId flow, PointId point, Ctx& ctx);
  void on_keyed(const Packet& p, Stage stage, Ctx& ctx);
  void on_read_response(const Packet& p, Ctx& ctx);
  void on_other_send(const Packet& p, Ctx& ctx);
  /// Whether flow `f` carries a queue's commands (this point or another saw one).
  bool has_queue(FlowId f) const { return f < queue_of_flow_.size() && queue_of_flow_[f]; }
  Queue* queue_of_flow(FlowId f) {
    return has_queue(f) ? &queues_[queue_of_flow_[f] - 1] : nullptr;
  }
  uint32_t add_queue(const Flow& flow);  ///< its index
  /// The queue whose return flow `f` is, once known (pairs are never undone).
  Queue* queue_of_return_flow(FlowId f) {
    return f < queue_of_return_flow_.size() && queue_of_return_flow_[f]
               ? &queues_[queue_of_return_flow_[f] - 1]
               : nullptr;
  }
  /// The entry a reference names, or null once it was reported (its slot free or reused).
  Entry* get(EntryRef r) {
    if (r.slot >= entries_.size()) return nullptr;
    Entry& e = entries_[r.slot];
    return e.id == r.id ? &e : nullptr;
  }
  EntryRef create(const Packet& p, uint32_t queue, Ctx& ctx);
  /// Records the first copy of `stage` at the packet's point; a later copy only counts as
  /// activity. Returns true when it was the first.
  [[gnu::always_inline]] bool stamp(Entry& e, Stage stage, const Packet& p, Ctx& ctx);
  /// A point that missed the command saw a packet another point matched to an I/O.
  bool attach_by_identity(const Packet& p, Stage stage, Ctx& ctx);
  void remember_stage(Entry& e, Stage stage, FlowId flow, uint32_t psn, Ctx& ctx);
  /// Frame notes only (the caller checks ctx.frame_notes: stamps come with every packet).
  void note_stage(Entry& e, Stage stage, const Packet& p, bool copy, Ctx& ctx);
  /// A point saw the I/O's command: its completion there is taken from the point's CID list.
  void join_cid_list(Entry& e, Observation& o);
  /// The I/O of the point's CID list `open` that completion `p` answers (null: none listed).
  Entry* answered_command(const SlotList& open, const Packet& p);
  /// A point saw a later packet of the I/O but not its command (a capture that began within the
  /// I/O there, a drop) and the role evidence has not compared it with another point yet: it may
  /// be the I/O's side nearer its host or storage server, and the sides found without it the
  /// wrong ones (a fabric point taken for the compute side).
  bool awaits_ranking(const Entry& e, const Ctx& ctx) const;
  /// `answered` took its completion at `point`: its older commands of the CID there leave the
  /// point's list (their completions the point missed).
  void leave_missed_completions(Queue& q, const Entry& answered, PointId point);
  /// Once a point has seen an I/O's completion, later completions there with its CID are
  /// another I/O's: it leaves the point's CID list.
  void leave_cid_list(Entry& e, PointId point);

  // ---- joining and finalisation (io_join.cpp) ----
  /// How far every point that may still add to an I/O has come, per clock component, worked
  /// out once per drain (see settled()).
  /// Whether a declared point has carried nothing yet (nothing is final), and the active points
  /// by horizon on their clock component's common clock, worked out at each drain.
  bool horizons_blocked_ = false;
  PointProgress horizons_{true};
  void compute_horizons(Ctx& ctx);
  /// The stamp (in `home`'s clock) up to which every point that may add to an I/O of `home`
  /// has moved.
  TimeNs bound_for(PointId home, Ctx& ctx) const;
  bool settled(const Entry& e, bool timeout, TimeNs bound, Ctx& ctx) const;
  /// The I/O's latest packet at any point related to its home, in home's clock (kTimeMin: none).
  TimeNs latest_related(const Entry& e, const Ctx& ctx) const;
  /// Stamp `ts` of `point` in the clock of the I/O's home (kTimeMin: the clocks are not related).
  TimeNs in_home_clock(const Entry& e, PointId point, TimeNs ts, const Ctx& ctx) const;
  /// `home`'s offset to its clock's root, taken once per drain of its queues (clock relations
  /// change between drains only): settled() maps another point's stamps with it. O(1): a table
  /// of every point per drain was cubic in the points (5,000 points took minutes).
  void map_to_home(PointId home, const Ctx& ctx);
  PointId mapping_home_ = kNoPoint;
  DurationNs home_to_root_ = 0;
  void drain(Ctx& ctx);
  void finalize(EntryRef r, IoEnd end, Ctx& ctx);
  void release(Entry& e);
  void emit_or_defer(const Entry& e, IoEnd end, Ctx& ctx);
  /// --point-local: one io_points record per observation of a final I/O.
  void emit_points(const Entry& e, IoEnd end, Ctx& ctx) const;
  void flush_deferred(Ctx& ctx, bool all);
  /// Whether `sides` (of the I/O, by build()) are final: both known, and no point of its path
  /// waits to be ranked. sides_decided() works them out first (a waiting I/O, not built again).
  bool sides_final(const Roles::Sides& sides, const Entry& e, const Ctx& ctx) const;
  bool sides_decided(const Entry& e, Ctx& ctx) const;
  /// The points that saw the I/O's command: the candidates for its sides.
  static SmallVector<PointId, 8> command_points(const Entry& e);
  IoRecord build(const Entry& e, IoEnd end, bool provisional, bool fallback, Ctx& ctx,
                 Roles::Sides* sides = nullptr) const;
  void add_role_evidence(const Entry& e, Ctx& ctx) const;

  // Settings.
  DurationNs io_timeout_;
  size_t max_ios_;
  bool point_local_ = false;

  // Queues by the host→storage flow.
  std::vector<Queue> queues_;
  std::vector<uint32_t> queue_of_flow_;  ///< flow id -> queue index + 1 (0: none)
  std::vector<uint32_t> queue_of_return_flow_;  ///< the same for its paired storage→host flow

  // Entries: a pool of slots; references carry the id to survive reuse.
  StablePool<Entry> entries_;  ///< by slot: entries never move
  std::vector<uint32_t> free_;
  uint64_t next_id_ = 1;
  size_t live_ = 0;

  struct CommandKey {
    uint32_t queue;
    uint16_t cid;
    uint32_t psn;
    friend bool operator==(const CommandKey&, const CommandKey&) = default;
  };
  struct CommandKeyHash {
    size_t operator()(const CommandKey& k) const noexcept {
      return fold_word(0, uint64_t(k.queue) << 40 ^ uint64_t(k.cid) << 24 ^ k.psn);
    }
  };
  FlatMap<CommandKey, EntryRef, CommandKeyHash> by_command_;

  /// The entry in a slot known to be taken (an entry in a SlotList).
  Entry& entry_in(uint32_t slot) { return entries_[slot]; }
  /// How a list reaches an entry's link: in the list of buffer key `rkey`, in a queue's `open`.
  auto key_link(uint32_t rkey) {
    return [this, rkey](uint32_t slot) -> SlotLink& {
      Entry& e = entry_in(slot);
      return e.key_link[e.key_index(rkey)];
    };
  }
  auto open_link() {
    return [this](uint32_t slot) -> SlotLink& { return entry_in(slot).open_link; };
  }
  /// Orders the commands as the points saw them (Observation::cid_order).
  uint64_t cid_order_ = 0;

  /// (host, storage) of the queues, numbered (Queue::pair), so that an SGL key is one word.
  FlatMap<IpPair, uint32_t, IpPairHash> pair_ids_;
  /// Per flow: the pair whose storage server sends on it to the host (data, READ REQUESTs), kNoPair
  /// while none (pairs_known: how many pairs there were when that was looked up).
  static constexpr uint32_t kNoPair = 0xFFFFFFFF;
  struct FlowPair {
    uint32_t pair = kNoPair;
    uint32_t pairs_known = 0;
  };
  std::vector<FlowPair> pair_toward_host_;
  uint32_t pair_toward_host(FlowId flow, const Ctx& ctx);

  /// (pair, r_key) -> I/Os whose command names that buffer, in creation order.
  static uint64_t buffer_key(uint32_t pair, uint32_t rkey) { return uint64_t(pair) << 32 | rkey; }
  struct U64Hash {
    size_t operator()(uint64_t x) const noexcept { return fold_word(0, x); }
  };
  FlatMap<uint64_t, SlotList, U64Hash> by_key_;

  /// (flow, PSN) of a matched stage packet -> its I/O and stage; READ RESPONSEs are found by the
  /// READ REQUEST's PSN on the queue's command flow.
  static uint64_t packet_key(FlowId flow, uint32_t psn, Stage stage) {
    return uint64_t(flow) << 32 | uint64_t(stage) << 24 | psn;
  }
  FlatMap<uint64_t, EntryRef, U64Hash> by_packet_;

  /// Packets seen at a point that missed the command, before another point matched them.
  struct Pending {
    PointId point;
    Stage stage;
    TimeNs ts;
    uint64_t frame;
    uint32_t psn;
    int16_t ttl;
  };
  std::unordered_map<uint64_t, std::vector<Pending>> pending_;
  /// Whether this point saw this very packet (flow, PSN) before without tying it to an I/O.
  bool seen_unmatched_here(const Packet& p, Stage stage) const;
  std::deque<uint64_t> pending_order_;  ///< bounded: the oldest are forgotten

  /// Commands of I/Os already reported stay in by_command_ as tombstones (slot kEnded) for a
  /// while, so that their late copies start nothing; the oldest go first (a ring of the last
  /// kMaxEnded, the oldest at oldest_ended_ once full).
  static constexpr uint32_t kEnded = 0xFFFFFFFF;
  static constexpr size_t kMaxEnded = 1 << 16;
  /// The sightings of an I/O whose pairs vote on the points' roles (add_role_evidence).
  static constexpr size_t kVotingPoints = 16;
  std::vector<CommandKey> ended_order_;
  size_t oldest_ended_ = 0;

  // Finalisation queues, per home point: every live entry in creation order (for timeouts), and
  // the completed ones in completion order.
  struct HomeQueues {
    std::deque<EntryRef> created;
    std::deque<EntryRef> completed;
    bool busy = false;   ///< in busy_homes_
    bool dirty = false;  ///< in dirty_homes_
  };
  std::vector<HomeQueues> homes_;
  /// The homes with I/Os in either queue, by number (at 20,000 points a drain had read 20,000
  /// empty queues at every packet).
  std::vector<PointId> busy_homes_;
  /// A drain visits only the homes where an I/O may settle: those whose queues changed since
  /// (dirty_homes_), and those whose oldest waiting I/O's need (settled()), on their clock
  /// component's common clock, the component's least horizon has reached (due_, by component).
  /// Visiting every home at every step took 92 % of `analyze` on 1,000 points with I/Os each.
  /// Every home is visited when what bound_for() reads besides that horizon may have changed:
  /// the clocks' relations, which components have active or new points, a point not heard of.
  std::vector<PointId> dirty_homes_;
  PointHeaps due_;
  std::vector<PointId> visiting_;
  bool drained_blocked_ = true;
  uint64_t drained_clock_ = ~uint64_t(0), drained_counts_ = ~uint64_t(0);
  /// A home's queues changed (an I/O in, or one taken out from elsewhere): busy, and visited at
  /// the next drain.
  void mark_changed(PointId home);
  /// Settles what it can of one home's queues; keeps busy_homes_ (unless `compacting`: the
  /// caller does) and due_ up to date.
  void visit_home(PointId home, Ctx& ctx, bool compacting);
  /// Where the home waits in due_: the least need of its oldest I/Os on its component's clock.
  void schedule(PointId home, const Ctx& ctx);
  /// Sanitizer builds: no home left unvisited had an I/O to settle (aborts if one had).
  void check_unvisited(Ctx& ctx);
#ifdef RDMATEL_CHECK_SCHEDULE
  static constexpr bool check_schedule_ = true;
#else
  static constexpr bool check_schedule_ = false;
#endif
  std::deque<EntryRef> all_created_;  ///< global creation order, for the limit on I/Os

  /// Final I/Os whose roles the evidence does not decide yet (a host seen at one point so far):
  /// they wait for evidence, bounded.
  struct Deferred {
    Entry entry;
    IoEnd end;
    DurationNs progress;  ///< capture progress when deferred
  };
  std::deque<Deferred> deferred_;
  uint64_t deferred_version_ = 0;
  /// Completions on an unpaired return flow whose CID only one queue has outstanding, with
  /// nothing yet to show they are that queue's: held until echoes pair the flows or the hold
  /// ends (then taken for that queue, as before). The queue's own return flow usually ACKs its
  /// commands within microseconds; taken at once, a completion of a queue whose commands came
  /// before the capture (its flow carrying nothing yet) paired the wrong directions, and every
  /// later I/O of both queues was measured against the other's completions.
  struct Held {
    Packet p;
    TimeNs until;  ///< on the packet's point's clock
  };
  std::vector<Held> held_;
  /// Held completions are tried again when a pairing was learned since (only that changes what
  /// they are matched to) or the earliest hold ends: not on every packet (a capture of many
  /// such completions would try them all each time).
  uint64_t held_pairs_seen_ = 0;
  bool held_worth_retrying(const Ctx& ctx) const;
  static constexpr DurationNs kHoldForEchoes = kNsPerMs;
  static constexpr size_t kMaxHeld = 256;

  IoQualityStats stats_;
  NoteKind note_stage_[kStages];
  NoteKind note_unparseable_, note_orphan_;
};

}  // namespace rdmatel::io_quality
