// The run store (store.h).
#include "harness/store/store.h"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <unordered_map>

#include "engine/protocol/records.h"
#include "harness/analysis/bounded_json.h"
#include "harness/analysis/machine_name.h"
#include "harness/analysis/verdict.h"
#include "harness/store/location.h"
#include "harness/store/postgres.h"
#include "harness/store/row_batch.h"
#include "harness/store/schema.h"
#include "harness/store/sqlite.h"

namespace samebits::store {
namespace {

using harness::CellResult;
using harness::Diagnosis;
using harness::ResultCode;
using harness::RunResult;
using protocol::HashToHex;

std::string JoinFeatures(const std::vector<std::string>& features) {
  std::string out;
  for (const std::string& f : features) {
    if (!out.empty()) out += ' ';
    out += f;
  }
  return out;
}

std::vector<std::string> SplitFeatures(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

uint64_t HexOrZero(const std::string& text) {
  uint64_t value = 0;
  protocol::ParseHashHex(text, &value);
  return value;
}

// Interns the rows runs share (machines, checkpoints, scenarios, builds,
// math libraries): returns the id of the row with given values, inserting
// it when missing. It remembers what it found for the rest of one write
// transaction, keyed by the very values it binds: a run's cells share a few
// such rows, and each lookup costs a server store two round trips.
class RowInterner {
 public:
  explicit RowInterner(Connection& db) : db_(db) {}

  // `columns` and `values` are in the same order.
  int64_t Id(const std::string& table, const std::vector<std::string>& columns,
             const std::vector<BoundValue>& values) {
    std::string key = table;
    for (const BoundValue& v : values) {
      // The type, the length, then the value: no two lists share a key.
      const std::string text = std::visit(
          [](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) {
              return x;
            } else if constexpr (std::is_same_v<T, std::monostate>) {
              return "";
            } else {
              return std::to_string(x);
            }
          },
          v);
      key += '\x1f' + std::to_string(v.index()) + ':' + std::to_string(text.size()) + ':' + text;
    }
    auto it = known_.find(key);
    if (it == known_.end())
      it = known_.emplace(std::move(key), Lookup(table, columns, values)).first;
    return it->second;
  }

 private:
  int64_t Lookup(const std::string& table, const std::vector<std::string>& columns,
                 const std::vector<BoundValue>& values) {
    std::string names;
    std::string marks;
    std::string where;
    for (size_t i = 0; i < columns.size(); ++i) {
      if (i > 0) {
        names += ", ";
        marks += ", ";
        where += " AND ";
      }
      names += columns[i];
      marks += "?" + std::to_string(i + 1);
      where += columns[i] + " = ?" + std::to_string(i + 1);
    }
    const auto bind = [&](Statement& statement) {
      for (size_t i = 0; i < values.size(); ++i)
        BindValue(statement, static_cast<int>(i + 1), values[i]);
    };
    // Two writers may intern one row at once: the UNIQUE key keeps one.
    Statement insert = db_.Prepare("INSERT INTO " + table + " (" + names + ") VALUES (" + marks +
                                   ") ON CONFLICT DO NOTHING");
    bind(insert);
    insert.Run();
    Statement select = db_.Prepare("SELECT id FROM " + table + " WHERE " + where);
    bind(select);
    if (!select.Step())
      throw StoreError("database " + db_.path() + ": cannot intern a row of " + table);
    return select.Int(0);
  }

  Connection& db_;
  std::map<std::string, int64_t> known_;
};

// Writes the diagnosis's detail lines and divergences of run `run_id` (its
// kind and headline are columns of `runs`).
void SaveDiagnosis(Connection& db, int64_t run_id, const Diagnosis& diagnosis) {
  Statement insert_detail =
      db.Prepare("INSERT INTO diagnosis_details (run_id, seq, text) VALUES (?1, ?2, ?3)");
  int64_t seq = 0;
  for (const std::string& line : diagnosis.details) {
    insert_detail.Bind(1, run_id).Bind(2, seq++).Bind(3, line);
    insert_detail.Run();
  }
  Statement insert_divergence = db.Prepare(
      "INSERT INTO divergences (run_id, seq, checkpoint, scenario, config_a, "
      "config_b, "
      "step_index, kind, position, layer, op, detail, batch_place) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  seq = 0;
  for (const harness::Divergence& d : diagnosis.divergences) {
    insert_divergence.Bind(1, run_id).Bind(2, seq++).Bind(3, d.checkpoint).Bind(4, d.scenario);
    insert_divergence.Bind(5, d.config_a).Bind(6, d.config_b);
    insert_divergence.Bind(7, static_cast<int64_t>(d.step_index)).Bind(8, d.kind);
    insert_divergence.Bind(9, static_cast<int64_t>(d.position));
    if (d.layer) {
      insert_divergence.Bind(10, static_cast<int64_t>(*d.layer));
    } else {
      insert_divergence.BindNull(10);
    }
    insert_divergence.Bind(11, d.op).Bind(12, d.detail).Bind(13, d.batch_place);
    insert_divergence.Run();
  }
}

// Reads back what SaveDiagnosis wrote into `diagnosis`.
void LoadDiagnosis(Connection& db, int64_t run_id, Diagnosis& diagnosis) {
  Statement select_details =
      db.Prepare("SELECT text FROM diagnosis_details WHERE run_id = ?1 ORDER BY seq");
  select_details.Bind(1, run_id);
  while (select_details.Step()) diagnosis.details.push_back(select_details.Text(0));
  Statement select_divergences = db.Prepare(
      "SELECT checkpoint, scenario, config_a, config_b, step_index, kind, "
      "position, layer, op, "
      "detail, batch_place FROM divergences WHERE run_id = ?1 ORDER BY seq");
  select_divergences.Bind(1, run_id);
  while (select_divergences.Step()) {
    harness::Divergence d;
    d.checkpoint = select_divergences.Text(0);
    d.scenario = select_divergences.Text(1);
    d.config_a = select_divergences.Text(2);
    d.config_b = select_divergences.Text(3);
    d.step_index = static_cast<int>(select_divergences.Int(4));
    d.kind = select_divergences.Text(5);
    d.position = static_cast<int>(select_divergences.Int(6));
    if (!select_divergences.IsNull(7)) d.layer = static_cast<int>(select_divergences.Int(7));
    d.op = select_divergences.Text(8);
    d.detail = select_divergences.Text(9);
    d.batch_place = select_divergences.Text(10);
    diagnosis.divergences.push_back(std::move(d));
  }
}

// Binds `id` at `column`, or NULL for 0 (no row).
void BindIdOrNull(Statement& s, int column, int64_t id) {
  if (id != 0) {
    s.Bind(column, id);
  } else {
    s.BindNull(column);
  }
}

// Writes `run`'s row (and interns its machine). Returns the run's id.
int64_t InsertRunRow(Connection& db, RowInterner& interner, const RunResult& run) {
  const harness::MachineInfo& m = run.machine;
  const int64_t machine_id =
      interner.Id("machines", {"arch", "cpu", "isa_features", "os", "kernel", "libc"},
                  {m.arch, m.cpu, JoinFeatures(m.isa_features), m.os, m.kernel, m.libc});
  Statement insert_run = db.Prepare(
      "INSERT INTO runs (started_at, elapsed_ms, machine_id, "
      "status, cell_count, "
      "diagnosis_kind, diagnosis_headline, command, machine_name, shard_group, shard_index, "
      "shard_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
      "RETURNING id");
  insert_run.Bind(1, run.started_at).Bind(2, run.elapsed_ms).Bind(3, machine_id);
  insert_run.Bind(4, harness::VerdictName(harness::RunVerdict(run)))
      .Bind(5, static_cast<int64_t>(run.cells.size()));
  insert_run.Bind(6, DiagnosisKindName(run.diagnosis.kind)).Bind(7, run.diagnosis.headline);
  insert_run.Bind(8, run.command).Bind(9, harness::MachineNameOf(run));
  // SCHEMA.md: '', 0, 0 for a run that is not a shard.
  const harness::ShardInfo none;
  const harness::ShardInfo& shard = run.shard ? *run.shard : none;
  insert_run.Bind(10, shard.group).Bind(11, static_cast<int64_t>(shard.index));
  insert_run.Bind(12, static_cast<int64_t>(shard.count));
  return insert_run.RunReturningId();
}

// The rows a cell refers to, shared between runs (0: none).
struct CellIdentities {
  int64_t checkpoint = 0;  // only when the engine said hello (weights known)
  int64_t scenario = 0;
  int64_t build = 0;
  int64_t math_library = 0;
};

// Returns the ids of `cell`'s checkpoint, scenario, build and math library,
// inserting the rows that are new.
CellIdentities InternCellIdentities(RowInterner& interner, const CellResult& cell) {
  CellIdentities ids;
  if (!cell.weights_xxh3.empty()) {
    ids.checkpoint =
        interner.Id("checkpoints", {"spec", "weights_xxh3", "vocab_size"},
                    {cell.checkpoint, cell.weights_xxh3, static_cast<int64_t>(cell.vocab_size)});
  }
  ids.scenario = interner.Id("scenarios", {"name"}, {cell.scenario});
  if (cell.build) {
    const harness::BuildInfo& b = *cell.build;
    ids.build = interner.Id(
        "builds", {"engine", "version", "revision", "dirty", "compiler", "flags"},
        {b.engine, b.version, b.revision, int64_t{b.dirty ? 1 : 0}, b.compiler, b.flags});
  }
  if (cell.math) {
    const harness::MathLibraryInfo& ml = *cell.math;
    ids.math_library = interner.Id("math_libraries", {"profile", "name", "version", "fingerprint"},
                                   {ml.profile, ml.name, ml.version, ml.fingerprint});
  }
  return ids;
}

// Returns whether the store keeps `cell`'s dump statistics: only when a
// bundle brought them (a local dump's come from its file), one row per step.
bool KeepsDumpStatistics(const CellResult& cell) {
  return cell.dump && cell.dump->rows.size() == cell.steps.size();
}

// Returns a configuration's axis values as the JSON object text stored in
// `cells.config_params` ("" for none: samebits-engine's cells).
std::string ParamsText(const std::map<std::string, std::string>& params) {
  return params.empty() ? std::string() : nlohmann::json(params).dump();
}

// Returns the axis values of a `cells.config_params` text. Throws
// StoreError for a value that is not a JSON object of strings.
std::map<std::string, std::string> ParamsFromText(const std::string& text) {
  if (text.empty()) return {};
  try {
    return harness::ParseBoundedJson(text, harness::LimitsForSize(text.size()))
        .get<std::map<std::string, std::string>>();
  } catch (const std::exception&) {
    throw StoreError("a cell's config_params is not a JSON object of strings: " + text);
  }
}

// Writes cells, their steps and their traces with statements prepared once
// per run.
class CellWriter {
 public:
  explicit CellWriter(Connection& db)
      : insert_cell_(db.Prepare("INSERT INTO cells (run_id, checkpoint, checkpoint_id, "
                                "scenario_id, config_name, "
                                "kernels, threads, isa, gemv_chunk_bytes, math, build_id, "
                                "math_library_id, code, "
                                "exit_code, signal, message, stderr_tail, elapsed_ms, dump_path, "
                                "isa_used, "
                                "engine_checkpoint, batch, batch_seed, batch_schedule, "
                                "scenario_xxh3, "
                                "dump_row_length, engine, config_params, baseline, "
                                "known_difference, quant_dot, device, repeats, readback, server, "
                                "sampling) "
                                "VALUES (?1, ?2, "
                                "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
                                "?17, ?18, ?19, ?20, "
                                "?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, "
                                "?33, ?34, ?35, ?36) "
                                "RETURNING id")),
        steps_(db, "steps", {"cell_id",         "idx",          "kind",       "position",
                             "input_token",     "token",        "fnv1a64",    "xxh3_64",
                             "argmax",          "nan_count",    "inf_count",  "text",
                             "batch_sequences", "batch_rows",   "batch_slot", "batch_row",
                             "dump_argmax",     "dump_max_abs", "dump_nan",   "dump_inf"}),
        traces_(db, "traces", {"cell_id", "seq", "position", "layer", "op", "xxh3_64"}) {}

  // Writes `cell`'s row. Returns its id.
  int64_t InsertCell(int64_t run_id, const CellResult& cell, const CellIdentities& ids) {
    Statement& s = insert_cell_;
    const harness::Configuration& c = cell.config;
    s.Bind(1, run_id).Bind(2, cell.checkpoint);
    BindIdOrNull(s, 3, ids.checkpoint);
    s.Bind(4, ids.scenario).Bind(5, c.name).Bind(6, c.kernels);
    s.Bind(7, static_cast<int64_t>(c.threads)).Bind(8, c.isa);
    s.Bind(9, c.gemv_chunk_bytes).Bind(10, c.math);
    BindIdOrNull(s, 11, ids.build);
    BindIdOrNull(s, 12, ids.math_library);
    s.Bind(13, harness::ResultCodeName(cell.code));
    s.Bind(14, static_cast<int64_t>(cell.exit_code));
    s.Bind(15, static_cast<int64_t>(cell.signal));
    s.Bind(16, cell.message).Bind(17, cell.stderr_tail).Bind(18, cell.elapsed_ms);
    s.Bind(19, cell.dump_path).Bind(20, cell.isa_used).Bind(21, cell.engine_checkpoint);
    s.Bind(22, static_cast<int64_t>(c.batch))
        .Bind(23, static_cast<int64_t>(c.batch_seed))
        .Bind(24, c.batch_schedule)
        .Bind(25, cell.scenario_xxh3);
    if (KeepsDumpStatistics(cell)) {
      s.Bind(26, cell.dump->row_length);
    } else {
      s.BindNull(26);
    }
    s.Bind(27, c.engine).Bind(28, ParamsText(c.params));
    s.Bind(29, static_cast<int64_t>(c.baseline ? 1 : 0)).Bind(30, c.known_difference);
    s.Bind(31, c.quant_dot);
    s.Bind(32, cell.device ? protocol::ToJsonText(*cell.device) : std::string());
    s.Bind(33, cell.repeats ? protocol::ToJsonText(*cell.repeats) : std::string());
    s.Bind(34, cell.readback ? protocol::ToJsonText(*cell.readback) : std::string());
    s.Bind(35, cell.server);
    s.Bind(36, cell.sampling ? protocol::ToJsonText(*cell.sampling) : std::string());
    return s.RunReturningId();
  }

  // Writes `cell`'s steps, each with its dump statistics when kept.
  void InsertSteps(int64_t cell_id, const CellResult& cell) {
    const bool dump_stats = KeepsDumpStatistics(cell);
    for (size_t k = 0; k < cell.steps.size(); ++k) {
      const harness::StepRecord& st = cell.steps[k];
      RowBatch& s = steps_.AddRow();
      s.Bind(1, cell_id).Bind(2, static_cast<int64_t>(st.index)).Bind(3, st.kind);
      s.Bind(4, static_cast<int64_t>(st.position));
      s.Bind(5, static_cast<int64_t>(st.input_token));
      s.Bind(6, static_cast<int64_t>(st.token));
      s.Bind(7, HashToHex(st.fnv1a64)).Bind(8, HashToHex(st.xxh3_64));
      s.Bind(9, static_cast<int64_t>(st.argmax));
      s.Bind(10, static_cast<int64_t>(st.nan_count));
      s.Bind(11, static_cast<int64_t>(st.inf_count));
      s.Bind(12, st.text.value_or(""));
      if (st.batch) {
        s.Bind(13, static_cast<int64_t>(st.batch->sequences));
        s.Bind(14, static_cast<int64_t>(st.batch->rows));
        s.Bind(15, static_cast<int64_t>(st.batch->slot));
        s.Bind(16, static_cast<int64_t>(st.batch->row));
      } else {
        for (int column = 13; column <= 16; ++column) s.BindNull(column);
      }
      if (dump_stats) {
        const harness::DumpRowStats& d = cell.dump->rows[k];
        s.Bind(17, static_cast<int64_t>(d.argmax));
        s.Bind(18, static_cast<double>(d.max_abs));
        s.Bind(19, static_cast<int64_t>(d.nan_count));
        s.Bind(20, static_cast<int64_t>(d.inf_count));
      } else {
        for (int column = 17; column <= 20; ++column) s.BindNull(column);
      }
    }
  }

  void InsertTraces(int64_t cell_id, const CellResult& cell) {
    int64_t seq = 0;
    for (const harness::TraceRecord& t : cell.traces) {
      RowBatch& s = traces_.AddRow();
      s.Bind(1, cell_id).Bind(2, seq++).Bind(3, static_cast<int64_t>(t.position));
      s.Bind(4, static_cast<int64_t>(t.layer)).Bind(5, t.op);
      s.Bind(6, HashToHex(t.xxh3_64));
    }
  }

  // Inserts the step and trace rows still held back. Call once the last
  // cell is written, inside the run's transaction.
  void Flush() {
    steps_.Flush();
    traces_.Flush();
  }

 private:
  Statement insert_cell_;
  RowBatch steps_, traces_;
};

// Returns run `id`'s row: its times, diagnosis kind and headline, command
// and machine. Throws StoreError when there is no such run.
RunResult LoadRunRow(Connection& db, int64_t id) {
  Statement select_run = db.Prepare(
      "SELECT r.started_at, r.elapsed_ms, r.diagnosis_kind, "
      "r.diagnosis_headline, r.command, "
      "m.arch, m.cpu, m.isa_features, m.os, m.kernel, m.libc, r.machine_name, "
      "r.shard_group, r.shard_index, r.shard_count "
      "FROM runs r LEFT JOIN machines m ON m.id = r.machine_id "
      "WHERE r.id = ?1");
  select_run.Bind(1, id);
  if (!select_run.Step()) {
    throw StoreError("database " + db.path() + ": no run " + std::to_string(id) +
                     " (see `samebits runs`)");
  }
  RunResult run;
  run.run_id = id;
  run.started_at = select_run.Text(0);
  run.elapsed_ms = select_run.Double(1);
  ParseDiagnosisKind(select_run.Text(2), &run.diagnosis.kind);
  run.diagnosis.headline = select_run.Text(3);
  run.command = select_run.Text(4);
  run.machine.arch = select_run.Text(5);
  run.machine.cpu = select_run.Text(6);
  run.machine.isa_features = SplitFeatures(select_run.Text(7));
  run.machine.os = select_run.Text(8);
  run.machine.kernel = select_run.Text(9);
  run.machine.libc = select_run.Text(10);
  run.machine_name = select_run.Text(11);
  if (select_run.Int(14) > 0) {
    run.shard = harness::ShardInfo{select_run.Text(12), static_cast<int>(select_run.Int(13)),
                                   static_cast<int>(select_run.Int(14))};
  }
  return run;
}

// The columns ReadCell reads (kCellColumnCount of them, `c.id` first) and
// the tables they come from: a cell, its scenario, build, math library and
// checkpoint. A query may select more columns after these.
constexpr const char* kCellColumns =
    "c.id, c.checkpoint, s.name, c.config_name, c.kernels, c.threads, c.isa, "
    "c.gemv_chunk_bytes, c.math, c.code, c.exit_code, c.signal, c.message, c.stderr_tail, "
    "c.elapsed_ms, c.dump_path, "
    "b.id, b.engine, b.version, b.revision, b.dirty, b.compiler, b.flags, "
    "ml.id, ml.profile, ml.name, ml.version, ml.fingerprint, k.weights_xxh3, k.vocab_size, "
    "c.isa_used, c.engine_checkpoint, c.batch, c.batch_seed, c.batch_schedule, "
    "c.scenario_xxh3, c.dump_row_length, c.engine, c.config_params, c.baseline, "
    "c.known_difference, c.quant_dot, c.device, c.repeats, c.readback, c.server, c.sampling";
constexpr int kCellColumnCount = 47;
constexpr const char* kCellTables =
    "cells c JOIN scenarios s ON s.id = c.scenario_id "
    "LEFT JOIN builds b ON b.id = c.build_id "
    "LEFT JOIN math_libraries ml ON ml.id = c.math_library_id "
    "LEFT JOIN checkpoints k ON k.id = c.checkpoint_id";

// Reads the build (columns 16-22), math library (23-27) and checkpoint
// (28-29) of a row of LoadCells' query into `cell`.
void ReadCellIdentities(Statement& row, CellResult& cell) {
  if (!row.IsNull(16)) {
    harness::BuildInfo b;
    b.engine = row.Text(17);
    b.version = row.Text(18);
    b.revision = row.Text(19);
    b.dirty = row.Int(20) != 0;
    b.compiler = row.Text(21);
    b.flags = row.Text(22);
    cell.build = b;
  }
  if (!row.IsNull(23)) {
    harness::MathLibraryInfo ml;
    ml.profile = row.Text(24);
    ml.name = row.Text(25);
    ml.version = row.Text(26);
    ml.fingerprint = row.Text(27);
    cell.math = ml;
  }
  if (!row.IsNull(28)) {
    cell.weights_xxh3 = row.Text(28);
    cell.vocab_size = static_cast<int>(row.Int(29));
  }
}

// Reads the device (column 42), repeats (43), read-back (44), server (45)
// and sampling (46) of a row of LoadCells' query into `cell`: the protocol's JSON
// objects, '' for none. Throws StoreError for text that is not one.
void ReadCellProtocolObjects(Statement& row, CellResult& cell) {
  const std::string device = row.Text(42), repeats = row.Text(43), readback = row.Text(44),
                    server = row.Text(45), sampling = row.Text(46);
  try {
    if (!device.empty()) cell.device = protocol::ParseDeviceText(device);
    if (!repeats.empty()) cell.repeats = protocol::ParseRepeatsText(repeats);
    if (!readback.empty()) cell.readback = protocol::ParseReadbackText(readback);
    if (!server.empty()) cell.server = protocol::CompactObjectText(server, "server");
    if (!sampling.empty()) cell.sampling = protocol::ParseSamplingText(sampling);
  } catch (const protocol::ProtocolError& e) {
    throw StoreError(
        std::string("a cell's device, repeats, read-back, server or sampling is not what the "
                    "protocol "
                    "says: ") +
        e.what());
  }
}

// Returns a cell from a row of LoadCells' query (steps and traces not yet).
CellResult ReadCell(Statement& row) {
  CellResult cell;
  cell.checkpoint = row.Text(1);
  cell.scenario = row.Text(2);
  cell.config.name = row.Text(3);
  cell.config.kernels = row.Text(4);
  cell.config.threads = static_cast<int>(row.Int(5));
  cell.config.isa = row.Text(6);
  cell.config.gemv_chunk_bytes = row.Int(7);
  cell.config.math = row.Text(8);
  ParseResultCode(row.Text(9), &cell.code);
  cell.exit_code = static_cast<int>(row.Int(10));
  cell.signal = static_cast<int>(row.Int(11));
  cell.message = row.Text(12);
  cell.stderr_tail = row.Text(13);
  cell.elapsed_ms = row.Double(14);
  cell.dump_path = row.Text(15);
  ReadCellIdentities(row, cell);
  cell.isa_used = row.Text(30);
  cell.engine_checkpoint = row.Text(31);
  cell.config.batch = static_cast<int>(row.Int(32));
  cell.config.batch_seed = static_cast<uint64_t>(row.Int(33));
  cell.config.batch_schedule = row.Text(34);
  cell.scenario_xxh3 = row.Text(35);
  if (!row.IsNull(36)) {
    cell.dump.emplace();
    cell.dump->row_length = row.Int(36);
  }
  cell.config.engine = row.Text(37);
  cell.config.params = ParamsFromText(row.Text(38));
  cell.config.baseline = row.Int(39) != 0;
  cell.config.known_difference = row.Text(40);
  cell.config.quant_dot = row.Text(41);
  ReadCellProtocolObjects(row, cell);
  return cell;
}

// Appends run `run_id`'s cells to `cells` in the order they were saved.
// Returns their ids, in the same order.
std::vector<int64_t> LoadCells(Connection& db, int64_t run_id, std::vector<CellResult>& cells) {
  Statement select_cells = db.Prepare(std::string("SELECT ") + kCellColumns + " FROM " +
                                      kCellTables + " WHERE c.run_id = ?1 ORDER BY c.id");
  select_cells.Bind(1, run_id);
  std::vector<int64_t> cell_ids;
  while (select_cells.Step()) {
    cell_ids.push_back(select_cells.Int(0));
    cells.push_back(ReadCell(select_cells));
  }
  return cell_ids;
}

// The columns ReadStep reads, `s.cell_id` first.
constexpr const char* kStepColumns =
    "s.cell_id, s.idx, s.kind, s.position, s.input_token, s.token, s.fnv1a64, s.xxh3_64, "
    "s.argmax, s.nan_count, s.inf_count, s.text, s.batch_sequences, s.batch_rows, s.batch_slot, "
    "s.batch_row, s.dump_argmax, s.dump_max_abs, s.dump_nan, s.dump_inf";

// Appends the step of a row of kStepColumns to `cell` (and its dump
// statistics, when the store keeps the cell's).
void ReadStep(Statement& s, CellResult& cell) {
  harness::StepRecord st;
  st.index = static_cast<int>(s.Int(1));
  st.kind = s.Text(2);
  st.position = static_cast<int>(s.Int(3));
  st.input_token = static_cast<int>(s.Int(4));
  st.token = static_cast<int>(s.Int(5));
  st.fnv1a64 = HexOrZero(s.Text(6));
  st.xxh3_64 = HexOrZero(s.Text(7));
  st.argmax = static_cast<int>(s.Int(8));
  st.nan_count = static_cast<int>(s.Int(9));
  st.inf_count = static_cast<int>(s.Int(10));
  // "" is stored for a step without text (the engine gave none).
  if (std::string text = s.Text(11); !text.empty()) st.text = std::move(text);
  if (!s.IsNull(12)) {
    st.batch = harness::BatchPlace{static_cast<int>(s.Int(12)), static_cast<int>(s.Int(13)),
                                   static_cast<int>(s.Int(14)), static_cast<int>(s.Int(15))};
  }
  if (cell.dump) {
    // A step stored without statistics (none should be) reads as zeros.
    cell.dump->rows.push_back({static_cast<int>(s.Int(16)), static_cast<float>(s.Double(17)),
                               static_cast<int>(s.Int(18)), static_cast<int>(s.Int(19))});
  }
  cell.steps.push_back(std::move(st));
}

// Reads a run's steps and traces into its cells: one query for all its
// steps and one for all its traces, so a server store pays two round trips
// per run rather than two per cell.
class CellReader {
 public:
  // `cells[i]` is the cell stored as `cell_ids[i]`.
  CellReader(Connection& db, const std::vector<int64_t>& cell_ids, std::vector<CellResult>& cells)
      : db_(db), cells_(cells) {
    for (size_t i = 0; i < cell_ids.size(); ++i) index_of_[cell_ids[i]] = i;
  }

  // Appends each cell's steps (and their dump statistics, when the store
  // keeps the cell's) to it, in step order.
  void LoadSteps(int64_t run_id) {
    Statement s = db_.Prepare(
        std::string("SELECT ") + kStepColumns +
        " FROM cells c JOIN steps s ON s.cell_id = c.id WHERE c.run_id = ?1 ORDER BY c.id, s.idx");
    s.Bind(1, run_id);
    while (s.Step()) ReadStep(s, CellOf(s.Int(0)));
  }

  // Appends each cell's traces to it, in their order.
  void LoadTraces(int64_t run_id) {
    Statement s = db_.Prepare(
        "SELECT t.cell_id, t.position, t.layer, t.op, t.xxh3_64 FROM cells c "
        "JOIN traces t ON t.cell_id = c.id WHERE c.run_id = ?1 ORDER BY c.id, t.seq");
    s.Bind(1, run_id);
    while (s.Step()) {
      harness::TraceRecord t;
      t.position = static_cast<int>(s.Int(1));
      t.layer = static_cast<int>(s.Int(2));
      t.op = s.Text(3);
      t.xxh3_64 = HexOrZero(s.Text(4));
      CellOf(s.Int(0)).traces.push_back(std::move(t));
    }
  }

 private:
  CellResult& CellOf(int64_t cell_id) {
    const auto it = index_of_.find(cell_id);
    if (it == index_of_.end()) {
      throw StoreError("database " + db_.path() + ": a step or trace row names cell " +
                       std::to_string(cell_id) + ", which its run does not hold");
    }
    return cells_[it->second];
  }

  Connection& db_;
  std::vector<CellResult>& cells_;
  std::unordered_map<int64_t, size_t> index_of_;
};

}  // namespace

namespace {

// Refuses, for a reader, a store that is not current: an empty one holds
// no runs yet, an older one is upgraded by a writer (a reader writes
// nothing), a newer one needs a newer samebits (Migrate says so).
void CheckCurrentForReading(Connection& db) {
  const int version = SchemaVersion(db);
  if (version < CurrentSchemaVersion()) {
    throw StoreError("database " + db.path() +
                     (version == 0 ? std::string(": is empty, it holds no runs yet")
                                   : ": was written by an older samebits; a command that "
                                     "writes (samebits run, samebits import) upgrades it"));
  }
  Migrate(db);  // only checks: the store is not older than this build
}

// Opens the SQLite store at `path` as Store's constructor says.
std::unique_ptr<Connection> OpenSqliteStore(const std::string& path, Access access) {
  std::error_code ec;
  if (access == Access::kRead) {
    // A reader creates nothing: no folder, no empty store, no side file.
    if (!std::filesystem::exists(path, ec)) throw StoreError("no such store: " + path);
    auto db = std::make_unique<SqliteConnection>(path, OpenMode::kReadOnly);
    // Refuses a foreign or newer database; a current one is read as it is.
    CheckCurrentForReading(*db);
    return db;
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) throw StoreError("database " + path + ": cannot create its folder: " + ec.message());
  }
  auto db = std::make_unique<SqliteConnection>(path, OpenMode::kCreate);
  SchemaVersion(*db);  // refuses another program's database before any write
  db->CheckIntact();
  db->PrepareForWriting();
  Migrate(*db);
  return db;
}

// Opens the PostgreSQL store at `location`: a reader reads a current
// store in read-only transactions; a writer refuses another program's
// database before creating or upgrading the schema.
std::unique_ptr<Connection> OpenPostgresStore(const Location& location, Access access) {
  std::unique_ptr<Connection> db = OpenPostgres(location, access == Access::kRead);
  if (access == Access::kRead) {
    CheckCurrentForReading(*db);
  } else {
    SchemaVersion(*db);
    Migrate(*db);
  }
  return db;
}

}  // namespace

Store::Store(const std::string& path, Access access, const std::string& server_side_folder) {
  // Refuses a value that names no store this build can open before any
  // file is touched (location.h).
  const Location location = UsableLocation(path);
  side_folder_ =
      SideFolder(location, server_side_folder.empty() ? std::filesystem::current_path().string()
                                                      : server_side_folder);
  db_ = location.backend == Backend::kPostgres ? OpenPostgresStore(location, access)
                                               : OpenSqliteStore(path, access);
}

int64_t Store::SaveRun(const RunResult& run) {
  int64_t run_id = 0;
  WithWriteTransaction(*db_, [&] { run_id = InsertRun(run); });
  return run_id;
}

int64_t Store::InsertRun(const RunResult& run) {
  Connection& db = *db_;
  RowInterner interner(db);
  const int64_t run_id = InsertRunRow(db, interner, run);
  SaveDiagnosis(db, run_id, run.diagnosis);
  CellWriter writer(db);
  int written = 0;
  for (const CellResult& cell : run.cells) {
    const int64_t cell_id = writer.InsertCell(run_id, cell, InternCellIdentities(interner, cell));
    writer.InsertSteps(cell_id, cell);
    writer.InsertTraces(cell_id, cell);
    ++written;
    if (after_cell_hook) after_cell_hook(written);
  }
  writer.Flush();
  return run_id;
}

RunResult Store::LoadRun(int64_t id) {
  Connection& db = *db_;
  RunResult run = LoadRunRow(db, id);
  LoadDiagnosis(db, id, run.diagnosis);
  const std::vector<int64_t> cell_ids = LoadCells(db, id, run.cells);
  CellReader reader(db, cell_ids, run.cells);
  reader.LoadSteps(id);
  reader.LoadTraces(id);
  return run;
}

std::vector<RunSummary> Store::ListRuns(int limit, const std::string& machine) {
  Connection& db = *db_;
  std::vector<RunSummary> out;
  Statement select = db.Prepare(
      "SELECT id, started_at, elapsed_ms, status, "
      "diagnosis_kind, diagnosis_headline, command, machine_name FROM runs " +
      std::string(machine.empty() ? "" : "WHERE machine_name = ?2 ") + "ORDER BY id DESC LIMIT ?1");
  select.Bind(1, static_cast<int64_t>(limit));
  if (!machine.empty()) select.Bind(2, machine);
  while (select.Step()) {
    RunSummary r;
    r.id = select.Int(0);
    r.started_at = select.Text(1);
    r.elapsed_ms = select.Double(2);
    r.status = select.Text(3);
    r.diagnosis_kind = select.Text(4);
    r.headline = select.Text(5);
    r.command = select.Text(6);
    r.machine_name = select.Text(7);
    out.push_back(std::move(r));
  }
  Statement counts = db.Prepare("SELECT code, count(*) FROM cells WHERE run_id = ?1 GROUP BY code");
  for (RunSummary& r : out) {
    counts.Bind(1, r.id);
    while (counts.Step()) r.counts[counts.Text(0)] = static_cast<int>(counts.Int(1));
    counts.Reset();
  }
  return out;
}

std::vector<harness::CellSighting> Store::CellHistory(const harness::CellKey& key, int limit,
                                                      const std::string& machine) {
  Connection& db = *db_;
  Statement select = db.Prepare(
      std::string("SELECT ") + kCellColumns + ", r.id, r.started_at, r.machine_name FROM " +
      kCellTables + " JOIN runs r ON r.id = c.run_id " +
      "WHERE c.checkpoint = ?1 AND s.name = ?2 AND c.config_name = ?3 " +
      (machine.empty() ? "" : "AND r.machine_name = ?5 ") + "ORDER BY r.id DESC, c.id LIMIT ?4");
  select.Bind(1, key.checkpoint).Bind(2, key.scenario).Bind(3, key.config);
  select.Bind(4, static_cast<int64_t>(limit));
  if (!machine.empty()) select.Bind(5, machine);
  std::vector<harness::CellSighting> out;
  std::vector<int64_t> cell_ids;
  while (select.Step()) {
    harness::CellSighting sighting;
    sighting.cell = ReadCell(select);
    sighting.run_id = select.Int(kCellColumnCount);
    sighting.started_at = select.Text(kCellColumnCount + 1);
    sighting.machine_name = select.Text(kCellColumnCount + 2);
    cell_ids.push_back(select.Int(0));
    out.push_back(std::move(sighting));
  }
  // One query per cell: a history reads few cells, each from another run.
  Statement steps = db.Prepare(std::string("SELECT ") + kStepColumns +
                               " FROM steps s WHERE s.cell_id = ?1 ORDER BY s.idx");
  for (size_t i = 0; i < out.size(); ++i) {
    steps.Bind(1, cell_ids[i]);
    while (steps.Step()) ReadStep(steps, out[i].cell);
    steps.Reset();
  }
  return out;
}

int64_t Store::LatestRunId() {
  Statement select = db_->Prepare("SELECT max(id) FROM runs");
  if (!select.Step() || select.IsNull(0)) return 0;
  return select.Int(0);
}

int64_t Store::LatestRunIdOf(const std::string& machine) {
  Statement select = db_->Prepare("SELECT max(id) FROM runs WHERE machine_name = ?1");
  select.Bind(1, machine);
  if (!select.Step() || select.IsNull(0)) return 0;
  return select.Int(0);
}

std::vector<std::string> Store::MachineNames() {
  Statement select = db_->Prepare("SELECT DISTINCT machine_name FROM runs ORDER BY machine_name");
  std::vector<std::string> out;
  while (select.Step()) out.push_back(select.Text(0));
  return out;
}

}  // namespace samebits::store
