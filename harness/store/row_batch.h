// Rows of one table inserted many to a statement: `INSERT INTO t (...)
// VALUES (...), (...), ...`. A server store (PostgreSQL) pays a network
// round trip per statement, so inserting a run's step rows one statement
// each cost one round trip a row (6.7 thousand rows a second in
// BENCHMARKS.md); batched, it is one per RowBatch::kMaxRowsPerStatement
// rows. SQLite runs the same SQL.
//
// Rows go in the order they were added, so ids given by the table keep
// that order on both backends. A statement holds at most
// kMaxParametersPerStatement values: SQLite's limit is 32766, PostgreSQL's
// 65535.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/store/connection.h"

namespace samebits::store {

class RowBatch {
 public:
  static constexpr int kMaxParametersPerStatement = 4096;
  static constexpr int kMaxRowsPerStatement = 256;

  // Rows of `table` with these `columns`, in that order.
  RowBatch(Connection& db, std::string table, std::vector<std::string> columns);

  // Starts the next row. Its values are bound with Bind/BindNull, by
  // 1-based column, as a Statement's; a column left unbound is NULL.
  // Inserts the rows held so far when a statement's worth is waiting.
  RowBatch& AddRow();
  RowBatch& Bind(int column, int64_t value);
  RowBatch& Bind(int column, double value);
  RowBatch& Bind(int column, std::string_view value);
  RowBatch& BindNull(int column);

  // Inserts every row added and not yet inserted. Call before the
  // transaction commits, and before reading the table back.
  void Flush();

  // How many rows one statement inserts (at most).
  int rows_per_statement() const { return rows_per_statement_; }

 private:
  BoundValue& Slot(int column);
  // Inserts rows [first, first + count) of `pending_` with one statement.
  void InsertRows(size_t first, int count);
  // The statement inserting `rows` rows, prepared on first use.
  Statement& StatementFor(int rows);

  Connection& db_;
  std::string table_;
  std::vector<std::string> columns_;
  int rows_per_statement_;
  std::vector<BoundValue> pending_;  // row-major, columns_.size() a row
  std::map<int, Statement> statements_;
};

}  // namespace samebits::store
