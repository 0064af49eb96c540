// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/analysis.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <set>

#include "rdmatel/sink.h"
#ifdef RDMATEL_ANALYZER_WIRETAP
#include "adapters/wiretap/wiretap_source.h"
#endif

namespace rdmatel::ui {

SettingOverrides SettingOverrides::analyzer_defaults() {
  SettingOverrides s;
  s.values.emplace_back("period", "0.01");
  // As the CLI: the per-flow components and the delivery of records on a second thread where
  // there are two cores (the same results; the sink only asks the engine for point names).
  if (std::thread::hardware_concurrency() >= 2) s.values.emplace_back("threads", "2");
  return s;
}

std::string SettingOverrides::text(const std::string& name) const {
  for (auto it = values.rbegin(); it != values.rend(); ++it)
    if (it->first == name) return it->second;
  const SettingSpec* spec = find_setting(name);
  return spec ? spec->fallback : "";
}

void SettingOverrides::set(const std::string& name, const std::string& text) {
  std::erase_if(values, [&](const auto& v) { return v.first == name; });
  values.emplace_back(name, text);
}

bool SettingOverrides::apply(Settings& out, std::string& error) const {
  for (const auto& [name, text] : values) {
    const SettingSpec* spec = find_setting(name);
    if (spec && spec->type == SettingType::kList) {
      // A list is edited as one value per line.
      out.reset(name);
      size_t start = 0;
      while (start <= text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string item = text.substr(start, end - start);
        std::erase_if(item, [](char c) { return c == '\r' || c == ' ' || c == '\t'; });
        if (!item.empty() && !out.set(name, item, error)) return false;
        start = end + 1;
      }
      continue;
    }
    if (!out.set(name, text, error)) return false;
  }
  return true;
}

std::string Analysis::point_name(PointId id) const {
  return id < points.size() ? points[id].name : std::string("-");
}

const IoRecord* Analysis::io(uint64_t id) const {
  auto it = io_index_.find(id);
  return it == io_index_.end() ? nullptr : &ios[it->second];
}

double Analysis::span_seconds() const {
  return summary.frames ? span_ns(summary.first_ts, summary.last_ts) / 1e9 : 0.0;
}

// Keeps the final records; the frame notes of I/Os (command, data, READ REQUEST, ...) for the
// I/O detail and its Wireshark filter. Message packet notes are not kept: a message's frames
// are in its record.
class AnalysisSink final : public RecordSink {
 public:
  AnalysisSink(Analysis& a, const Engine& engine) : a_(a), engine_(engine) {
    names_ = [this](PointId id) -> const std::string& { return engine_.point_name(id); };
    for (const char* stage : {"command", "data", "read_request", "read_response", "completion"}) {
      NoteKind k = note_kind(std::string("io.") + stage);
      if (k != kNoNoteKind) stages_.emplace_back(k, stage);
    }
  }

  void on_record(const Record& r) override {
    if (r.provisional) return;
    if (r.is(kIoSchema)) {
      const IoRecord& io = r.as<IoRecord>();
      a_.io_index_[io.id] = a_.ios.size();
      a_.ios.push_back(io);
      a_.io_report.add(io);
    } else if (r.is(kMessageSchema)) {
      a_.messages.push_back(r.as<MessageRecord>());
      a_.flow_report.add(a_.messages.back());
    } else if (r.is(kFlowSchema)) {
      a_.flow_periods.push_back(r.as<FlowPeriodRecord>());
    } else if (r.schema) {
      if (r.is(kCongestionSchema)) {
        if (const auto* e = congestion_as<EcnRecord>(r.as<CongestionHead>())) a_.congestion.push_back(*e);
        else if (const auto* p = congestion_as<PfcRecord>(r.as<CongestionHead>())) a_.pfc.push_back(*p);
      }
      if (r.is(kPathSchema)) a_.hops.push_back(r.as<PathRecord>());
      if (r.is(kDiagnosisSchema)) a_.diagnosis.push_back(r.as<DiagnosisRecord>());
      // Congestion records are of three kinds with their own columns: a table per kind.
      std::string key = r.schema->channel;
      if (r.is(kCongestionSchema)) key += std::string(":") + congestion_kind_name(r.as<CongestionHead>().kind);
      RecordTable& t = a_.tables[key];
      t.schema = r.schema;
      t.rows.push_back(render_record(*r.schema, r.data, names_));
    }
  }

  void on_note(const FrameNote& n) override {
    for (const auto& [kind, stage] : stages_)
      if (n.kind == kind) {
        a_.io_frames[n.ref].push_back({n.frame, stage, n.detail == 1});
        return;
      }
  }

  void on_warning(const Warning& w) override { a_.warnings.push_back(w.text); }

 private:
  Analysis& a_;
  const Engine& engine_;
  PointNamer names_;
  std::vector<std::pair<NoteKind, const char*>> stages_;
};

CaptureOpener fallback_opener() {
#ifdef RDMATEL_ANALYZER_WIRETAP
  return wiretap::open_wiretap_capture;
#else
  return nullptr;
#endif
}

std::unique_ptr<Analysis> run_analysis(const std::vector<std::string>& paths,
                                       const SettingOverrides& overrides,
                                       const ProgressFn& progress, const CancelToken* cancel,
                                       std::string& error) {
  const auto start = std::chrono::steady_clock::now();
  Settings settings;
  if (!overrides.apply(settings, error)) return nullptr;
  settings.frame_notes = true;  // the frames of each I/O, for its detail and Wireshark filter
  std::unique_ptr<Session> session = Session::open(paths, settings, fallback_opener(), error);
  if (!session) return nullptr;
  // A role for a point the capture does not have: the CLI refuses it (exit 2), so do we.
  std::vector<std::string> usage = session->usage_errors();
  if (!usage.empty()) {
    error = usage.front();
    return nullptr;
  }
  auto a = std::make_unique<Analysis>();
  a->paths = paths;
  AnalysisSink sink(*a, session->engine());
  session->subscribe(sink);
  a->summary = session->run(progress, cancel);
  const Engine& engine = session->engine();
  a->stats = engine.stats();
  for (PointId i = 0; i < engine.point_count(); ++i) a->points.push_back(engine.point(i));
  for (const std::string& w : a->summary.warnings) a->warnings.push_back(w);
  a->flow_findings = find_flow_findings(a->flow_report, a->congestion, a->pfc, a->hops,
                                        [&](const IpAddress& s, const IpAddress& d, uint32_t q) {
                                          return engine.sending_qpn(s, d, q);
                                        });
  for (auto& [id, frames] : a->io_frames)
    std::stable_sort(frames.begin(), frames.end(),
                     [](const IoFrame& x, const IoFrame& y) { return x.frame < y.frame; });
  a->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return a;
}

}  // namespace rdmatel::ui
