// SPDX-License-Identifier: GPL-2.0-or-later
// rdmatel: the command-line front end. Reads captures directly (no dissection), feeds the engine,
// prints reports and writes records.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/capture_input.h"
#include "cli/options.h"
#include "cli/report_printer.h"
#include "engine/core/engine.h"
#include "engine/report/flow_report.h"
#include "engine/report/io_report.h"
#include "engine/report/record_writer.h"

#ifndef RDMATEL_VERSION
#define RDMATEL_VERSION "0.0.0"
#endif

namespace rdmatel::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitBadInput = 3;

// Collects what the engine produces for the selected command.
class CliSink final : public ResultSink {
 public:
  CliSink(bool quiet) : quiet_(quiet) {}
  void on_io(const IoRecord& r) override {
    if (report) report->add(r);
    if (io_writer) io_writer->write(r);
  }
  void on_message(const MessageRecord& m) override {
    if (flows) flows->add(m);
    if (message_writer) message_writer->write(m);
  }
  void on_flow_period(const FlowPeriodRecord& f) override {
    if (flow_writer) flow_writer->write(f);
  }
  void on_warning(const EngineWarning& w) override {
    if (!quiet_) std::fprintf(stderr, "rdmatel: warning: %s\n", w.what.c_str());
  }
  IoReport* report = nullptr;
  FlowReport* flows = nullptr;
  IoRecordWriter* io_writer = nullptr;
  MessageRecordWriter* message_writer = nullptr;
  FlowRecordWriter* flow_writer = nullptr;

 private:
  bool quiet_;
};

int run(const Options& o) {
  CaptureInput input;
  std::string error;
  if (!input.open(o.captures, error)) {
    std::fprintf(stderr, "rdmatel: %s\n", error.c_str());
    return kExitBadInput;
  }
  bool progress = o.progress.value_or(isatty(STDERR_FILENO) == 1);
  CliSink sink(o.quiet);
  Engine engine(o.engine, sink);
  IoReport report;
  FlowReport flows;
  std::FILE* out = stdout;
  std::unique_ptr<IoRecordWriter> io_writer;
  std::unique_ptr<MessageRecordWriter> message_writer;
  std::unique_ptr<FlowRecordWriter> flow_writer;

  if (o.command == Command::kExport) {
    if (o.export_kind != "io" && o.export_kind != "messages" && o.export_kind != "flows") {
      std::fprintf(stderr, "rdmatel: export %s is not available in this version (available: io, messages, flows)\n",
                   o.export_kind.c_str());
      return kExitUsage;
    }
    if (!o.output.empty()) {
      out = std::fopen(o.output.c_str(), "w");
      if (!out) {
        std::fprintf(stderr, "rdmatel: cannot write %s: %s\n", o.output.c_str(), std::strerror(errno));
        return kExitUsage;
      }
    }
    if (o.export_kind == "io") {
      io_writer = std::make_unique<IoRecordWriter>(out, o.format, engine.points());
      sink.io_writer = io_writer.get();
    } else if (o.export_kind == "messages") {
      message_writer = std::make_unique<MessageRecordWriter>(out, o.format, engine.points());
      sink.message_writer = message_writer.get();
    } else {
      flow_writer = std::make_unique<FlowRecordWriter>(out, o.format, engine.points());
      sink.flow_writer = flow_writer.get();
    }
  } else {
    sink.report = &report;
    sink.flows = &flows;
  }

  InputSummary summary = input.run(engine, progress);

  if (o.command == Command::kAnalyze) print_analysis(stdout, o, engine, summary, report, flows, RDMATEL_VERSION);
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
  return summary.errors.empty() ? kExitOk : kExitBadInput;
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
    case Command::kHelp: std::fputs(usage_text(), stdout); return kExitOk;
    case Command::kVersion: std::printf("rdmatel %s\n", RDMATEL_VERSION); return kExitOk;
    default: break;
  }
  try {
    return run(o);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "rdmatel: out of memory (lower --max-ios / --max-flows / --max-messages)\n");
    return kExitBadInput;
  }
}
