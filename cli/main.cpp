// SPDX-License-Identifier: GPL-2.0-or-later
// rdmatel: the command-line front end. A session over the captures (fast reader, libwiretap for
// other formats), records to a report or to writers.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "adapters/wiretap/wiretap_source.h"
#include "cli/live.h"
#include "cli/live_outputs.h"
#include "cli/options.h"
#include "cli/report_printer.h"
#include "rdmatel/report.h"
#include "rdmatel/session.h"
#include "rdmatel/writers.h"

#ifndef RDMATEL_VERSION
#define RDMATEL_VERSION "0.0.0"
#endif

namespace rdmatel::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitBadInput = 3;

// Aggregates the final records for `analyze`, prints warnings.
class ReportSink final : public RecordSink {
 public:
  ReportSink(bool quiet, bool aggregate) : quiet_(quiet), aggregate_(aggregate) {}
  void on_record(const Record& r) override {
    if (!aggregate_ || r.provisional) return;
    if (r.is(kIoSchema)) {
      analysis.ios.add(r.as<IoRecord>());
      if (analysis.by) analysis.by->add(r.as<IoRecord>());
    } else if (r.is(kMessageSchema)) {
      analysis.flows.add(r.as<MessageRecord>());
      if (analysis.by) analysis.by->add(r.as<MessageRecord>());
    }
    else if (r.is(kCongestionSchema)) {
      const CongestionHead& h = r.as<CongestionHead>();
      if (const auto* e = congestion_as<EcnRecord>(h)) analysis.congestion.push_back(*e);
      else if (const auto* p = congestion_as<PfcRecord>(h)) analysis.pfc.push_back(*p);
    }
    else if (r.is(kOffsetSchema)) analysis.offsets.push_back(r.as<OffsetRecord>());
    else if (r.is(kPathSchema)) analysis.paths.push_back(r.as<PathRecord>());
    else if (r.is(kDiagnosisSchema)) analysis.diagnosis.push_back(r.as<DiagnosisRecord>());
    else if (r.is(kAlertSchema)) analysis.alerts.add(r.as<AlertRecord>());
  }
  void on_warning(const Warning& w) override {
    if (!quiet_) std::fprintf(stderr, "rdmatel: warning: %s\n", w.text.c_str());
  }
  Analysis analysis;

 private:
  bool quiet_, aggregate_;
};

void show_progress(const Progress& p) {
  if (p.total_bytes)
    std::fprintf(stderr, "\rrdmatel: %llu packets, %.0f%%, %.1f M packets/s ", (unsigned long long)p.frames,
                 100.0 * double(p.bytes) / double(p.total_bytes), double(p.frames) / p.seconds / 1e6);
  else
    std::fprintf(stderr, "\rrdmatel: %llu packets, %.1f M packets/s ", (unsigned long long)p.frames,
                 double(p.frames) / p.seconds / 1e6);
  std::fflush(stderr);
}

int run(const Options& o) {
  std::string error;
  std::unique_ptr<Session> session = Session::open(o.captures, o.settings, wiretap::open_wiretap_capture, error);
  if (!session) {
    std::fprintf(stderr, "rdmatel: %s\n", error.c_str());
    return kExitBadInput;
  }
  for (const std::string& e : session->usage_errors()) {
    std::fprintf(stderr, "rdmatel: %s\n", e.c_str());
    return kExitUsage;
  }
  // The engine splits its work over two threads (docs/design.md, Threads): asked for more, the
  // user should not believe they run.
  if (const uint64_t threads = o.settings.count("threads"); threads > 2 && !o.quiet)
    std::fprintf(stderr,
                 "rdmatel: warning: --threads %llu: the measurement uses at most 2 threads (and one reading the capture ahead); "
                 "more are not used yet (README, Performance)\n",
                 static_cast<unsigned long long>(threads));
  const Engine& engine = session->engine();
  const bool analyze = o.command == Command::kAnalyze;
  ReportSink report(o.quiet, analyze);
  if (!o.by.empty())
    report.analysis.by.emplace(o.by == "gpu" ? Dimension::kGpu : o.by == "node" ? Dimension::kNode : Dimension::kJob);
  session->subscribe(report);

  // The export, or analyze's report (opened before the capture is read: a path that cannot be
  // written fails at once, not after the analysis).
  std::FILE* out = stdout;
  if (!o.output.empty()) {
    out = std::fopen(o.output.c_str(), "w");
    if (!out) {
      std::fprintf(stderr, "rdmatel: cannot write %s: %s\n", o.output.c_str(), std::strerror(errno));
      return kExitUsage;
    }
  }
  std::unique_ptr<RecordWriter> writer;
  if (o.command == Command::kExport) {
    const RecordSchema* schema = find_schema(o.export_kind);  // parse_options accepts known kinds only
    writer = std::make_unique<RecordWriter>(out, o.format, *schema,
                                            [&engine](PointId id) -> const std::string& { return engine.point_name(id); });
    session->subscribe(*writer);
  }

  // --clickhouse: every record kind into its table, besides the report or the export.
  LiveOutputs outputs;
  PointNamer names = [&engine](PointId id) -> const std::string& { return engine.point_name(id); };
  if (!outputs.open(o.live, engine, names, nullptr, error)) {
    std::fprintf(stderr, "rdmatel: %s\n", error.c_str());
    return kExitUsage;
  }
  outputs.subscribe(*session);

  const bool progress = o.progress.value_or(isatty(STDERR_FILENO) == 1);
  bool progress_shown = false;
  SessionSummary summary = session->run(progress ? ProgressFn([&](const Progress& p) {
    progress_shown = true;
    show_progress(p);
  })
                                                 : ProgressFn());
  if (progress_shown) std::fprintf(stderr, "\r%60s\r", "");
  const bool inserted = outputs.finish(o.quiet);

  if (analyze) print_analysis(out, o, engine, summary, report.analysis, RDMATEL_VERSION);
  // A full disk or a closed pipe must not pass for success: check every output (exit 2, like an
  // output that cannot be opened).
  bool out_failed = out != stdout && (std::fflush(out) != 0 || std::ferror(out));
  int out_errno = errno;
  if (out != stdout && std::fclose(out) != 0 && !out_failed) {
    out_failed = true;
    out_errno = errno;
  }
  if (out_failed) {
    std::fprintf(stderr, "rdmatel: cannot write %s: %s\n", o.output.c_str(), std::strerror(out_errno));
    return kExitUsage;
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "rdmatel: cannot write standard output: %s\n", std::strerror(errno));
    return kExitUsage;
  }
  if (!o.quiet)
    for (const std::string& w : summary.warnings) std::fprintf(stderr, "rdmatel: warning: %s\n", w.c_str());
  for (const std::string& e : summary.errors) std::fprintf(stderr, "rdmatel: error: %s\n", e.c_str());
  return summary.errors.empty() && inserted ? kExitOk : kExitBadInput;
}

}  // namespace
}  // namespace rdmatel::cli

int main(int argc, char** argv) {
  using namespace rdmatel::cli;
  Options o;
  std::string error;
  if (!parse_options(argc, argv, o, error)) {
    std::fprintf(stderr, "rdmatel: %s\n", error.c_str());
    return kExitUsage;
  }
  switch (o.command) {
    case Command::kHelp: std::fputs(o.help_text.c_str(), stdout); return kExitOk;
    case Command::kVersion: std::printf("rdmatel %s\n", RDMATEL_VERSION); return kExitOk;
    default: break;
  }
  try {
    if (o.command == Command::kLive) return run_live(o);
    return run(o);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "rdmatel: out of memory (lower --max-ios / --max-flows / --max-messages)\n");
    return kExitBadInput;
  }
}
