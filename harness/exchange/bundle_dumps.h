// Raw logit dumps in bundles. A cell whose dump could be read carries a
// `dump` object: the row length and every step's statistics (argmax, max
// |logit| over the finite values, NaN and Inf counts), and, when the dump is
// at most `samebits export --max-dump-bytes` (1 MiB by default), the rows
// themselves as base64 of their float32 little-endian bytes:
//
//   "dump": {"row_length": 256, "rows_included": true, "rows_base64": "...",
//            "steps": [{"argmax": 17, "max_abs": 12.5, "nan": 0, "inf": 0}, ...]}
//
// The run's content id covers `row_length` and `steps`, not whether the
// rows travelled: a bundle with the rows and one with statistics only are
// the same run, so importing both adds it once. The rows cannot change
// without the content id noticing all the same: each row must hash (the
// protocol's FNV-1a 64 and XXH3-64, engine/numerics/hash.h) to its step's
// hashes, which the content id covers, and must give the statistics listed.
// A dump whose rows do not hash to its steps (an engine that broke the
// protocol) is not exported.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::exchange {

// The most raw dump bytes `samebits export` puts in a bundle for one cell
// by default; a larger dump travels as statistics only.
inline constexpr uint64_t kDefaultMaxDumpBytes = 1ull << 20;
// The most raw dump bytes a bundle may carry for one cell (the reader
// refuses more; `--max-dump-bytes` cannot ask for more).
inline constexpr uint64_t kMaxBundledDumpBytes = 64ull << 20;
// The longest dump row a bundle may describe (float32 values).
inline constexpr int64_t kMaxDumpRowLength = 1 << 24;

// A bundle's `dump` object that is wrong: `field` is the path below the
// cell's `dump` ("steps[2].argmax"), the message says what is wrong.
class DumpFieldError : public std::runtime_error {
 public:
  DumpFieldError(std::string field, const std::string& what)
      : std::runtime_error(what), field(std::move(field)) {}
  std::string field;
};

// Returns `path` resolved against `base_dir` when it is relative and
// `base_dir` is not empty (dump paths are stored relative to the project
// root, harness/store/SCHEMA.md).
std::string ResolveDumpPath(const std::string& path, const std::string& base_dir);

// Returns the dump of `cell` read from the file `path`: one row per step,
// rows as long as the cell's vocabulary (when known), each row hashing to
// its step's hashes; its rows kept when `keep_rows`. Throws
// std::runtime_error naming the file.
harness::DumpData ReadCellDump(const harness::CellResult& cell, const std::string& path,
                               bool keep_rows);

// Fills the `dump` of every cell of `run` that has a dump file (relative
// paths against `base_dir`), with its rows when they take at most
// `max_dump_bytes`. A dump that cannot be read leaves the cell as it was
// (without `dump`, or with the statistics the store kept for an imported
// cell). Returns one warning line per such dump.
std::vector<std::string> AttachDumps(harness::RunResult& run, const std::string& base_dir,
                                     uint64_t max_dump_bytes);

// Returns the part of a `dump` object the content id covers: `row_length`
// and `steps`.
nlohmann::json DumpStatisticsJson(const harness::DumpData& dump);

// Adds `rows_included` and, when the rows are known, `rows_base64` to `j`.
void AddDumpRows(const harness::DumpData& dump, nlohmann::json& j);

// Returns the dump `j` describes for `cell` (whose steps are read already),
// checking every field. Throws DumpFieldError.
harness::DumpData ParseDumpJson(const nlohmann::json& j, const harness::CellResult& cell);

// Writes the rows of `dump` to `path` as a raw logit dump (PROTOCOL.md:
// float32 little-endian, rows in step order). Throws BundleError.
void WriteDumpFile(const std::string& path, const harness::DumpData& dump);

}  // namespace samebits::exchange
