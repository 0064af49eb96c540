// SPDX-License-Identifier: GPL-2.0-or-later
#include "adapters/clickhouse/inserter.h"

#include <httplib.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <set>

#include "adapters/clickhouse/table_schema.h"

namespace rdmatel::clickhouse {
namespace {

double monotonic_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

std::string url_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      out += char(c);
    else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// The answer's first line: ClickHouse puts its exception there ("Code: 60, e.displayText() = ...").
std::string first_line(const std::string& body) {
  std::string l = body.substr(0, body.find('\n'));
  return l.size() > 300 ? l.substr(0, 300) + "..." : l;
}

}  // namespace

Inserter::Inserter(InserterOptions options, PointNamer names)
    : o_(std::move(options)), names_(std::move(names)) {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  run_ = std::string(host) + ":" + std::to_string(getpid()) + ":" +
         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count());
}

Inserter::~Inserter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = abort_ = true;
  }
  cv_.notify_all();
  if (client_) client_->stop();  // a request in flight (finish() not called: an error path)
  if (thread_.joinable()) thread_.join();
}

bool Inserter::open(std::string& error) {
  // http://[user[:password]@]host:port[/]
  std::string rest = o_.url.substr(7);
  rest = rest.substr(0, rest.find('/'));
  const size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    std::string userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const size_t colon = userinfo.find(':');
    user_ = userinfo.substr(0, colon);
    if (colon != std::string::npos) password_ = userinfo.substr(colon + 1);
  }
  if (rest.empty()) {
    error = "--clickhouse takes http://HOST:PORT (got '" + o_.url + "')";
    return false;
  }
  host_port_ = rest;
  client_ = std::make_unique<httplib::Client>("http://" + rest);
  if (!client_->is_valid()) {
    error = "--clickhouse: cannot use '" + o_.url + "'";
    return false;
  }
  client_->set_connection_timeout(2, 0);
  client_->set_read_timeout(30, 0);  // a server that hangs cannot hold the end up for long
  client_->set_write_timeout(30, 0);
  if (!user_.empty()) client_->set_basic_auth(user_.c_str(), password_.c_str());
  // One statement per request: the HTTP interface takes no multi-statement queries. Comment
  // lines are left out.
  std::string sql, why;
  {
    const std::string all = schema_sql();
    size_t at = 0;
    while (at < all.size()) {
      size_t nl = all.find('\n', at);
      std::string line = all.substr(at, nl == std::string::npos ? std::string::npos : nl - at + 1);
      at = nl == std::string::npos ? all.size() : nl + 1;
      if (line.rfind("--", 0) != 0) sql += line;
    }
  }
  size_t pos = 0;
  while (pos < sql.size()) {
    size_t end = sql.find(";\n", pos);
    std::string stmt = sql.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? sql.size() : end + 2;
    if (stmt.find_first_not_of(" \n") == std::string::npos) continue;
    if (post("", stmt, why) != Sent::kOk) {
      error = "cannot create the rdmatel tables in ClickHouse at " + host_port_ + ": " + why;
      return false;
    }
  }
  for (const RecordSchema* s : all_schemas())
    if (!add_missing_columns(*s, why)) {
      error = "ClickHouse at " + host_port_ + ": " + why;
      return false;
    }
  last_flush_ = monotonic_s();
  thread_ = std::thread([this] { send_loop(); });
  return true;
}

Inserter::Sent Inserter::post(const std::string& query, const std::string& body,
                              std::string& error, std::string* answer) {
  const std::string path = query.empty() ? "/" : "/?query=" + url_encode(query);
  auto res = client_->Post(path.c_str(), body, "text/plain; charset=utf-8");
  if (!res) {
    error = "the server did not answer (" + httplib::to_string(res.error()) + " error)";
    return Sent::kNoAnswer;
  }
  if (res->status != 200) {
    error = "HTTP " + std::to_string(res->status) + ": " + first_line(res->body);
    return Sent::kRefused;
  }
  if (answer) *answer = std::move(res->body);
  return Sent::kOk;
}

bool Inserter::add_missing_columns(const RecordSchema& schema, std::string& error) {
  std::string names, why;
  const std::string list = std::string("SELECT name FROM system.columns WHERE database = '") + kDatabase +
                           "' AND table = '" + schema.channel + "' FORMAT TabSeparated";
  if (post("", list, why, &names) != Sent::kOk) {
    error = "cannot read the columns of " + std::string(kDatabase) + "." + schema.channel + ": " + why;
    return false;
  }
  std::set<std::string> existing;
  for (size_t at = 0; at < names.size();) {
    const size_t nl = names.find('\n', at);
    existing.insert(names.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    at = nl == std::string::npos ? names.size() : nl + 1;
  }
  const std::string alter = add_columns_sql(schema, existing);
  if (!alter.empty() && post("", alter, why) != Sent::kOk) {
    error = "cannot add the new columns to " + std::string(kDatabase) + "." + schema.channel + ": " + why;
    return false;
  }
  return true;
}

void Inserter::on_record(const Record& r) {
  if (r.provisional) return;
  Pending& p = pending_[r.schema->channel];
  append_row(p.body, *r.schema, r.data, names_, run_, p.seq++);
  if (++p.rows >= o_.batch_rows) enqueue(r.schema->channel, p);
}

void Inserter::enqueue(const std::string& table, Pending& p) {
  if (!p.rows) return;
  Batch b{table, std::move(p.body), p.rows};
  p.body.clear();
  p.rows = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  // Back-pressure: wait for the sender while the queue is full. A live run waits as long as
  // the server is away (the capture drops in the kernel meanwhile, counted) until it is told to
  // stop, then at most the timeout; a run over files, which no signal stops, waits at most the
  // timeout without the queue moving. Then the batch is counted as lost.
  double deadline = 0;
  uint64_t sent_before = stats_.batches_sent;
  while (queued_bytes_ + b.body.size() > o_.max_queue_bytes && !queue_.empty() && !abort_) {
    const bool bounded = o_.stop ? o_.stop->load() : true;
    if (stats_.batches_sent != sent_before) {
      sent_before = stats_.batches_sent;
      deadline = 0;  // the queue moves: wait on
    }
    if (bounded) {
      if (deadline == 0) deadline = monotonic_s() + o_.timeout_s;
      if (monotonic_s() >= deadline) {
        stats_.rows_lost += b.rows;
        return;
      }
    }
    cv_.wait_for(lock, std::chrono::milliseconds(100));
  }
  queued_bytes_ += b.body.size();
  queue_.push_back(std::move(b));
  cv_.notify_all();
}

void Inserter::flush_all() {
  for (auto& [table, p] : pending_) enqueue(table, p);
}

void Inserter::flush_if_due(double min_interval_s) {
  const double now = monotonic_s();
  if (now - last_flush_ < min_interval_s) return;
  last_flush_ = now;
  flush_all();
}

// A batch the server answered with an error this many times in a row is bad data, not a
// passing outage: it is dropped (counted and reported) so that it does not block the rest.
constexpr int kMaxRefusals = 5;

void Inserter::send_loop() {
  double backoff = 0.1;
  int refusals = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
    if (abort_ || queue_.empty()) return;  // closing with nothing left, or given up
    // The batch stays queued while it is sent: nothing is lost if this fails.
    const Batch& b = queue_.front();
    const std::string query =
        std::string("INSERT INTO ") + kDatabase + "." + b.table + " FORMAT JSONEachRow";
    const std::string* body = &b.body;
    lock.unlock();
    std::string error;
    const Sent sent = post(query, *body, error);
    lock.lock();
    refusals = sent == Sent::kRefused ? refusals + 1 : 0;
    if (sent == Sent::kOk || refusals >= kMaxRefusals) {
      if (sent == Sent::kOk) {
        stats_.rows_sent += queue_.front().rows;
        ++stats_.batches_sent;
      } else {
        stats_.rows_lost += queue_.front().rows;
        stats_.rows_refused += queue_.front().rows;
        refusals = 0;
      }
      queued_bytes_ -= queue_.front().body.size();
      queue_.pop_front();
      backoff = 0.1;
      cv_.notify_all();
      continue;
    }
    ++stats_.retries;
    stats_.last_error = error;
    // Unreachable or refusing: retry the same batch later (a restarting server comes back).
    cv_.wait_for(lock, std::chrono::duration<double>(backoff), [&] { return abort_; });
    backoff = std::min(backoff * 2, 5.0);
  }
}

bool Inserter::finish() {
  flush_all();
  {
    std::unique_lock<std::mutex> lock(mutex_);
    closing_ = true;
    cv_.notify_all();
    cv_.wait_for(lock, std::chrono::duration<double>(o_.timeout_s), [&] { return queue_.empty(); });
    if (!queue_.empty()) abort_ = true;
    cv_.notify_all();
  }
  // A server that took the request and does not answer would hold the sender (and the end) up
  // for the read timeout: the request is cut (httplib's stop() closes the socket of a request in
  // flight from another thread; the sender then sees abort_).
  if (abort_ && client_) client_->stop();
  // The sender may be inside a POST: it settles that batch (sent, or refused once too often)
  // before it sees abort_. What is still queued after it has ended is what was lost; counting
  // before the join counted that batch twice when its last refusal came in meanwhile.
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Batch& b : queue_) stats_.rows_lost += b.rows;
  queue_.clear();
  return stats_.rows_lost == 0;
}

InserterStats Inserter::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace rdmatel::clickhouse
