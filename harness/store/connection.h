// The store's database connection, whatever holds it: the few operations
// every store query needs (prepared statements with typed binds and
// columns, a write transaction, what tables exist), with one
// implementation per backend (sqlite.h, postgres.h). Store queries are
// written once, in the SQL both backends share: `?N` placeholders,
// `INSERT ... ON CONFLICT DO NOTHING`, `INSERT ... RETURNING id`; the
// schema's migrations are written in SQLite's types and adapted by
// AdaptSchema. Nothing here knows the samebits schema (store.h does).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

#include "harness/store/location.h"

namespace samebits::store {

// Any failure of the store: the message names the database.
class StoreError : public std::runtime_error {
 public:
  explicit StoreError(const std::string& what, int sqlite_code = 0, bool retryable = false)
      : std::runtime_error(what), sqlite_code_(sqlite_code), retryable_(retryable) {}
  // Returns the SQLite result code behind the error, or 0.
  int sqlite_code() const { return sqlite_code_; }
  // Returns whether the whole transaction may be tried again: another
  // writer held the lock (SQLite busy), the server chose this transaction
  // to break a deadlock or lost the connection before the commit was sent.
  bool retryable() const { return retryable_; }

 private:
  int sqlite_code_;
  bool retryable_;
};

// One backend's prepared statement (Statement below forwards to it).
class StatementImpl {
 public:
  virtual ~StatementImpl() = default;
  virtual void Bind(int index, int64_t value) = 0;
  virtual void Bind(int index, double value) = 0;
  virtual void Bind(int index, std::string_view value) = 0;
  virtual void BindNull(int index) = 0;
  virtual bool Step() = 0;
  virtual void Reset() = 0;
  virtual int64_t Int(int column) const = 0;
  virtual double Double(int column) const = 0;
  virtual std::string Text(int column) const = 0;
  virtual bool IsNull(int column) const = 0;
};

// A prepared statement. Binds are 1-based, as the `?N` placeholders;
// columns 0-based. A NULL column reads as 0 or "".
class Statement {
 public:
  explicit Statement(std::unique_ptr<StatementImpl> impl) : impl_(std::move(impl)) {}

  Statement& Bind(int index, int64_t value) {
    impl_->Bind(index, value);
    return *this;
  }
  Statement& Bind(int index, double value) {
    impl_->Bind(index, value);
    return *this;
  }
  Statement& Bind(int index, std::string_view value) {
    impl_->Bind(index, value);
    return *this;
  }
  Statement& BindNull(int index) {
    impl_->BindNull(index);
    return *this;
  }
  // Returns true while a row is available; false when the statement is done.
  bool Step() { return impl_->Step(); }
  // Runs a statement that returns no rows, then resets it for reuse.
  void Run() {
    while (Step()) {
    }
    Reset();
  }
  // Runs an `INSERT ... RETURNING id`, then resets it for reuse. Returns
  // the new row's id.
  int64_t RunReturningId();
  // Forgets the statement's rows and binds, so it can run again.
  void Reset() { impl_->Reset(); }

  int64_t Int(int column) const { return impl_->Int(column); }
  double Double(int column) const { return impl_->Double(column); }
  std::string Text(int column) const { return impl_->Text(column); }
  bool IsNull(int column) const { return impl_->IsNull(column); }

 private:
  std::unique_ptr<StatementImpl> impl_;
};

// A value held for a statement's parameter: NULL, an integer, a double or
// text (RowBatch's rows, RowInterner's keys).
using BoundValue = std::variant<std::monostate, int64_t, double, std::string>;

// Binds `value` to parameter `index` (1-based) of `s`.
void BindValue(Statement& s, int index, const BoundValue& value);

// One connection to a store.
class Connection {
 public:
  virtual ~Connection() = default;
  virtual Backend backend() const = 0;

  // Runs one or more statements that return no rows.
  virtual void Exec(std::string_view sql) = 0;
  // Returns a prepared statement.
  virtual Statement Prepare(std::string_view sql) = 0;

  // Starts a write transaction that excludes every other writer of the
  // store until Commit or Rollback, as SQLite's BEGIN IMMEDIATE does (so
  // that a writer that looks before it writes, as import does, sees what
  // every earlier writer committed).
  virtual void BeginWrite() = 0;
  virtual void Commit() = 0;
  // Rolls back, ignoring errors; readies a broken connection for a retry.
  virtual void RollbackQuietly() = 0;

  // How many tables the store has, and whether `name` is one of them.
  struct TableCensus {
    int64_t tables = 0;
    bool has_named = false;
  };
  // Both are read by one statement, so both come from one snapshot: read by
  // two, a writer creating the schema between them could commit, and the
  // reader would see tables but no schema_version (another program's
  // database, by the rule of SchemaVersion).
  virtual TableCensus CountTables(const std::string& name) = 0;

  // Returns a migration (written with SQLite's types: INTEGER PRIMARY KEY,
  // INTEGER, REAL, TEXT) in this backend's types.
  virtual std::string AdaptSchema(std::string_view sql) const { return std::string(sql); }

  // How messages name the store: the file's path, or the server's
  // connection string without its password.
  const std::string& path() const { return name_; }

 protected:
  explicit Connection(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

// Runs `body` inside a write transaction (Connection::BeginWrite), retrying
// the whole transaction while the error is retryable (another writer held
// the lock past the busy timeout, a deadlock, a connection lost before
// the commit), and rolling back on any exception, which is rethrown. A
// process killed inside `body` leaves nothing: an uncommitted transaction
// is discarded.
template <typename Body>
void WithWriteTransaction(Connection& db, Body&& body);

// Returns true when the transaction that threw `e` may be tried again.
inline bool IsBusyError(const StoreError& e) {
  return e.retryable();
}

// Waits a little before retry `attempt` (backing off, to at most 1 s).
void WaitBeforeRetry(int attempt);

template <typename Body>
void WithWriteTransaction(Connection& db, Body&& body) {
  constexpr int kAttempts = 100;
  for (int attempt = 0;; ++attempt) {
    try {
      db.BeginWrite();
      body();
      db.Commit();
      return;
    } catch (const StoreError& e) {
      db.RollbackQuietly();
      if (IsBusyError(e) && attempt < kAttempts) {
        WaitBeforeRetry(attempt);
        continue;
      }
      throw;
    } catch (...) {
      db.RollbackQuietly();
      throw;
    }
  }
}

}  // namespace samebits::store
