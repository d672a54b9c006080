// Multi-row inserts (row_batch.h).
#include "harness/store/row_batch.h"

#include <algorithm>

namespace samebits::store {

RowBatch::RowBatch(Connection& db, std::string table, std::vector<std::string> columns)
    : db_(db), table_(std::move(table)), columns_(std::move(columns)) {
  if (columns_.empty()) throw StoreError("a row batch of " + table_ + " needs columns");
  const int width = static_cast<int>(columns_.size());
  rows_per_statement_ = std::clamp(kMaxParametersPerStatement / width, 1, kMaxRowsPerStatement);
}

RowBatch& RowBatch::AddRow() {
  const size_t width = columns_.size();
  if (pending_.size() >= width * static_cast<size_t>(rows_per_statement_)) Flush();
  pending_.resize(pending_.size() + width);
  return *this;
}

BoundValue& RowBatch::Slot(int column) {
  const size_t width = columns_.size();
  if (pending_.empty()) throw StoreError("a value bound to " + table_ + " before AddRow");
  if (column < 1 || static_cast<size_t>(column) > width) {
    throw StoreError("column " + std::to_string(column) + " of a " + std::to_string(width) +
                     "-column row of " + table_);
  }
  return pending_[pending_.size() - width + static_cast<size_t>(column - 1)];
}

RowBatch& RowBatch::Bind(int column, int64_t value) {
  Slot(column) = value;
  return *this;
}
RowBatch& RowBatch::Bind(int column, double value) {
  Slot(column) = value;
  return *this;
}
RowBatch& RowBatch::Bind(int column, std::string_view value) {
  Slot(column) = std::string(value);
  return *this;
}
RowBatch& RowBatch::BindNull(int column) {
  Slot(column) = std::monostate{};
  return *this;
}

void RowBatch::Flush() {
  const size_t width = columns_.size();
  const size_t rows = pending_.size() / width;
  for (size_t first = 0; first < rows; first += static_cast<size_t>(rows_per_statement_)) {
    InsertRows(first, static_cast<int>(std::min<size_t>(rows - first, rows_per_statement_)));
  }
  pending_.clear();
}

void RowBatch::InsertRows(size_t first, int count) {
  const size_t width = columns_.size();
  Statement& s = StatementFor(count);
  int index = 1;
  for (size_t k = first * width; k < (first + static_cast<size_t>(count)) * width; ++k, ++index) {
    BindValue(s, index, pending_[k]);
  }
  s.Run();
}

Statement& RowBatch::StatementFor(int rows) {
  auto it = statements_.find(rows);
  if (it != statements_.end()) return it->second;
  std::string sql = "INSERT INTO " + table_ + " (";
  for (size_t c = 0; c < columns_.size(); ++c) sql += (c > 0 ? ", " : "") + columns_[c];
  sql += ") VALUES ";
  int mark = 1;
  for (int r = 0; r < rows; ++r) {
    sql += r > 0 ? ", (" : "(";
    for (size_t c = 0; c < columns_.size(); ++c) {
      sql += (c > 0 ? ", ?" : "?") + std::to_string(mark++);
    }
    sql += ")";
  }
  return statements_.emplace(rows, db_.Prepare(sql)).first->second;
}

}  // namespace samebits::store
