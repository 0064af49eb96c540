// SPDX-License-Identifier: GPL-2.0-or-later
// Runs an analysis in a worker thread: progress and the result come back to the GUI thread as
// signals; cancel() stops the engine at its next packet batch.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>
#include <memory>

#include "core/analysis.h"

namespace rdmatel::ui {

class SessionWorker : public QObject {
  Q_OBJECT
 public:
  explicit SessionWorker(QObject* parent = nullptr);
  ~SessionWorker() override;

  /// Starts a run (ignored while one is running).
  void start(const QStringList& paths, const SettingOverrides& settings);
  void cancel();
  bool running() const { return thread_ != nullptr; }

 signals:
  /// `fraction` in [0, 1], or -1 when the total size is unknown (pipes, compressed files).
  void progress(double fraction, quint64 frames);
  void finished(std::shared_ptr<const rdmatel::ui::Analysis> analysis);
  /// An input could not be opened: the CLI's sentence.
  void failed(const QString& message);

 private:
  QThread* thread_ = nullptr;
  std::shared_ptr<CancelToken> cancel_;
};

}  // namespace rdmatel::ui
