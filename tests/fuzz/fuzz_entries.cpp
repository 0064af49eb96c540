// SPDX-License-Identifier: GPL-2.0-or-later
// The fuzz entry points (see fuzz_entries.h). A violated invariant calls fuzz_check_failed(),
// which prints what broke and aborts: libFuzzer then saves the input as a crash.
#include "tests/fuzz/fuzz_entries.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/src/decode/nvme_capsule.h"
#include "engine/src/decode/roce_frame.h"
#include "rdmatel/capture.h"
#include "rdmatel/engine.h"
#include "rdmatel/report.h"
#include "rdmatel/writers.h"

namespace rdmatel::fuzz {
namespace {

[[noreturn]] void check_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "fuzz invariant violated: %s (%s:%d)\n", what, file, line);
  std::fflush(stderr);
  std::abort();
}
#define FUZZ_CHECK(cond) \
  do {                   \
    if (!(cond)) check_failed(#cond, __FILE__, __LINE__); \
  } while (0)

// Reads every byte of [p, p + n): under ASan an out-of-bounds view is reported right here.
uint32_t touch(const uint8_t* p, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += p[i];
  return sum;
}

volatile uint32_t g_sink;  // keeps touch() from being optimised away

constexpr LinkType kAllLinks[] = {LinkType::kEthernet, LinkType::kLinuxSll, LinkType::kLinuxSll2,
                                  LinkType::kRawIp,    LinkType::kNull,     LinkType::kUnsupported};

void check_frame(const RoceFrame& f, FrameKind kind, uint32_t cap_len, uint32_t wire_len) {
  FUZZ_CHECK(kind == f.kind);
  // A malformed frame says why; another frame only when the snap length cut its headers.
  if (kind == FrameKind::kMalformed) FUZZ_CHECK(f.error != nullptr);
  if (kind == FrameKind::kRoce) FUZZ_CHECK(f.error == nullptr);
  if (kind == FrameKind::kOther && f.error) FUZZ_CHECK(cap_len < wire_len);
  if (kind != FrameKind::kRoce) return;
  FUZZ_CHECK(f.op != nullptr && f.op->name != nullptr);
  FUZZ_CHECK(f.payload_captured <= f.payload_len);
  FUZZ_CHECK(f.bth.dest_qp <= 0xFFFFFF && f.bth.psn <= 0xFFFFFF && f.bth.pad <= 3);
  if (f.payload_captured) {
    FUZZ_CHECK(uint64_t(f.payload_offset) + f.payload_captured <= cap_len);
  }
  if (f.has(kExtAeth)) FUZZ_CHECK(f.aeth.msn <= 0xFFFFFF);
}

void decode_checked(LinkType link, const uint8_t* data, uint32_t cap, uint32_t wire) {
  RoceFrame f;
  FrameKind kind = decode_roce_frame(link, data, cap, wire, f);
  check_frame(f, kind, cap, wire);
  if (link == LinkType::kUnsupported) FUZZ_CHECK(kind == FrameKind::kOther);
  if (kind == FrameKind::kRoce && f.payload_captured) {
    g_sink = touch(data + f.payload_offset, f.payload_captured);
    NvmeSqe sqe;
    NvmeCqe cqe;
    parse_nvme_sqe(data + f.payload_offset, f.payload_captured, sqe);
    parse_nvme_cqe(data + f.payload_offset, f.payload_captured, cqe);
  }
  // Decoding is stateless: the same bytes give the same answer.
  RoceFrame again;
  FUZZ_CHECK(decode_roce_frame(link, data, cap, wire, again) == kind);
  FUZZ_CHECK(again.payload_len == f.payload_len && again.payload_offset == f.payload_offset);
}

// ---- result checking shared by the engine-driving targets ----

class CheckingSink final : public RecordSink {
 public:
  explicit CheckingSink(bool frame_notes) : frame_notes_(frame_notes) {}

  void attach(const Engine* engine, std::FILE* devnull) {
    engine_ = engine;
    if (devnull) {
      auto names = [engine](PointId id) -> const std::string& { return engine->point_name(id); };
      for (const RecordSchema* s : {&kIoSchema, &kMessageSchema, &kFlowSchema}) {
        writers_.push_back(std::make_unique<RecordWriter>(devnull, RecordFormat::kJsonl, *s, names));
        writers_.push_back(std::make_unique<RecordWriter>(devnull, RecordFormat::kCsv, *s, names));
      }
    }
  }

  void on_note(const FrameNote& n) override {
    FUZZ_CHECK(frame_notes_);
    FUZZ_CHECK(n.frame >= 1 && n.frame <= current_frame);
    FUZZ_CHECK(!note_kind_name(n.kind).empty());
  }

  void on_record(const Record& rec) override {
    FUZZ_CHECK(!finished);
    // I/O and message snapshots only reach sinks that want frame notes; congestion records are
    // snapshot each period for everyone (live counters), provisional so that writers skip them.
    FUZZ_CHECK(!rec.provisional || frame_notes_ || rec.is(kCongestionSchema));
    if (!rec.provisional)
      for (auto& w : writers_) w->on_record(rec);
    if (rec.is(kMessageSchema)) {
      const MessageRecord& m = rec.as<MessageRecord>();
      FUZZ_CHECK(m.fct_ns() >= 0);
      FUZZ_CHECK(m.retrans_packets <= m.packets && m.retrans_bytes <= m.bytes);
      return;
    }
    if (!rec.is(kIoSchema)) return;
    const IoRecord& r = rec.as<IoRecord>();
    FUZZ_CHECK(r.op != nullptr && r.op[0] != 0);
    FUZZ_CHECK(r.id != 0);
    size_t npoints = engine_->point_count();
    for (PointId p : {r.compute_point, r.storage_point, r.iol_point}) FUZZ_CHECK(p == kNoPoint || p < npoints);
    FUZZ_CHECK((r.t.present & 1u) == 0);  // T0 does not exist
    FUZZ_CHECK(r.cmd_frame <= current_frame && r.rsp_frame <= current_frame);
    FUZZ_CHECK(!r.complete || r.rsp_frame != 0);
    FUZZ_CHECK((r.end == IoEnd::kCompleted) == r.complete);
    IoMetrics m = io_metrics(r);
    (void)m;
    State& s = ios_[r.id];
    if (r.provisional) {
      FUZZ_CHECK(frame_notes_);  // provisional snapshots only reach sinks that want frame notes
      FUZZ_CHECK(!s.final_seen);
      return;
    }
    FUZZ_CHECK(!s.final_seen);  // exactly one final record per I/O
    s.final_seen = true;
    ++final_records;
    report.add(r);
  }

  void on_warning(const Warning& w) override { FUZZ_CHECK(!w.text.empty() && !w.key.empty()); }

  uint64_t current_frame = 0;
  bool finished = false;
  uint64_t final_records = 0;
  IoReport report;

 private:
  struct State {
    bool final_seen = false;
  };
  bool frame_notes_;
  const Engine* engine_ = nullptr;
  std::unordered_map<uint64_t, State> ios_;
  std::vector<std::unique_ptr<RecordWriter>> writers_;
};

std::FILE* devnull() {
  static std::FILE* f = std::fopen("/dev/null", "w");
  return f;
}

// RDMATEL_FUZZ_VERBOSE=1 prints what each input produced (to check that seeds reach the metrics).
bool verbose() {
  static const bool v = std::getenv("RDMATEL_FUZZ_VERBOSE") != nullptr;
  return v;
}

void finish_and_check(Engine& engine, CheckingSink& sink) {
  engine.finish();
  sink.finished = true;
  engine.finish();  // idempotent
  FUZZ_CHECK(sink.report.total().ios == sink.final_records);
  for (const auto& [host, g] : sink.report.by_host())
    for (size_t i = 0; i < size_t(IoMetric::kCount); ++i) g_sink = g_sink + uint32_t(g.metric[i].percentile(99) & 1);
  if (verbose()) {
    const EngineStats& st = engine.stats();
    const IoGroupStats& t = sink.report.total();
    std::fprintf(stderr, "fuzz: %llu frames, %llu RoCE, %llu malformed, %zu points, %llu I/Os (%llu incomplete)\n",
                 (unsigned long long)st.frames, (unsigned long long)st.roce, (unsigned long long)st.malformed,
                 engine.point_count(), (unsigned long long)t.ios, (unsigned long long)t.incomplete);
  }
}

// A memfd the reader target reuses for every input; opened by its /proc path.
struct MemFile {
  int fd = -1;
  std::string path;
  MemFile() {
    fd = memfd_create("rdmatel_fuzz", MFD_CLOEXEC);
    if (fd < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  void set(const uint8_t* data, size_t size) {
    if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != ssize_t(size))) {
      std::perror("memfd write");
      std::abort();
    }
  }
};

// The address range of the reader's mapping of the memfd, from /proc/self/maps.
bool find_mapping(const uint8_t* inside, uintptr_t& start, uintptr_t& end) {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return false;
  char line[512];
  bool found = false;
  uintptr_t p = uintptr_t(inside);
  while (std::fgets(line, sizeof line, maps)) {
    unsigned long a = 0, b = 0;
    if (std::sscanf(line, "%lx-%lx", &a, &b) == 2 && p >= a && p < b && std::strstr(line, "rdmatel_fuzz")) {
      start = a;
      end = b;
      found = true;
      break;
    }
  }
  std::fclose(maps);
  return found;
}

// Stamps handed to the engine: the whole 64-bit range (the engine clamps them itself). Build
// with -DRDMATEL_FUZZ_CLAMP_TIME to keep them within 1970..2116 when hunting other bugs.
TimeNs engine_ts(TimeNs ts) {
#ifdef RDMATEL_FUZZ_CLAMP_TIME
  constexpr TimeNs kMaxTs = TimeNs(1) << 62;
  return ts < 0 ? 0 : ts > kMaxTs ? kMaxTs : ts;
#else
  return ts;
#endif
}

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<int64_t>::max()
                                                     : std::numeric_limits<int64_t>::min();
  return r;
}

}  // namespace

int fuzz_frame_decoder(const uint8_t* data, size_t size) {
  if (size > 1u << 20) return 0;
  uint32_t n = uint32_t(size);
  for (LinkType link : kAllLinks) {
    decode_checked(link, data, n, n);          // fully captured
    decode_checked(link, data, n, n + 4000);   // cut by a snap length
    decode_checked(link, data, n, 0);          // writers that store 0 as the original length
    if (n > 1) decode_checked(link, data, n / 2, n);
  }
  return 0;
}

int fuzz_nvme_capsule(const uint8_t* data, size_t size) {
  NvmeSqe sqe;
  if (parse_nvme_sqe(data, size, sqe)) {
    FUZZ_CHECK(size >= kNvmeSqeMinCaptured);
    FUZZ_CHECK(!(sqe.keyed() && sqe.in_capsule()));
    if (sqe.keyed()) FUZZ_CHECK(sqe.sgl_len <= 0xFFFFFF);
    for (NvmeQueueKind q : {NvmeQueueKind::kUnknown, NvmeQueueKind::kAdmin, NvmeQueueKind::kIo}) {
      const char* name = nvme_op_name(sqe.opcode, sqe.fctype, q);
      FUZZ_CHECK(name && name[0]);
      g_sink = uint32_t(std::strlen(name));
    }
    nvme_admin_only_opcode(sqe.opcode);
  }
  NvmeCqe cqe;
  bool cqe_ok = parse_nvme_cqe(data, size, cqe);
  FUZZ_CHECK(cqe_ok == (size >= kNvmeCqeMinCaptured));
  if (cqe_ok) FUZZ_CHECK(cqe.status <= 0x7FFF);
  // Every opcode has a name in every command set.
  if (size >= 2) FUZZ_CHECK(nvme_op_name(data[0], data[1], NvmeQueueKind(data[1] % 3))[0] != 0);
  return 0;
}

int fuzz_capture_reader(const uint8_t* data, size_t size) {
  static MemFile file;
  file.set(data, size);
  std::unique_ptr<CaptureSource> src;
  std::string error;
  OpenStatus st = open_fast_capture(file.path, src, error);
  if (st != OpenStatus::kOk) {
    FUZZ_CHECK(!src);
    if (st == OpenStatus::kError) FUZZ_CHECK(!error.empty());
    return 0;
  }
  FUZZ_CHECK(src != nullptr);
  FUZZ_CHECK(src->size() == size);

  CheckingSink sink(false);
  Settings cfg;
  std::string err;
  cfg.set("max_flows", "64", err);
  cfg.set("max_ios", "64", err);
  Engine engine(cfg);
  engine.subscribe(sink);
  sink.attach(&engine, devnull());
  std::vector<PointId> points;

  uintptr_t map_start = 0, map_end = 0;
  bool mapped = false;
  uint64_t last_frame = 0, packets = 0;
  CapturedPacket p;
  while (src->next(p)) {
    ++packets;
    FUZZ_CHECK(packets <= size / 12 + 1);  // every packet consumes at least one 12-byte block
    FUZZ_CHECK(p.frame > last_frame);
    last_frame = p.frame;
    FUZZ_CHECK(p.cap_len <= p.wire_len);
    FUZZ_CHECK(p.cap_len <= size);
    FUZZ_CHECK(p.interface < src->interfaces().size());
    FUZZ_CHECK(p.link == src->interfaces()[p.interface].link);
    FUZZ_CHECK(src->position() <= src->size());
    if (p.cap_len) {
      FUZZ_CHECK(p.data != nullptr);
      if (!mapped) mapped = find_mapping(p.data, map_start, map_end);
      if (mapped) {
        // Inside the file, not merely inside the (page-rounded) mapping.
        FUZZ_CHECK(uintptr_t(p.data) >= map_start);
        FUZZ_CHECK(uintptr_t(p.data) + p.cap_len <= map_start + size);
        // And the bytes are the file's bytes.
        FUZZ_CHECK(std::memcmp(p.data, data + (uintptr_t(p.data) - map_start), p.cap_len) == 0);
      }
    }
    // Feed the engine as the CLI does: every interface declared, in file order.
    while (points.size() < src->interfaces().size()) {
      uint32_t id = uint32_t(points.size());
      const std::string& name = src->interfaces()[id].name;
      points.push_back(engine.declare_point(name.empty() ? "if" + std::to_string(id) : name, id));
    }
    FrameIn in;
    in.frame = p.frame;
    in.ts = engine_ts(p.ts);
    in.has_ts = p.has_ts;
    in.point = points[p.interface];
    in.link = p.link;
    in.data = p.data;
    in.cap_len = p.cap_len;
    in.wire_len = p.wire_len;
    sink.current_frame = p.frame;
    engine.push(in);
  }
  FUZZ_CHECK(src->position() == src->size() || !src->error().empty());
  CapturedPacket after;
  FUZZ_CHECK(!src->next(after));  // the end stays the end
  finish_and_check(engine, sink);
  return 0;
}

int fuzz_engine(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  uint8_t config = data[0];
  Settings cfg;
  std::string err;
  cfg.frame_notes = config & 0x01;
  if (config & 0x02) {
    cfg.set("max_ios", "8", err);
    cfg.set("max_flows", "8", err);
    cfg.set("max_messages", "8", err);
    cfg.set("max_reorder_packets", "16", err);
  }
  if (config & 0x04) {
    cfg.set("io_timeout", "0.001", err);
    cfg.set("reorder_window", "0", err);
    cfg.set("idle_point", "0.01", err);
  }
  if (config & 0x08) {
    cfg.set("point", "p0=compute", err);
    cfg.set("point", "p1=storage", err);
    cfg.set("point", "p2=fabric", err);
  }
  static constexpr LinkType kLinks[8] = {LinkType::kEthernet, LinkType::kLinuxSll, LinkType::kLinuxSll2,
                                         LinkType::kRawIp,    LinkType::kNull,     LinkType::kUnsupported,
                                         LinkType::kEthernet, LinkType::kEthernet};
  LinkType link = kLinks[(config >> 4) & 7];
  bool after_finish = config & 0x80;

  CheckingSink sink(cfg.frame_notes);
  Engine engine(cfg);
  engine.subscribe(sink);
  sink.attach(&engine, devnull());
  PointId points[4] = {engine.declare_point("p0", 0), engine.declare_point("p1", 1), engine.declare_point("p2", 2),
                       kNoPoint};

  constexpr size_t kFrameHeader = 7;
  static constexpr int64_t kUnits[4] = {1, kNsPerUs, kNsPerMs, 86400 * kNsPerSec};
  int64_t ts = kFuzzEpochNs;
  uint64_t frame = 0;
  size_t off = 1;
  std::vector<uint8_t> buf;
  while (off + kFrameHeader <= size && frame < kMaxEnginePackets) {
    uint8_t h = data[off];
    int64_t step = int64_t(uint16_t(data[off + 1] << 8 | data[off + 2])) * kUnits[(h >> 2) & 3];
    if (h & 0x10) step = -step;
    size_t len = size_t(data[off + 3] << 8 | data[off + 4]);
    uint32_t extra = uint32_t(data[off + 5] << 8 | data[off + 6]);
    off += kFrameHeader;
    if (len > size - off) len = size - off;
    // An exactly-sized copy: ASan sees any read past the frame's captured bytes.
    buf.assign(data + off, data + off + len);
    off += len;
    uint64_t repeat = uint64_t(1) << (2 * (h >> 5));
    for (uint64_t i = 0; i < repeat && frame < kMaxEnginePackets; ++i) {
      ts = saturating_add(ts, step);
      FrameIn in;
      in.frame = ++frame;
      in.ts = engine_ts(ts);
      in.point = points[h & 3];
      in.link = link;
      in.data = buf.empty() ? nullptr : buf.data();
      in.cap_len = uint32_t(len);
      in.wire_len = uint32_t(len) + extra;
      sink.current_frame = frame;
      engine.push(in);
    }
  }
  finish_and_check(engine, sink);
  if (after_finish && !buf.empty()) {
    FrameIn in;
    in.frame = ++frame;
    in.ts = engine_ts(ts);
    in.point = points[0];
    in.link = link;
    in.data = buf.data();
    in.cap_len = uint32_t(buf.size());
    in.wire_len = uint32_t(buf.size());
    sink.current_frame = frame;
    engine.push(in);  // after finish(): counted, never measured (the sink rejects records)
    engine.finish();
  }
  return 0;
}

}  // namespace rdmatel::fuzz
