// The SQLite backend (sqlite.h).
#include "harness/store/sqlite.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace samebits::store {
namespace {

[[noreturn]] void Throw(sqlite3* db, const std::string& path, const std::string& what, int rc) {
  std::string message = "database " + path + ": " + what + ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT) {
    message +=
        " (the file is not a samebits database or is damaged; it was "
        "left untouched)";
  }
  throw StoreError(message, rc, rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
}

// Returns whether the file at `path` starts with SQLite's magic header, or
// is empty (SQLite treats an empty file as a new database).
bool LooksLikeSqlite(const std::string& path, std::string* why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *why = "cannot be read";
    return false;
  }
  char header[16] = {};
  in.read(header, sizeof header);
  const std::streamsize got = in.gcount();
  if (got == 0) return true;
  static const char kMagic[16] = "SQLite format 3";  // 15 characters and a NUL.
  if (got < 16 || std::memcmp(header, kMagic, 16) != 0) {
    *why = "is not an SQLite database (bad header); refusing to touch it";
    return false;
  }
  return true;
}

// A prepared SQLite statement.
class SqliteStatement : public StatementImpl {
 public:
  SqliteStatement(sqlite3* db, std::string_view sql, const std::string& path)
      : db_(db), path_(path) {
    const int rc =
        sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
    if (rc != SQLITE_OK) Throw(db, path, "cannot prepare `" + std::string(sql) + "`", rc);
  }
  ~SqliteStatement() override { sqlite3_finalize(stmt_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  void Bind(int index, int64_t value) override { Check(sqlite3_bind_int64(stmt_, index, value)); }
  void Bind(int index, double value) override { Check(sqlite3_bind_double(stmt_, index, value)); }
  void Bind(int index, std::string_view value) override {
    Check(sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                            SQLITE_TRANSIENT));
  }
  void BindNull(int index) override { Check(sqlite3_bind_null(stmt_, index)); }

  bool Step() override {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    const std::string sql = sqlite3_sql(stmt_) != nullptr ? sqlite3_sql(stmt_) : "";
    Throw(db_, path_, "cannot run `" + sql + "`", rc);
  }
  void Reset() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t Int(int column) const override { return sqlite3_column_int64(stmt_, column); }
  double Double(int column) const override { return sqlite3_column_double(stmt_, column); }
  bool IsNull(int column) const override {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
  }
  std::string Text(int column) const override {
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    if (text == nullptr) return {};
    return std::string(reinterpret_cast<const char*>(text),
                       static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
  }

 private:
  void Check(int rc) {
    if (rc != SQLITE_OK) Throw(db_, path_, "bind", rc);
  }

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  const std::string& path_;
};

}  // namespace

SqliteConnection::SqliteConnection(const std::string& path, OpenMode mode) : Connection(path) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (exists) {
    std::string why;
    if (std::filesystem::is_directory(path, ec)) {
      throw StoreError("database " + path + ": is a folder, not a database file");
    }
    if (!LooksLikeSqlite(path, &why)) throw StoreError("database " + path + ": " + why);
  } else if (mode != OpenMode::kCreate) {
    throw StoreError("database " + path + ": no such file");
  }
  const bool read_only = mode == OpenMode::kReadOnly;
  int flags = SQLITE_OPEN_FULLMUTEX;
  flags |= read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (mode == OpenMode::kCreate) flags |= SQLITE_OPEN_CREATE;
  // Opens the path as a file name, or with `query` (URI parameters) as a
  // URI made from the absolute path.
  auto open = [&](const std::string& query) {
    sqlite3_close(db_);
    db_ = nullptr;
    std::string uri = query.empty() ? path : "file:";
    const std::string absolute = std::filesystem::absolute(path, ec).string();
    for (char c : query.empty() ? std::string() : absolute) {
      if (c == '%' || c == '?' || c == '#') {
        char escaped[4];
        std::snprintf(escaped, sizeof escaped, "%%%02X", static_cast<unsigned char>(c));
        uri += escaped;
      } else {
        uri += c;
      }
    }
    const int rc = sqlite3_open_v2((uri + query).c_str(), &db_,
                                   query.empty() ? flags : flags | SQLITE_OPEN_URI, nullptr);
    if (rc != SQLITE_OK) {
      std::string message = "database " + path + ": cannot open: " +
                            (db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
      sqlite3_close(db_);
      db_ = nullptr;
      throw StoreError(message, rc);
    }
    // Waits up to 30 s for another process's lock before reporting busy;
    // WithWriteTransaction retries beyond that.
    sqlite3_busy_timeout(db_, 30000);
    sqlite3_extended_result_codes(db_, 0);
  };
  // A reader in a folder it cannot write could create no -shm or journal
  // file there: it reads the file as immutable (as it is, locking nothing).
  const std::filesystem::path folder = std::filesystem::absolute(path, ec).parent_path();
  const bool folder_writable = ::access(folder.c_str(), W_OK) == 0;
  open(read_only && !folder_writable ? "?immutable=1" : "");
  try {
    // Reading the schema first makes SQLite check the whole header before
    // anything is written.
    try {
      SqliteStatement(db_, "SELECT count(*) FROM sqlite_master", path).Step();
    } catch (const StoreError& e) {
      // A WAL database whose -shm file this process cannot create or share:
      // read it as an immutable file instead.
      if (!read_only || (e.sqlite_code() != SQLITE_CANTOPEN && e.sqlite_code() != SQLITE_READONLY))
        throw;
      open("?immutable=1");
      SqliteStatement(db_, "SELECT count(*) FROM sqlite_master", path).Step();
    }
    SqliteConnection::Exec("PRAGMA foreign_keys=ON");  // named: a constructor dispatches nothing
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

void SqliteConnection::PrepareForWriting() {
  if (sqlite3_db_readonly(db_, "main") == 1) {
    throw StoreError("database " + path() +
                         ": is read-only here, so no run could be saved; runs, "
                         "show, report and "
                         "diff can still read it",
                     SQLITE_READONLY);
  }
  for (int attempt = 0;; ++attempt) {
    try {
      SqliteStatement(db_, "PRAGMA journal_mode=WAL", path()).Step();
      break;
    } catch (const StoreError& e) {
      if (!IsBusyError(e) || attempt >= 50) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  Exec("PRAGMA synchronous=NORMAL");
}

SqliteConnection::~SqliteConnection() {
  sqlite3_close(db_);
}

void SqliteConnection::CheckIntact() {
  Statement check = Prepare("PRAGMA quick_check(1)");
  if (check.Step() && check.Text(0) != "ok") {
    throw StoreError("database " + path() + ": is damaged (" + check.Text(0) +
                     "); it was left untouched");
  }
}

void SqliteConnection::Exec(std::string_view sql) {
  const std::string text(sql);
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::string message =
        "database " + path() + ": " + (error != nullptr ? error : sqlite3_errstr(rc));
    sqlite3_free(error);
    throw StoreError(message, rc, rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
  }
}

Statement SqliteConnection::Prepare(std::string_view sql) {
  return Statement(std::make_unique<SqliteStatement>(db_, sql, path()));
}

void SqliteConnection::BeginWrite() {
  Exec("BEGIN IMMEDIATE");
}
void SqliteConnection::Commit() {
  Exec("COMMIT");
}
void SqliteConnection::RollbackQuietly() {
  if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Connection::TableCensus SqliteConnection::CountTables(const std::string& name) {
  // Counts every schema object, as an empty database has none.
  Statement census =
      Prepare("SELECT count(*), coalesce(sum(type = 'table' AND name = ?1), 0) FROM sqlite_master");
  census.Bind(1, name);
  if (!census.Step()) return {};
  return {census.Int(0), census.Int(1) > 0};
}

}  // namespace samebits::store
