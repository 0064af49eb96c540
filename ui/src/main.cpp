// SPDX-License-Identifier: GPL-2.0-or-later
// rdmatel-analyzer [CAPTURE…]: the Qt 6 analyzer over the engine.
#include <QApplication>
#include <QTimer>
#include <cstdio>

#include "views/main_window.h"
#include "views/screenshots.h"

#ifndef RDMATEL_VERSION
#define RDMATEL_VERSION "0.0.0"
#endif

namespace {

const char* kUsage =
    "usage: rdmatel-analyzer [--set NAME=VALUE]... [--screenshot-dir DIR] [CAPTURE...]\n"
    "  CAPTURE            pcap, pcapng or any format Wireshark reads; several files are one "
    "capture\n"
    "  --set NAME=VALUE   an engine setting, as in Analysis > Settings (e.g. --set "
    "point=eth1=compute,\n"
    "                     --set io_timeout=5); rdmatel --help lists them\n"
    "  --screenshot-dir DIR  open the captures, save a PNG of every view in DIR, and exit\n";

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("rdmatel-analyzer");
  QApplication::setApplicationVersion(RDMATEL_VERSION);
  rdmatel::ui::SettingOverrides settings = rdmatel::ui::SettingOverrides::analyzer_defaults();
  QStringList captures;
  QString shots;
  const QStringList args = app.arguments();
  for (int i = 1; i < args.size(); ++i) {
    const QString& a = args[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--version") {
      std::printf("rdmatel-analyzer %s\n", RDMATEL_VERSION);
      return 0;
    }
    if ((a == "--screenshot-dir" || a == "--set") && i + 1 >= args.size()) {
      std::fprintf(stderr, "rdmatel-analyzer: %s needs a value\n%s", a.toLocal8Bit().constData(),
                   kUsage);
      return 2;
    }
    if (a == "--screenshot-dir") {
      shots = args[++i];
    } else if (a == "--set") {
      QString kv = args[++i];
      int eq = kv.indexOf('=');
      if (eq <= 0) {
        std::fprintf(stderr, "rdmatel-analyzer: --set takes NAME=VALUE (got '%s')\n",
                     kv.toLocal8Bit().constData());
        return 2;
      }
      std::string name = kv.left(eq).replace('-', '_').toStdString(),
                  value = kv.mid(eq + 1).toStdString();
      const rdmatel::SettingSpec* spec = rdmatel::find_setting(name);
      // A list setting given several times keeps every value, one per line.
      if (spec && spec->type == rdmatel::SettingType::kList) {
        std::string prev = settings.text(name);
        settings.set(name, prev.empty() ? value : prev + "\n" + value);
      } else {
        settings.set(name, value);
      }
      rdmatel::Settings check;
      std::string error;
      if (!settings.apply(check, error)) {
        std::fprintf(stderr, "rdmatel-analyzer: %s\n", error.c_str());
        return 2;
      }
    } else if (a.startsWith("--")) {
      std::fprintf(stderr, "rdmatel-analyzer: unknown option %s\n%s", a.toLocal8Bit().constData(),
                   kUsage);
      return 2;
    } else {
      captures << a;
    }
  }
  rdmatel::ui::MainWindow w(settings);
  if (!shots.isEmpty()) {
    if (captures.isEmpty()) {
      std::fprintf(stderr, "rdmatel-analyzer: --screenshot-dir needs a capture\n");
      return 2;
    }
    // Non-interactive: errors on stderr, exit status 3 as the CLI's for unreadable input.
    w.set_interactive(false);
    QObject::connect(&w, &rdmatel::ui::MainWindow::loaded, &app, [&](bool ok) {
      if (!ok) {
        app.exit(3);
        return;
      }
      int expected = w.tabs()->count() + 1;
      int written = rdmatel::ui::save_screenshots(w, shots);
      app.exit(written == expected ? 0 : 1);
    });
  }
  w.show();
  if (!captures.isEmpty()) QTimer::singleShot(0, &w, [&] { w.open_captures(captures); });
  return app.exec();
}
