// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/session_worker.h"

#include <QMetaObject>

namespace rdmatel::ui {

SessionWorker::SessionWorker(QObject* parent) : QObject(parent) {}

SessionWorker::~SessionWorker() {
  if (thread_) {
    // Closed while reading: stop the engine and wait for it (the queued result dies with us).
    cancel();
    thread_->wait();
    delete thread_;
  }
}

void SessionWorker::start(const QStringList& paths, const SettingOverrides& settings) {
  if (thread_) return;
  std::vector<std::string> files;
  for (const QString& p : paths) files.push_back(p.toStdString());
  cancel_ = std::make_shared<CancelToken>();
  auto token = cancel_;
  // The worker only touches its own Analysis; results cross to the GUI thread through queued
  // calls on this object, so no lock is needed.
  thread_ = QThread::create([this, files, settings, token] {
    std::string error;
    ProgressFn report = [this](const Progress& p) {
      double f = p.total_bytes ? double(p.bytes) / double(p.total_bytes) : -1.0;
      quint64 frames = p.frames;
      QMetaObject::invokeMethod(
          this, [this, f, frames] { emit progress(f, frames); }, Qt::QueuedConnection);
    };
    std::shared_ptr<const Analysis> a = run_analysis(files, settings, report, token.get(), error);
    QMetaObject::invokeMethod(
        this,
        [this, a, error] {
          thread_->wait();
          thread_->deleteLater();
          thread_ = nullptr;
          if (a)
            emit finished(a);
          else
            emit failed(QString::fromStdString(error));
        },
        Qt::QueuedConnection);
  });
  thread_->start();
}

void SessionWorker::cancel() {
  if (cancel_) cancel_->cancel();
}

}  // namespace rdmatel::ui
