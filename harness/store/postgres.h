// The PostgreSQL backend of the store's connection (connection.h), through
// plain libpq: the store a fleet of machines shares. The same queries and
// migrations as SQLite's: `?N` placeholders become `$N`, and the
// migrations' SQLite types become PostgreSQL's (AdaptSchema). Writers
// exclude each other for the length of a transaction with one advisory
// lock, as SQLite's BEGIN IMMEDIATE does, so that a writer that looks
// before it writes (import, which stores a bundle's run once) sees every
// run committed before it.
#pragma once

#include <memory>

#include "harness/store/connection.h"

namespace samebits::store {

// Returns a connection to the server `location` names (Backend::kPostgres);
// read_only makes every transaction read-only. Connecting gives up after
// the connection string's connect_timeout (10 s when it sets none). Throws
// StoreError naming the host, also for a build without libpq.
std::unique_ptr<Connection> OpenPostgres(const Location& location, bool read_only);

// Returns `sql` with SQLite's `?N` (or bare `?`) placeholders written as
// PostgreSQL's `$N`, leaving quoted text alone.
std::string PostgresPlaceholders(std::string_view sql);

// Returns a migration written with SQLite's types in PostgreSQL's: INTEGER
// PRIMARY KEY an identity column, INTEGER BIGINT, REAL DOUBLE PRECISION.
std::string PostgresSchema(std::string_view sql);

}  // namespace samebits::store
