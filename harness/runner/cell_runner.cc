// Judging one child (cell_runner.h).
#include "harness/runner/cell_runner.h"

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "engine/protocol/records.h"
#include "harness/analysis/batch.h"
#include "harness/runner/cell_arguments.h"
#include "harness/runner/engine_claims.h"
#include "harness/runner/profile_cell.h"

namespace samebits::runner {
namespace {

using harness::CellResult;
using harness::ResultCode;

std::string SignalName(int sig) {
  const char* name = ::strsignal(sig);
  return "signal " + std::to_string(sig) + (name != nullptr ? " (" + std::string(name) + ")" : "");
}

// Returns why the hello's resolved configuration differs from the one asked
// for, or "" when it matches. An engine that silently ran something else
// would make a comparison meaningless.
std::string ConfigMismatch(const Cell& cell, const protocol::Hello& hello) {
  const harness::Configuration& want = cell.config;
  const protocol::RunConfig& got = hello.config;
  std::ostringstream why;
  if (got.kernels != want.kernels)
    why << "kernels " << got.kernels << " (asked " << want.kernels << ") ";
  if (got.threads != want.threads)
    why << "threads " << got.threads << " (asked " << want.threads << ") ";
  if (got.math != want.math) why << "math " << got.math << " (asked " << want.math << ") ";
  if (hello.math.profile != want.math) {
    why << "math library profile " << hello.math.profile << " (asked " << want.math << ") ";
  }
  // An engine that ignored --quant-dot (one older than it) ran the exact
  // profile: its hello, without `quant_dot`, says exact.
  if (got.quant_dot != want.quant_dot) {
    why << "quant_dot " << got.quant_dot << " (asked " << want.quant_dot << ") ";
  }
  if (want.isa != "auto" && got.isa != want.isa)
    why << "isa " << got.isa << " (asked " << want.isa << ") ";
  if (want.gemv_chunk_bytes > 0 && got.gemv_chunk_bytes != want.gemv_chunk_bytes) {
    why << "gemv chunk " << got.gemv_chunk_bytes << " bytes (asked " << want.gemv_chunk_bytes
        << ") ";
  }
  if (got.checkpoint != EngineCheckpoint(cell)) {
    why << "checkpoint " << got.checkpoint << " (asked " << EngineCheckpoint(cell) << ") ";
  }
  std::string text = why.str();
  if (!text.empty()) text.pop_back();
  return text;
}

// Returns why the hello's batch differs from the one asked for, or "" when
// it matches. An engine that ignored --batch (one older than it) ran the
// sequence alone, and its hashes would pass for batch-invariant ones.
std::string BatchMismatch(const Cell& cell, const protocol::Hello& hello) {
  const harness::Configuration& want = cell.config;
  const protocol::RunConfig& got = hello.config;
  if (want.batch > 1 && got.batch <= 1) {
    return "the engine did not run batched: its hello reports batch " + std::to_string(got.batch) +
           " (asked " + harness::DescribeBatch(want) +
           "); an engine without --batch cannot check batch invariance";
  }
  std::ostringstream why;
  if (got.batch != want.batch) why << "batch " << got.batch << " (asked " << want.batch << ") ";
  if (want.batch > 1 && got.batch_seed != want.batch_seed) {
    why << "batch seed " << got.batch_seed << " (asked " << want.batch_seed << ") ";
  }
  if (want.batch > 1 && got.batch_schedule != want.batch_schedule) {
    why << "batch schedule " << got.batch_schedule << " (asked " << want.batch_schedule << ") ";
  }
  std::string text = why.str();
  if (!text.empty()) {
    text.pop_back();
    text = "the engine ran another batch than asked: " + text;
  }
  return text;
}

// Returns a result naming the cell (its checkpoint key, scenario and
// configuration) and nothing else yet.
CellResult EmptyResult(const Cell& cell) {
  CellResult r;
  r.checkpoint = cell.checkpoint;
  r.engine_checkpoint = EngineCheckpoint(cell);
  r.scenario = cell.scenario;
  r.scenario_xxh3 = cell.scenario_xxh3;
  r.config = cell.config;
  return r;
}

}  // namespace

std::map<std::string, std::string> CellVariables(const Cell& cell) {
  return {{"SAMEBITS_THREADS", std::to_string(cell.config.threads)},
          {"SAMEBITS_ISA", cell.config.isa},
          {"SAMEBITS_MATH", cell.config.math},
          {"OMP_NUM_THREADS", "1"}};
}

namespace {

// Keeps what the child's hello says of the cell (its math library, build,
// checkpoint and resolved ISA) and, when `platform` is given, of the
// machine.
void KeepHello(const protocol::Hello& h, CellResult& r, harness::MachineInfo* platform) {
  r.math =
      harness::MathLibraryInfo{h.math.profile, h.math.library, h.math.version, h.math.fingerprint};
  harness::BuildInfo b;
  b.engine = h.engine.name;
  b.version = h.engine.version;
  b.revision = h.build.revision;
  b.dirty = h.build.dirty;
  b.compiler = h.build.compiler;
  b.flags = h.build.flags;
  r.build = b;
  r.weights_xxh3 = h.checkpoint.weights_xxh3;
  r.vocab_size = h.checkpoint.vocab_size;
  r.isa_used = h.config.isa;
  r.device = h.device;
  r.readback = h.readback;
  r.server = h.server;
  if (platform != nullptr) *platform = h.platform;
}

// Sets `r`'s code and message from how the child ended and what its
// transcript says, the first that applies: a timeout, a configuration the
// engine says it cannot run, a signal, an exit code, runaway output, a
// broken protocol, a hello that `hello_check` refuses; else PASS.
void ClassifyExit(const Cell& cell, const ChildOutcome& outcome, const protocol::Transcript& t,
                  const HelloCheck& hello_check, CellResult& r) {
  r.code = ResultCode::kUnresolved;
  if (outcome.timed_out) {
    r.code = ResultCode::kTimeout;
    char m[128];
    std::snprintf(m, sizeof m, "ran past the timeout; killed with its process group after %.1f s",
                  outcome.elapsed_ms / 1000.0);
    r.message = m;
    return;
  }
  // Only the engine's `unsupported` record makes a cell UNSUPPORTED
  // (PROTOCOL.md); an `error` is a failure whatever its text says.
  if (t.unsupported && outcome.signal == 0) {
    r.code = ResultCode::kUnsupported;
    r.message = "the engine cannot run this here: " + t.unsupported->reason;
    return;
  }
  if (outcome.signal != 0) {
    r.message = "killed by " + SignalName(outcome.signal);
    if (!t.ok) r.message += "; " + t.failure;
    return;
  }
  if (outcome.exit_code != 0) {
    r.message = "exited with code " + std::to_string(outcome.exit_code);
    if (!t.ok) r.message += "; " + t.failure;
    const std::string said = (t.error ? t.error->message : "") + outcome.stderr_tail;
    if (cell.config.batch > 1 && said.find("--batch") != std::string::npos) {
      r.message +=
          "; the engine did not run batched: it refused --batch (an engine older than "
          "batched runs?)";
    }
    return;
  }
  if (outcome.stdout_truncated) {
    r.message = "printed more than the harness keeps on stdout (runaway output)";
    return;
  }
  if (!t.ok) {
    r.message = t.failure;
    return;
  }
  if (const std::string mismatch = hello_check(t, outcome.stdout_text); !mismatch.empty()) {
    r.message = mismatch;
    return;
  }
  r.code = ResultCode::kPass;
}

// Returns where the child's wall time went, from when its first and last
// lines arrived and the load time its `done` reports.
harness::CellTiming ChildTimeSplit(const ChildOutcome& outcome, const protocol::Transcript& t) {
  harness::CellTiming timing;
  const std::string& out = outcome.stdout_text;
  const size_t first_end = out.find('\n');
  const double first_at = first_end == std::string::npos ? -1 : ArrivalMs(outcome, first_end);
  const double last_at = out.empty() ? -1 : ArrivalMs(outcome, out.size() - 1);
  if (first_at < 0 || last_at < 0) {
    timing.start_ms = outcome.elapsed_ms;  // it never finished a line
    return timing;
  }
  timing.start_ms = first_at;
  // The engine's own load time, when it reports one that fits.
  if (t.done && t.done->load_ms && *t.done->load_ms <= first_at) {
    timing.load_ms = *t.done->load_ms;
    timing.start_ms = first_at - timing.load_ms;
  }
  timing.steps_ms = last_at - first_at;
  timing.exit_ms = std::max(0.0, outcome.elapsed_ms - last_at);
  return timing;
}

// Returns what the child's transcript and exit say, its hello checked by
// `hello_check` (JudgeChild adds what it left behind).
CellResult JudgeExit(const Cell& cell, const ChildOutcome& outcome, const HelloCheck& hello_check,
                     harness::MachineInfo* platform) {
  CellResult r = EmptyResult(cell);
  r.exit_code = outcome.exit_code;
  r.signal = outcome.signal;
  r.stderr_tail = outcome.stderr_tail;
  r.elapsed_ms = outcome.elapsed_ms;
  r.code = ResultCode::kUnresolved;
  if (!outcome.started) {
    r.message = outcome.start_error;
    return r;
  }
  const protocol::Transcript t = protocol::ReadTranscript(outcome.stdout_text);
  // Keep whatever the child did say, so a report can show how far it got.
  r.steps = t.steps;
  r.traces = t.traces;
  if (t.hello) KeepHello(*t.hello, r, platform);
  if (t.done) {
    r.repeats = t.done->repeats;
    r.sampling = t.done->sampling;
  }
  ClassifyExit(cell, outcome, t, hello_check, r);
  r.timing = ChildTimeSplit(outcome, t);
  return r;
}

}  // namespace

CellResult JudgeChild(const Cell& cell, const ChildOutcome& outcome, harness::MachineInfo* platform,
                      const std::string& dump_file, const EngineProfile* own_profile) {
  // samebits-engine's configuration: the fields of `Configuration`, then
  // whatever else its profile's echo promises (an axis the fields lack).
  const HelloCheck fields = [&cell, own_profile](const protocol::Transcript& t,
                                                 const std::string& stdout_text) {
    if (const std::string mismatch = ConfigMismatch(cell, *t.hello); !mismatch.empty())
      return "the engine ran another configuration than asked: " + mismatch;
    if (std::string batch = BatchMismatch(cell, *t.hello); !batch.empty()) return batch;
    if (own_profile == nullptr) return std::string();
    return ProfileEchoMismatch(*own_profile, ProfileConfiguration(*own_profile, cell.config),
                               stdout_text);
  };
  return JudgeChildWith(cell, outcome, fields, platform, dump_file);
}

CellResult JudgeChildWith(const Cell& cell, const ChildOutcome& outcome,
                          const HelloCheck& hello_check, harness::MachineInfo* platform,
                          const std::string& dump_file) {
  CellResult r = JudgeExit(cell, outcome, hello_check, platform);
  std::string leftovers;
  if (!outcome.left_running.empty()) {
    leftovers = "left running after it ended (killed): ";
    for (size_t i = 0; i < outcome.left_running.size(); ++i) {
      leftovers += (i > 0 ? ", " : "") + outcome.left_running[i];
    }
  }
  if (outcome.output_held_open) {
    leftovers += leftovers.empty() ? "" : "; ";
    leftovers += "its output was still held open by a process outside its tree";
  }
  if (!leftovers.empty()) {
    // A child that leaves processes behind breaks the cell's isolation: not
    // a pass, whatever it printed.
    if (r.code == ResultCode::kPass) r.code = ResultCode::kUnresolved;
    r.message += (r.message.empty() ? "" : "; ") + leftovers;
  }
  // What the child claims (its steps, its dump) is checked in one place,
  // whichever engine it is; the dump is kept only when it checks.
  CheckEngineClaims(cell, dump_file, r);
  return r;
}

std::string CellDumpFile(const Cell& cell, const RunnerOptions& options) {
  return options.dump_dir.empty() ? "" : options.dump_dir + "/" + DumpFileName(cell);
}

ChildSpec CellChildSpec(const Cell& cell, const RunnerOptions& options,
                        std::vector<std::string> args) {
  ChildSpec spec;
  spec.program = options.engine;
  spec.args = std::move(args);
  std::map<std::string, std::string> variables = CellVariables(cell);
  if (!options.synthetic_cache_dir.empty()) {
    variables["SAMEBITS_SYNTHETIC_CACHE"] = options.synthetic_cache_dir;
  }
  spec.env = ChildEnvironment(variables, options.passthrough);
  spec.timeout_seconds = options.timeout_seconds;
  return spec;
}

CellResult JudgeCellChild(const Cell& cell, const ChildOutcome& outcome,
                          const std::string& dump_file, const EngineProfile* own_profile,
                          harness::MachineInfo* platform) {
  const auto judging = std::chrono::steady_clock::now();
  CellResult result = JudgeChild(cell, outcome, platform, dump_file, own_profile);
  result.timing.judge_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - judging).count();
  return result;
}

CellResult RunCell(const Cell& cell, const RunnerOptions& options, harness::MachineInfo* platform) {
  if (!cell.supported) {
    CellResult r = EmptyResult(cell);
    r.code = ResultCode::kUnsupported;
    r.message = cell.unsupported_reason;
    return r;
  }
  const std::string dump_file = CellDumpFile(cell, options);
  if (options.profile != nullptr) {
    ProfileCellOptions o;
    o.program = options.engine;
    o.timeout_seconds = options.timeout_seconds;
    o.trace = options.trace;
    if (!options.profile->dump_logits.empty()) o.dump_file = dump_file;
    o.passthrough = options.passthrough;
    return RunProfileCell(*options.profile, cell, o, platform);
  }
  std::vector<std::string> args;
  try {
    args = OwnEngineArguments(cell, options, dump_file);
  } catch (const std::invalid_argument& e) {
    CellResult r = EmptyResult(cell);
    r.code = ResultCode::kUnresolved;
    r.message = e.what();
    return r;
  }
  const ChildOutcome outcome = RunChild(CellChildSpec(cell, options, std::move(args)));
  return JudgeCellChild(cell, outcome, dump_file, options.own_profile, platform);
}

std::vector<std::string> OwnEngineArguments(const Cell& cell, const RunnerOptions& options,
                                            const std::string& dump_file) {
  if (options.own_profile == nullptr) {
    throw std::invalid_argument("no samebits-engine profile (engines/samebits.json) to build " +
                                cell.config.name + "'s command line from");
  }
  try {
    return EngineArguments(*options.own_profile, cell, options.trace, dump_file);
  } catch (const ConfigurationNameError& e) {
    throw std::invalid_argument("'" + cell.config.name + "' is not a configuration of " +
                                options.own_profile->file + ": " + e.what());
  }
}

}  // namespace samebits::runner
