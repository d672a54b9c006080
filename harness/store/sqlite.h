// A thin RAII layer over the SQLite C API: a connection, prepared statements
// with typed binds and columns, and errors as exceptions that carry the
// database's path. Nothing here knows the samebits schema (store.h does).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace samebits::store {

// Any failure of the store: the message names the database file.
class StoreError : public std::runtime_error {
 public:
  explicit StoreError(const std::string& what, int sqlite_code = 0)
      : std::runtime_error(what), sqlite_code_(sqlite_code) {}
  // Returns the SQLite result code behind the error, or 0.
  int sqlite_code() const { return sqlite_code_; }

 private:
  int sqlite_code_;
};

// A prepared statement. Binds are 1-based as in SQLite; columns 0-based.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql, const std::string& path);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view value);
  Statement& BindNull(int index);
  // Returns true while a row is available; false when the statement is done.
  bool Step();
  // Runs a statement that returns no rows, then resets it for reuse.
  void Run();
  void Reset();

  int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;
  bool IsNull(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  const std::string& path_;
};

// How a connection opens its file.
enum class OpenMode {
  kCreate,     // read and write; a missing file is created
  kReadWrite,  // read and write; the file must exist
  kReadOnly,   // read only; the file must exist and is never written
};

// One connection. Opening refuses, without writing to it, a file that is
// not an SQLite database; opening writes nothing at all (no journal mode:
// see PrepareForWriting).
class Connection {
 public:
  // Opens the database at `path`. Throws StoreError with a message a person
  // can act on.
  Connection(const std::string& path, OpenMode mode);
  Connection(const std::string& path, bool create)
      : Connection(path, create ? OpenMode::kCreate : OpenMode::kReadWrite) {}
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Makes the connection ready for writers that share the file: WAL
  // journal mode (which changes the file's header), foreign keys, normal
  // syncs. Call it only once the file is known to be ours. Throws
  // StoreError when the file or its folder cannot be written.
  void PrepareForWriting();

  // Runs one or more statements that return no rows.
  void Exec(std::string_view sql);
  // Returns a prepared statement.
  Statement Prepare(std::string_view sql) { return Statement(db_, sql, path_); }
  int64_t LastInsertId() const;
  const std::string& path() const { return path_; }
  sqlite3* raw() { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// Runs `body` inside BEGIN IMMEDIATE ... COMMIT, retrying the whole
// transaction while another process holds the write lock (SQLITE_BUSY past
// the busy timeout), and rolling back on any exception, which is rethrown.
// A process killed inside `body` leaves nothing: SQLite discards an
// uncommitted transaction when the database is next opened.
template <typename Body>
void WithWriteTransaction(Connection& db, Body&& body);

// Returns true when `e` came from a busy or locked database.
bool IsBusyError(const StoreError& e);

// Implementation of the template above.
void BeginImmediate(Connection& db);
void Commit(Connection& db);
void RollbackQuietly(Connection& db);

template <typename Body>
void WithWriteTransaction(Connection& db, Body&& body) {
  for (int attempt = 0;; ++attempt) {
    try {
      BeginImmediate(db);
    } catch (const StoreError& e) {
      if (IsBusyError(e) && attempt < 100) continue;
      throw;
    }
    try {
      body();
      Commit(db);
      return;
    } catch (const StoreError& e) {
      RollbackQuietly(db);
      if (IsBusyError(e) && attempt < 100) continue;
      throw;
    } catch (...) {
      RollbackQuietly(db);
      throw;
    }
  }
}

}  // namespace samebits::store
