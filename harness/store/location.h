// What a `--db` value names, decided in one place for every command and for
// the store itself: a PostgreSQL server (a `postgresql://` or `postgres://`
// URL, or a libpq keyword string such as `host=db.example dbname=samebits`)
// or an SQLite file (anything else). A value with another URL scheme
// (`mysql://`, `sqlite://`, `file://`) is refused: it used to become a
// folder named after the scheme holding a new SQLite file.
#pragma once

#include <string>

namespace samebits::store {

enum class Backend {
  kSqlite,    // an embedded SQLite file (the default)
  kPostgres,  // a PostgreSQL server, through libpq
};

struct Location {
  Backend backend = Backend::kSqlite;
  std::string value;    // the SQLite file's path, or the libpq connection string as given
  std::string display;  // how messages name it: RedactLocation(value)
};

// Returns `value` with every secret libpq would read from it replaced by
// ***: a URL's password (user:PW@), its `password`, `sslpassword` and
// `passfile` query parameters, and the same keywords of a keyword string
// (password=PW, password = 'P W'). Anything else is returned as it is. The
// one redaction of a store location: every command line that is stored,
// printed or exported (cli/commands.h's CommandLine) and every message that
// names a store goes through it. A password belongs in PGPASSFILE or
// PGPASSWORD (harness/store/README.md), never on a command line.
std::string RedactLocation(const std::string& value);

// Returns one command-line argument with RedactLocation applied to it, or
// to its value when it is `--flag=VALUE`.
std::string RedactArgument(const std::string& argument);

// Returns what `db` names. Throws StoreError (exit 2) for an empty value and
// for a URL whose scheme is not PostgreSQL's, naming the value and what
// would be accepted. Touches nothing.
Location ParseLocation(const std::string& db);

// Returns whether this build can open PostgreSQL stores (built with libpq).
bool PostgresSupported();

// Returns ParseLocation(db), and throws StoreError (exit 2) for a store this
// build cannot open (PostgreSQL without libpq). Every command calls it on
// its store before doing anything, so a wrong value costs nothing.
Location UsableLocation(const std::string& db);

// Returns the folder where files that belong with the store are kept (raw
// logit dumps, build caches, imported dumps): the SQLite file's folder, or
// `server_fallback` for a server, which has no folder of its own.
std::string SideFolder(const Location& location, const std::string& server_fallback);

}  // namespace samebits::store
