// SPDX-License-Identifier: GPL-2.0-or-later
// Records into ClickHouse over its HTTP interface: INSERT ... FORMAT JSONEachRow, one batch per
// table of up to `batch_rows` rows (or what a period gathered), sent by a thread of its own.
// A batch is removed only when the server took it: a server that restarts or is unreachable is
// retried with backoff, losing nothing. The queue is bounded: when it is full the session's
// thread waits (back-pressure: a live capture then drops in the kernel, which is counted). At the
// end the rest is sent, waiting at most `timeout_s` for an unreachable server; what could not be
// sent is reported, never silently lost.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "rdmatel/sink.h"
#include "rdmatel/writers.h"

namespace httplib {
class Client;
}

namespace rdmatel::clickhouse {

struct InserterOptions {
  std::string url;  ///< http://[user[:password]@]host:port[/]
  uint64_t batch_rows = 10000;
  double timeout_s = 30;
  size_t max_queue_bytes = 64u << 20;
  /// Set when the run is told to stop (a signal): a full queue then waits at most timeout_s.
  const std::atomic<bool>* stop = nullptr;
};

struct InserterStats {
  uint64_t rows_sent = 0, batches_sent = 0, retries = 0, rows_lost = 0;
  uint64_t rows_refused = 0;  ///< of rows_lost: batches the server kept refusing (bad data)
  std::string last_error;
};

class Inserter final : public RecordSink {
 public:
  Inserter(InserterOptions options, PointNamer names);
  ~Inserter() override;

  /// Checks the server and creates the database and tables when missing; false with one
  /// sentence in `error`. Starts the sending thread.
  bool open(std::string& error);

  void on_record(const Record& r) override;
  /// Hands the rows gathered so far to the sender when `min_interval_s` passed since the last
  /// time (the session's thread, each tick).
  void flush_if_due(double min_interval_s);
  /// Sends the rest (waiting up to timeout_s), stops the thread. False when rows were lost.
  bool finish();
  InserterStats stats() const;

 private:
  struct Batch {
    std::string table;
    std::string body;
    uint64_t rows = 0;
  };
  struct Pending {
    std::string body;
    uint64_t rows = 0;
    uint64_t seq = 0;
  };
  void enqueue(const std::string& table, Pending& p);
  void flush_all();
  void send_loop();
  enum class Sent { kOk, kNoAnswer, kRefused };
  /// `answer`, when given, receives the body of a successful answer.
  Sent post(const std::string& query, const std::string& body, std::string& error, std::string* answer = nullptr);
  /// Adds the columns a table made by an older rdmatel lacks (an insert naming them would fail).
  bool add_missing_columns(const RecordSchema& schema, std::string& error);

  InserterOptions o_;
  PointNamer names_;
  std::string run_;
  std::string user_, password_, host_port_;
  std::unique_ptr<httplib::Client> client_;
  std::map<std::string, Pending> pending_;  ///< by table; the session's thread only
  double last_flush_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Batch> queue_;
  size_t queued_bytes_ = 0;
  bool closing_ = false, abort_ = false;
  InserterStats stats_;
  std::thread thread_;
};

}  // namespace rdmatel::clickhouse
