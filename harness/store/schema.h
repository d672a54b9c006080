// The store's schema as a list of migrations (SCHEMA.md documents the
// tables). Migration `i` takes a database from version `i` to `i + 1`;
// version 0 is an empty file. A released migration is never edited: a change
// is a new migration, so every older database can be brought forward.
#pragma once

#include <string_view>
#include <vector>

namespace samebits::store {

// Returns the migrations, oldest first; their count is the current version.
const std::vector<std::string_view>& Migrations();

// Returns the schema version this build writes.
int CurrentSchemaVersion();

class Connection;

// Brings the database to `target` (default: current) inside one write
// transaction. Throws StoreError when the database is newer than this build
// knows, naming both versions.
void Migrate(Connection& db, int target = -1);

// Returns the database's schema version (0 for a new, empty database).
int SchemaVersion(Connection& db);

}  // namespace samebits::store
