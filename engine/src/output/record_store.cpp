// SPDX-License-Identifier: GPL-2.0-or-later
#include "rdmatel/record_store.h"

#include <algorithm>
#include <cstring>

#include "engine/src/util/big_array.h"
#include "engine/src/util/hash.h"
#include "rdmatel/dense_sort.h"
#include "rdmatel/schema.h"

namespace rdmatel {
namespace {

// The record stored for `id` in a deque indexed by id - 1, or nullptr.
template <typename Record>
const Record* record_at(const std::deque<Record>& records, uint64_t id) {
  if (id == 0 || id > records.size()) return nullptr;
  const Record& r = records[id - 1];
  return r.id == id ? &r : nullptr;
}

template <typename R>
void store(std::deque<R>& records, const R& r) {
  if (r.id == 0) return;
  if (r.id > records.size()) records.resize(r.id);  // ids are handed out 1, 2, ...: few new slots
  records[r.id - 1] = r;
}

// The entries of `index` (sorted by frame, `frame_of` each) for `frame`, as [first, last). The
// plugin's pass over the capture asks frame after frame, so the search starts where the last one
// ended (`hint`) and steps on a few entries before it falls back to a binary search: a pass then
// costs about a step per entry, not a binary search of every index for every frame.
template <typename Index, typename FrameOf>
std::pair<size_t, size_t> frame_range(const Index& index, uint64_t frame, size_t& hint, FrameOf frame_of) {
  constexpr size_t kSteps = 8;
  const size_t n = index.size();
  size_t first = hint <= n ? hint : n;
  if (first > 0 && frame_of(index[first - 1]) >= frame) first = 0;  // an earlier frame: search all
  for (size_t steps = 0; first < n && frame_of(index[first]) < frame; ++first)
    if (++steps == kSteps) {
      size_t lo = first, hi = n;  // frame_of(index[lo]) < frame
      while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        (frame_of(index[mid]) < frame ? lo : hi) = mid;
      }
      first = hi;
      break;
    }
  size_t last = first;
  while (last < n && frame_of(index[last]) == frame) ++last;
  hint = first;
  return {first, last};
}

}  // namespace

// The notes in one mapped block grown in place (BigArray: mremap moves pages, it copies none, and
// capacity not yet written takes no memory), where a vector doubled into a new block and copied,
// holding both for a moment and the slack after.
class RecordStore::NoteArray {
 public:
  void push_back(const FrameNote& n) {
    if (size_ == notes_.size()) notes_.grow_to(std::max<size_t>(kFirstCapacity, 2 * size_));
    notes_[size_++] = n;
  }
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  std::span<const FrameNote> span() const { return {notes_.data(), size_}; }
  const FrameNote& operator[](size_t i) const { return notes_[i]; }

  // By frame, notes of one frame in the order they came: a counting sort (rdmatel/dense_sort.h). The
  // sorted notes go to a second block while the first is read from its front and given back
  // behind the read position: the notes come about in frame order, so the two together hold
  // about one copy.
  void sort_by_frame() {
    FrameNote* const begin = notes_.data();
    FrameNote* const end = begin + size_;
    auto by_frame = [](const FrameNote& a, const FrameNote& b) { return a.frame < b.frame; };
    if (std::is_sorted(begin, end, by_frame)) return;
    std::vector<uint32_t> start = dense_key_starts(begin, end, [](const FrameNote& n) { return n.frame; });
    if (start.empty()) {
      std::stable_sort(begin, end, by_frame);
      return;
    }
    BigArray<FrameNote> sorted(std::max<size_t>(kFirstCapacity, size_));
    constexpr size_t kGiveBackEvery = (size_t(1) << 20) / sizeof(FrameNote);
    for (size_t i = 0; i < size_; ++i) {
      sorted[start[size_t(begin[i].frame)]++] = begin[i];
      if ((i + 1) % kGiveBackEvery == 0) notes_.discard(i + 1 - kGiveBackEvery, i + 1);
    }
    notes_ = std::move(sorted);
  }

 private:
  // Mapped from the first (2 MiB and more): untouched capacity costs address space only.
  static constexpr size_t kFirstCapacity = (size_t(2) << 20) / sizeof(FrameNote) + 1;
  BigArray<FrameNote> notes_;
  size_t size_ = 0;
};

RecordStore::RecordStore() : notes_(std::make_unique<NoteArray>()) {}
RecordStore::~RecordStore() = default;

void RecordStore::forget_notes() { notes_->clear(); }
std::span<const FrameNote> RecordStore::all_notes() const { return notes_->span(); }
size_t RecordStore::note_count() const { return notes_->size(); }

void RecordStore::on_record(const Record& r) {
  if (r.is(kIoSchema)) store(ios_, r.as<IoRecord>());
  else if (r.is(kMessageSchema)) store_message(r.as<MessageRecord>());
  else if (r.is(kCongestionSchema)) {
    if (r.provisional) return;  // the periodic snapshots: the final record follows at the end
    if (const auto* e = congestion_as<EcnRecord>(r.as<CongestionHead>())) congestion_.push_back(*e);
    else if (const auto* p = congestion_as<PfcRecord>(r.as<CongestionHead>())) pfc_.push_back(*p);
    else if (const auto* c = congestion_as<CnpRecord>(r.as<CongestionHead>())) cnps_.push_back(*c);
  }
  else if (r.is(kDiagnosisSchema)) {
    const DiagnosisRecord& d = r.as<DiagnosisRecord>();
    if (d.rank) findings_.push_back(d);
  } else if (r.is(kPathSchema)) {
    paths_.push_back(r.as<PathRecord>());  // final only, numbered 1, 2, ... as path.record notes say
  }
}

const PathRecord* RecordStore::path(uint64_t n) const {
  return n >= 1 && n <= paths_.size() ? &paths_[n - 1] : nullptr;
}

const DiagnosisRecord* RecordStore::finding(uint64_t rank) const {
  for (const DiagnosisRecord& d : findings_)
    if (d.rank == rank) return &d;
  return nullptr;
}

void RecordStore::on_note(const FrameNote& n) {
  if (keep_notes_) notes_->push_back(n);
}

const IoRecord* RecordStore::io(uint64_t id) const { return record_at(ios_, id); }

size_t RecordStore::MessageFlowKeyHash::operator()(const MessageFlowKey& k) const {
  return size_t(hash_bytes(k.data(), k.size()));
}

void RecordStore::store_message(const MessageRecord& r) {
  if (r.id == 0) return;
  MessageFlow f;
  f.src = r.src;
  f.dst = r.dst;
  f.dst_qpn = r.dst_qpn;
  f.point = r.point;
  f.gpu = r.gpu;
  f.key_flow = r.key_flow;
  // Every member is compared, GPU names by pointer (they are interned).
  MessageFlowKey key;
  uint8_t* k = key.data();
  auto put = [&k](const auto& v) {
    std::memcpy(k, &v, sizeof v);
    k += sizeof v;
  };
  put(f.src.bytes);
  put(f.src.v6);
  put(f.dst.bytes);
  put(f.dst.v6);
  put(f.dst_qpn);
  put(f.point);
  put(f.gpu);
  put(f.key_flow);
  static_assert(sizeof(GpuEnds) == 5 * sizeof(const char*), "GpuEnds is its five pointers, without padding");
  RecentFlow& recent = recent_flows_[(f.dst_qpn ^ f.dst_qpn >> 6 ^ f.point * 7) % recent_flows_.size()];
  if (recent.index == UINT32_MAX || recent.key != key) {
    auto [it, added] = message_flow_ids_.try_emplace(key, uint32_t(message_flows_.size()));
    if (added) message_flows_.push_back(f);
    recent = RecentFlow{key, it->second};
  }
  if (r.id > messages_.size()) messages_.resize(r.id);  // ids are handed out 1, 2, ...: few new slots
  StoredMessage& m = messages_[r.id - 1];
  m.merged_into = r.merged_into;
  m.flow = recent.index;
  m.first_psn = r.first_psn;
  m.last_psn = r.last_psn;
  m.kind = r.kind;
  m.present = true;
  m.with_immediate = r.with_immediate;
  m.complete = r.complete;
  m.provisional = r.provisional;
  m.has_poll_period = r.poll_period_ns.has_value();
  m.poll_period_ns = r.poll_period_ns.value_or(0);
  m.first_ns = r.first_ns;
  m.last_ns = r.last_ns;
  m.first_frame = r.first_frame;
  m.last_frame = r.last_frame;
  m.packets = r.packets;
  m.retrans_packets = r.retrans_packets;
  m.bytes = r.bytes;
  m.retrans_bytes = r.retrans_bytes;
  m.naks = r.naks;
}

MessageRecord RecordStore::expand(uint64_t id) const {
  const StoredMessage& m = messages_[id - 1];
  const MessageFlow& f = message_flows_[m.flow];
  MessageRecord r;
  r.id = id;
  r.src = f.src;
  r.dst = f.dst;
  r.dst_qpn = f.dst_qpn;
  r.point = f.point;
  r.gpu = f.gpu;
  r.key_flow = f.key_flow;
  r.kind = m.kind;
  r.with_immediate = m.with_immediate;
  r.complete = m.complete;
  r.provisional = m.provisional;
  r.merged_into = m.merged_into;
  r.first_psn = m.first_psn;
  r.last_psn = m.last_psn;
  r.first_ns = m.first_ns;
  r.last_ns = m.last_ns;
  r.first_frame = m.first_frame;
  r.last_frame = m.last_frame;
  r.packets = m.packets;
  r.retrans_packets = m.retrans_packets;
  r.bytes = m.bytes;
  r.retrans_bytes = m.retrans_bytes;
  r.naks = m.naks;
  if (m.has_poll_period) r.poll_period_ns = m.poll_period_ns;
  return r;
}

uint64_t RecordStore::resolve_message(uint64_t id) const {
  auto stored = [&](uint64_t i) { return i >= 1 && i <= messages_.size() && messages_[i - 1].present; };
  // Follow merges (bounded: each merge points to an older, still-open message).
  if (!stored(id)) return 0;
  for (int hops = 0; messages_[id - 1].merged_into && hops < 64; ++hops) {
    id = messages_[id - 1].merged_into;
    if (!stored(id)) return 0;
  }
  return messages_[id - 1].merged_into ? 0 : id;
}

std::optional<MessageRecord> RecordStore::message(uint64_t id) const {
  id = resolve_message(id);
  if (!id) return std::nullopt;
  return expand(id);
}

uint64_t RecordStore::message_completed_on(uint64_t id, uint64_t frame) const {
  id = resolve_message(id);
  if (!id) return 0;
  const StoredMessage& m = messages_[id - 1];
  return m.complete && m.last_frame == frame ? id : 0;
}

std::span<const FrameNote> RecordStore::notes_since(size_t from) const {
  if (from >= notes_->size()) return {};
  return notes_->span().subspan(from);
}

void RecordStore::index() {
  if (indexed_) return;
  indexed_ = true;
  notes_->sort_by_frame();
  for (const IoRecord& r : ios_) {
    if (!r.id || r.provisional) continue;  // an I/O on a queue never confirmed as NVMe: no final record
    uint64_t frame = r.complete ? r.rsp_frame : r.cmd_frame;
    if (!frame) frame = r.cmd_frame ? r.cmd_frame : r.rsp_frame;
    if (frame) io_by_frame_.emplace_back(frame, &r);
  }
  for (size_t i = 0; i < messages_.size(); ++i) {
    const StoredMessage& m = messages_[i];
    if (!m.present || m.merged_into || m.provisional || !m.last_frame) continue;
    message_by_frame_.emplace_back(m.last_frame, uint64_t(i + 1));
  }
  // Ties (one completion or one message end per frame in practice) keep record id order: both
  // were gathered in id order.
  stable_sort_by_dense_key(io_by_frame_, [](const auto& e) { return e.first; });
  stable_sort_by_dense_key(message_by_frame_, [](const auto& e) { return e.first; });
  std::stable_sort(congestion_.begin(), congestion_.end(),
                   [](const auto& a, const auto& b) { return a.first_frame < b.first_frame; });
  std::stable_sort(pfc_.begin(), pfc_.end(), [](const auto& a, const auto& b) { return a.first_frame < b.first_frame; });
  std::stable_sort(cnps_.begin(), cnps_.end(), [](const auto& a, const auto& b) { return a.first_frame < b.first_frame; });
}

const EcnRecord* RecordStore::congestion_counted_on(uint64_t frame) const {
  auto [first, last] = frame_range(congestion_, frame, hints_.congestion, [](const EcnRecord& r) { return r.first_frame; });
  return first < last && frame ? &congestion_[first] : nullptr;
}

const CnpRecord* RecordStore::cnp_counted_on(uint64_t frame) const {
  auto [first, last] = frame_range(cnps_, frame, hints_.cnps, [](const CnpRecord& r) { return r.first_frame; });
  return first < last && frame ? &cnps_[first] : nullptr;
}

std::vector<const PfcRecord*> RecordStore::pfc_counted_on(uint64_t frame) const {
  std::vector<const PfcRecord*> out;
  auto [first, last] = frame_range(pfc_, frame, hints_.pfc, [](const PfcRecord& r) { return r.first_frame; });
  for (size_t i = first; frame && i < last; ++i) out.push_back(&pfc_[i]);
  return out;
}

std::span<const FrameNote> RecordStore::notes(uint64_t frame) const {
  auto [first, last] = frame_range(*notes_, frame, hints_.notes, [](const FrameNote& n) { return n.frame; });
  return notes_->span().subspan(first, last - first);
}

std::vector<const IoRecord*> RecordStore::ios_counted_on(uint64_t frame) const {
  std::vector<const IoRecord*> out;
  auto [first, last] = frame_range(io_by_frame_, frame, hints_.ios, [](const auto& e) { return e.first; });
  for (size_t i = first; i < last; ++i) out.push_back(io_by_frame_[i].second);
  return out;
}

std::span<const std::pair<uint64_t, uint64_t>> RecordStore::messages_ending_on(uint64_t frame) const {
  auto [first, last] = frame_range(message_by_frame_, frame, hints_.messages, [](const auto& e) { return e.first; });
  return std::span<const std::pair<uint64_t, uint64_t>>(message_by_frame_).subspan(first, last - first);
}

std::vector<MessageRecord> RecordStore::messages_counted_on(uint64_t frame) const {
  std::vector<MessageRecord> out;
  for (const auto& [last_frame, id] : messages_ending_on(frame)) out.push_back(expand(id));
  return out;
}

}  // namespace rdmatel
