// Raw logit dumps in bundles (bundle_dumps.h).
#include "harness/exchange/bundle_dumps.h"

#include <bit>
#include <cmath>
#include <filesystem>
#include <limits>

#include "engine/numerics/hash.h"
#include "harness/analysis/dump_rows.h"
#include "harness/analysis/logit_difference.h"
#include "harness/analysis/ulp.h"
#include "harness/exchange/base64.h"
#include "harness/exchange/bundle.h"
#include "harness/store/output_file.h"

namespace samebits::exchange {
namespace {

using harness::CellResult;
using harness::DumpData;
using harness::DumpRowStats;
using nlohmann::json;

std::string Index(size_t i) {
  std::string out = std::to_string(i);  // built in place: GCC 12 warns falsely on "[" + s
  out.insert(out.begin(), '[');
  out += ']';
  return out;
}

std::string CellName(const CellResult& c) {
  return c.checkpoint + " " + c.scenario + " " + c.config.name;
}

// Returns the row of `dump` at `r`.
std::span<const float> Row(const DumpData& dump, size_t r) {
  return {dump.values.data() + r * static_cast<size_t>(dump.row_length),
          static_cast<size_t>(dump.row_length)};
}

using harness::RowHashMismatch;

int64_t IntegerField(const json& j, const std::string& where, const char* key, int64_t lo,
                     int64_t hi) {
  const std::string field = where.empty() ? key : where + "." + key;
  if (!j.is_object()) throw DumpFieldError(where, "expected an object");
  auto it = j.find(key);
  if (it == j.end()) throw DumpFieldError(where, std::string("missing field \"") + key + "\"");
  if (!it->is_number_integer()) throw DumpFieldError(field, "expected an integer");
  if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(hi))
    throw DumpFieldError(field,
                         "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  const int64_t x = it->get<int64_t>();
  if (x < lo || x > hi)
    throw DumpFieldError(field, std::to_string(x) + " out of range [" + std::to_string(lo) + ", " +
                                    std::to_string(hi) + "]");
  return x;
}

std::vector<uint8_t> LittleEndianBytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint32_t b = std::bit_cast<uint32_t>(values[i]);
    for (int k = 0; k < 4; ++k) bytes[4 * i + k] = static_cast<uint8_t>(b >> (8 * k));
  }
  return bytes;
}

}  // namespace

std::string ResolveDumpPath(const std::string& path, const std::string& base_dir) {
  if (base_dir.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

DumpData ReadCellDump(const CellResult& cell, const std::string& path, bool keep_rows) {
  const harness::LogitDump file =
      harness::ReadLogitDump(path, static_cast<int64_t>(cell.steps.size()));
  if (cell.vocab_size > 0 && file.vocab_size != cell.vocab_size)
    throw std::runtime_error("logit dump " + path + ": rows of " + std::to_string(file.vocab_size) +
                             " values, but the checkpoint's vocabulary has " +
                             std::to_string(cell.vocab_size));
  DumpData dump;
  dump.row_length = file.vocab_size;
  for (size_t r = 0; r < cell.steps.size(); ++r) {
    const std::span<const float> row = file.Row(static_cast<int64_t>(r));
    if (std::string bad = RowHashMismatch(row, cell.steps[r]); !bad.empty()) {
      std::string message = "logit dump " + path;
      message += ": row " + std::to_string(r) + " does not hash to its step (";
      message += bad + ")";
      throw std::runtime_error(message);
    }
    dump.rows.push_back(harness::RowStatistics(row));
  }
  if (keep_rows) dump.values = file.values;
  return dump;
}

std::vector<std::string> AttachDumps(harness::RunResult& run, const std::string& base_dir,
                                     uint64_t max_dump_bytes) {
  std::vector<std::string> warnings;
  for (CellResult& cell : run.cells) {
    if (cell.dump_path.empty()) continue;
    try {
      DumpData dump = ReadCellDump(cell, ResolveDumpPath(cell.dump_path, base_dir), true);
      if (dump.values.size() * 4 > max_dump_bytes) dump.values.clear();
      cell.dump = std::move(dump);
    } catch (const std::exception& e) {
      if (cell.dump) cell.dump->values.clear();
      warnings.push_back(std::string(e.what()) + " (" + CellName(cell) + "): exported " +
                         (cell.dump ? "with the statistics the store kept" : "without its dump"));
    }
  }
  return warnings;
}

json DumpStatisticsJson(const DumpData& dump) {
  json steps = json::array();
  for (const DumpRowStats& s : dump.rows) {
    steps.push_back({{"argmax", s.argmax},
                     {"max_abs", static_cast<double>(s.max_abs)},
                     {"nan", s.nan_count},
                     {"inf", s.inf_count}});
  }
  return {{"row_length", dump.row_length}, {"steps", std::move(steps)}};
}

void AddDumpRows(const DumpData& dump, json& j) {
  j["rows_included"] = !dump.values.empty();
  if (!dump.values.empty()) j["rows_base64"] = Base64Encode(LittleEndianBytes(dump.values));
}

DumpData ParseDumpJson(const json& j, const CellResult& cell) {
  DumpData dump;
  dump.row_length = IntegerField(j, "", "row_length", 1, kMaxDumpRowLength);
  if (cell.vocab_size > 0 && dump.row_length != cell.vocab_size)
    throw DumpFieldError("row_length", std::to_string(dump.row_length) +
                                           " is not the cell's vocab_size " +
                                           std::to_string(cell.vocab_size));
  const auto steps = j.find("steps");
  if (steps == j.end()) throw DumpFieldError("", "missing field \"steps\"");
  if (!steps->is_array()) throw DumpFieldError("steps", "expected an array");
  if (steps->size() != cell.steps.size())
    throw DumpFieldError("steps", std::to_string(steps->size()) + " rows for " +
                                      std::to_string(cell.steps.size()) +
                                      " steps (a dump has one row per step)");
  for (size_t i = 0; i < steps->size(); ++i) {
    const json& s = (*steps)[i];
    const std::string sw = "steps" + Index(i);
    DumpRowStats st;
    st.argmax = static_cast<int>(IntegerField(s, sw, "argmax", 0, dump.row_length - 1));
    st.nan_count = static_cast<int>(IntegerField(s, sw, "nan", 0, dump.row_length));
    st.inf_count = static_cast<int>(IntegerField(s, sw, "inf", 0, dump.row_length));
    if (st.nan_count + st.inf_count > dump.row_length)
      throw DumpFieldError(sw, "more NaN and Inf values than the row holds");
    const auto max_abs = s.find("max_abs");
    if (max_abs == s.end()) throw DumpFieldError(sw, "missing field \"max_abs\"");
    if (!max_abs->is_number()) throw DumpFieldError(sw + ".max_abs", "expected a number");
    const double m = max_abs->get<double>();
    // Not NaN, not infinite (it is over the finite values), and exactly a
    // float32 (a float was written).
    if (!std::isfinite(m) || std::signbit(m) || m > std::numeric_limits<float>::max() ||
        static_cast<double>(static_cast<float>(m)) != m)
      throw DumpFieldError(sw + ".max_abs", "expected a finite float32 value >= 0");
    st.max_abs = static_cast<float>(m);
    dump.rows.push_back(st);
  }
  const auto included = j.find("rows_included");
  if (included == j.end()) throw DumpFieldError("", "missing field \"rows_included\"");
  if (!included->is_boolean()) throw DumpFieldError("rows_included", "expected true or false");
  const auto text = j.find("rows_base64");
  if (!included->get<bool>()) {
    if (text != j.end()) throw DumpFieldError("rows_base64", "present, but rows_included is false");
    return dump;
  }
  if (text == j.end()) throw DumpFieldError("", "missing field \"rows_base64\"");
  if (!text->is_string()) throw DumpFieldError("rows_base64", "expected a string");
  // Sizes first, so nothing large is decoded before it is known to fit.
  const uint64_t bytes =
      static_cast<uint64_t>(dump.rows.size()) * static_cast<uint64_t>(dump.row_length) * 4;
  if (bytes > kMaxBundledDumpBytes)
    throw DumpFieldError("rows_base64", std::to_string(bytes) +
                                            " bytes of rows is larger than the " +
                                            std::to_string(kMaxBundledDumpBytes) +
                                            "-byte limit for one cell's dump");
  const std::string& s = text->get_ref<const std::string&>();
  if (s.size() != Base64Length(bytes))
    throw DumpFieldError("rows_base64", std::to_string(s.size()) + " characters, but " +
                                            std::to_string(dump.rows.size()) + " rows of " +
                                            std::to_string(dump.row_length) +
                                            " float32 values take " +
                                            std::to_string(Base64Length(bytes)));
  const std::optional<std::vector<uint8_t>> raw = Base64Decode(s);
  if (!raw) throw DumpFieldError("rows_base64", "not valid base64");
  dump.values.resize(raw->size() / 4);
  for (size_t i = 0; i < dump.values.size(); ++i) {
    const uint8_t* p = raw->data() + 4 * i;
    dump.values[i] =
        std::bit_cast<float>(static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                             static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24);
  }
  for (size_t r = 0; r < dump.rows.size(); ++r) {
    const std::span<const float> row = Row(dump, r);
    if (const std::string bad = RowHashMismatch(row, cell.steps[r]); !bad.empty())
      throw DumpFieldError("rows_base64",
                           "row " + std::to_string(r) + " does not hash to its step (" + bad + ")");
    if (harness::RowStatistics(row) != dump.rows[r])
      throw DumpFieldError("steps" + Index(r), "does not match the statistics of its row");
  }
  return dump;
}

void WriteDumpFile(const std::string& path, const DumpData& dump) {
  const std::vector<uint8_t> bytes = LittleEndianBytes(dump.values);
  store::WriteOutputFile(path, std::string(bytes.begin(), bytes.end()));
}

}  // namespace samebits::exchange
