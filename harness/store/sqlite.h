// The SQLite backend of the store's connection (connection.h): a thin RAII
// layer over the SQLite C API, errors as exceptions that carry the
// database's path. Nothing here knows the samebits schema (store.h does).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "harness/store/connection.h"

struct sqlite3;
struct sqlite3_stmt;

namespace samebits::store {

// How a connection opens its file.
enum class OpenMode {
  kCreate,     // read and write; a missing file is created
  kReadWrite,  // read and write; the file must exist
  kReadOnly,   // read only; the file must exist and is never written
};

// One connection to an SQLite file. Opening refuses, without writing to it,
// a file that is not an SQLite database; opening writes nothing at all (no
// journal mode: see PrepareForWriting).
class SqliteConnection : public Connection {
 public:
  // Opens the database at `path`. Throws StoreError with a message a person
  // can act on.
  SqliteConnection(const std::string& path, OpenMode mode);
  SqliteConnection(const std::string& path, bool create)
      : SqliteConnection(path, create ? OpenMode::kCreate : OpenMode::kReadWrite) {}
  ~SqliteConnection() override;
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  Backend backend() const override { return Backend::kSqlite; }

  // Makes the connection ready for writers that share the file: WAL
  // journal mode (which changes the file's header), foreign keys, normal
  // syncs. Call it only once the file is known to be ours. Throws
  // StoreError when the file or its folder cannot be written.
  void PrepareForWriting();

  // Throws StoreError when SQLite finds the database damaged.
  void CheckIntact();

  void Exec(std::string_view sql) override;
  Statement Prepare(std::string_view sql) override;
  // BEGIN IMMEDIATE: the write lock at once (busy past the 30 s timeout
  // is retryable).
  void BeginWrite() override;
  void Commit() override;
  void RollbackQuietly() override;
  TableCensus CountTables(const std::string& name) override;

  sqlite3* raw() { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace samebits::store
