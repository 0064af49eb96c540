// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/wireshark_link.h"

#include <QCoreApplication>
#include <QProcess>
#include <algorithm>

namespace rdmatel::ui {

std::vector<uint64_t> io_frame_numbers(const Analysis& a, const IoRecord& io) {
  std::vector<uint64_t> frames;
  auto it = a.io_frames.find(io.id);
  if (it != a.io_frames.end())
    for (const IoFrame& f : it->second) frames.push_back(f.frame);
  if (io.cmd_frame) frames.push_back(io.cmd_frame);
  if (io.rsp_frame) frames.push_back(io.rsp_frame);
  std::sort(frames.begin(), frames.end());
  frames.erase(std::unique(frames.begin(), frames.end()), frames.end());
  return frames;
}

QString io_display_filter(const Analysis& a, const IoRecord& io) {
  std::vector<uint64_t> frames = io_frame_numbers(a, io);
  if (frames.empty()) return {};
  QString f = "frame.number in {";
  // Wireshark 4.0 wants commas between set members.
  for (size_t i = 0; i < frames.size(); ++i) f += (i ? ", " : "") + QString::number(frames[i]);
  return f + "}";
}

WiresharkCommand wireshark_command(const Analysis& a, const QString& filter,
                                   const QString& temp_dir) {
  WiresharkCommand c;
  c.program = "wireshark";
  QString file;
  if (a.paths.size() == 1) {
    file = QString::fromStdString(a.paths.front());
  } else {
    for (const std::string& p : a.paths) c.merge_inputs << QString::fromStdString(p);
    // mergecap merges identical interface descriptions (its default, -I all): the unnamed
    // interfaces of pcap files all look alike, and the plugin would see one point where the
    // analysis has one per file (the first file's "if0", every other "FILE:if0"). With -I none
    // it merges none: right when every file is a point of its own, not for ring files (one point
    // over several files), which keep the default.
    size_t named_after_file = 0;
    for (const PointInfo& p : a.points)
      for (const std::string& path : a.paths)
        named_after_file += p.name.size() > path.size() && p.name.compare(0, path.size() + 1, path + ":") == 0;
    if (named_after_file > 0 && named_after_file + 1 == a.paths.size()) c.merge_options << "-I" << "none";
    // Per process: Wireshark reads it after we return, and other users' analyzers use the same
    // folder.
    c.merged_file =
        temp_dir +
        QString("/rdmatel-analyzer-%1-merged.pcapng").arg(QCoreApplication::applicationPid());
    file = c.merged_file;
  }
  c.arguments << "-r" << file;
  if (!filter.isEmpty()) c.arguments << "-Y" << filter;
  return c;
}

bool open_in_wireshark(const WiresharkCommand& c, QString& error) {
  if (!c.merge_inputs.isEmpty()) {
    QProcess merge;
    merge.start("mergecap", c.merge_options + QStringList{"-w", c.merged_file} + c.merge_inputs);
    if (!merge.waitForFinished(120000) || merge.exitStatus() != QProcess::NormalExit ||
        merge.exitCode() != 0) {
      error = "mergecap could not merge the captures into " + c.merged_file + ": " +
              QString::fromLocal8Bit(merge.readAllStandardError()).trimmed() + merge.errorString();
      return false;
    }
  }
  if (!QProcess::startDetached(c.program, c.arguments)) {
    error = "cannot start " + c.program + " (is Wireshark installed and on the PATH?)";
    return false;
  }
  return true;
}

}  // namespace rdmatel::ui
