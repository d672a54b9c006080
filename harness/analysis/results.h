// The harness's data model: what one run of the matrix produced, and what
// the analysis concluded. The store persists it, the reports export it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/protocol/records.h"

namespace samebits::harness {

// Result codes in the manner of LLVM lit: each knows whether it fails a run
// (kResultCodes below).
enum class ResultCode : uint8_t {
  kPass,         // every step matched
  kFail,         // a hash differs (from another configuration or the reference)
  kUnsupported,  // a feature this machine lacks (an ISA); not a failure
  kUnresolved,   // the child crashed, was killed, printed garbage or no `done`
  kTimeout,      // the child ran past its timeout and was killed
  kKnown,        // differs from the baseline as the engine's profile declares (lit's XFAIL)
  kFixed,        // declared to differ, yet identical to the baseline (lit's XPASS)
};

// What a result code is, as data: its stable name (stored, exported), a
// label for a person, and whether it fails a run.
struct ResultCodeInfo {
  ResultCode code;
  const char* name;   // "PASS"
  const char* label;  // "every step matched"
  bool failure;
};

// Every result code, in the order summaries and reports list them. As in
// lit, an unsupported feature does not fail a run. KNOWN and FIXED are
// lit's XFAIL and XPASS, with the list owned by the engine: its profile's
// `known_differences` (harness/runner/engine_profile.h) declares which
// configurations differ from its baseline and why. samebits-engine declares
// none in its gate (its math libraries are compared within themselves), so
// its cells are never KNOWN. A FIXED cell fails the run, as lit's XPASS
// does: the declaration is out of date and should be removed.
inline constexpr std::array<ResultCodeInfo, 7> kResultCodes = {{
    {ResultCode::kPass, "PASS", "every step matched", false},
    {ResultCode::kFail, "FAIL", "a hash differs", true},
    {ResultCode::kUnsupported, "UNSUPPORTED", "this machine lacks a feature or file", false},
    {ResultCode::kUnresolved, "UNRESOLVED", "the child crashed or broke the protocol", true},
    {ResultCode::kTimeout, "TIMEOUT", "the child ran past its timeout", true},
    {ResultCode::kKnown, "KNOWN", "differs as the engine's profile declares", false},
    {ResultCode::kFixed, "FIXED", "declared to differ, yet identical: update the profile", true},
}};

// Returns the code's row of kResultCodes.
const ResultCodeInfo& CodeInfo(ResultCode code);
const char* ResultCodeName(ResultCode code);  // "PASS", "FAIL", ...
bool IsFailure(ResultCode code);
// Whether the cell's child ran to the end and was compared (PASS or FAIL):
// only such cells have steps to set beside another's.
inline bool RanAndCompared(ResultCode code) {
  return code == ResultCode::kPass || code == ResultCode::kFail;
}

// The records of a child's output, as the protocol defines them
// (engine/protocol/records.h, PROTOCOL.md): one definition for the engine
// that writes them and the harness that keeps them.
//
// Where a batched run's output row sat in the forward call that computed
// it (a step's `batch`). It takes no part in any hash.
using BatchPlace = protocol::BatchPlace;
// One output row of a child (a `step` record). `text` is the decoded text
// of `token`, absent when the engine gave none; `batch` only in batched
// runs (not compared).
using StepRecord = protocol::Step;
// One activation-trace record (with --trace); `layer` -1 for model-level ops.
using TraceRecord = protocol::Trace;

// Statistics of one row of a raw logit dump (one step's logits), which a
// bundle carries even when the rows themselves stay behind
// (harness/exchange/bundle_dumps.h).
struct DumpRowStats {
  int argmax = 0;     // ties to the lower id, NaN never wins (ArgMax)
  float max_abs = 0;  // the largest |logit| over the finite ones (0 when none is)
  int nan_count = 0;
  int inf_count = 0;
  bool operator==(const DumpRowStats&) const = default;
};

// What is known of a cell's raw logit dump beyond its file: the statistics
// of every row (one per step) and, when a bundle carried them, the rows.
struct DumpData {
  int64_t row_length = 0;          // float32 values per row (the vocabulary)
  std::vector<DumpRowStats> rows;  // one per step, in step order
  // rows.size() x row_length values, or empty when only the statistics are
  // known (a bundle exported with statistics only).
  std::vector<float> values;
};

// A configuration of the engine: one column of the matrix.
struct Configuration {
  std::string name;  // "reference", "cpu-t2", "cpu-t1-chunk8k", "cpu-avx2", ...
  std::string kernels = "cpu";
  int threads = 1;
  std::string isa = "auto";
  int64_t gemv_chunk_bytes = 0;  // 0: the engine's default
  std::string math = "portable";
  // The dot-product profile for quantized weights (numeric_profile.h):
  // "exact", or "int8" (`-int8` in the name). Like `math`, it is chosen per
  // process and changes the bits by design: cells are compared only within
  // one (math, quant_dot) profile.
  std::string quant_dot = "exact";
  // Batch invariance (`-bN` in the name, batch.h): the scenario's sequence
  // decoded beside batch - 1 companion sequences drawn from `batch_seed`,
  // joining together or staggered. Batch 1 runs alone (the engine is not
  // given the batch flags at all).
  int batch = 1;
  uint64_t batch_seed = 1;
  std::string batch_schedule = "together";  // "together" or "staggered"
  // An engine driven by a profile (engines/NAME.json) other than
  // samebits-engine's: its name, and this configuration's value on every
  // axis the profile declares (the fields above then keep their defaults,
  // but `math` and `quant_dot` take the profile's axes of those names when
  // it has them). Empty for
  // samebits-engine.
  std::string engine;
  std::map<std::string, std::string> params;
  // Whether this is the profile's baseline configuration, which every other
  // configuration of its group is held to (samebits-engine's is the one
  // with the reference kernels).
  bool baseline = false;
  // Why the profile declares this configuration to differ from its
  // baseline (on this checkpoint); empty when it does not.
  std::string known_difference;
};

// One cell of the matrix: one child to run (runner/matrix.h expands them).
struct Cell {
  std::string checkpoint;  // the key results are stored and referenced by
  // The spec handed to the engine when it differs from `checkpoint` (a
  // suite's file resolved against the project root); empty: `checkpoint`.
  std::string engine_checkpoint;
  std::string scenario;       // the scenario's name (its file's stem)
  std::string scenario_file;  // the path handed to the engine
  std::string scenario_xxh3;  // its bytes' XXH3-64, 16 hex (runner/scenario_identity.h)
  Configuration config;
  bool supported = true;
  std::string unsupported_reason;  // when not supported
};

struct MathLibraryInfo {
  std::string profile;
  std::string name;
  std::string version;
  std::string fingerprint;
};

// The machine a run ran on, as the children's hello (or, when none said
// hello, the harness's own probe) describes it (engine/platform/machine.h).
using MachineInfo = protocol::PlatformInfo;

// The accelerator a cell computed on (a GPU), from its child's `hello`:
// unset for a cell that ran on the machine's CPU.
using DeviceInfo = protocol::DeviceInfo;

// Returns the device for a person, in one line: "NVIDIA H200 (cuda,
// compute capability 9.0, 132 multiprocessors, driver 580.159.04; CUDA
// 13.0, cuBLAS 13.1.0, torch 2.11.0)"; what it did not report is left out.
std::string DescribeDevice(const DeviceInfo& device);

// A cell its engine ran several times in one process (PROTOCOL.md
// "Repeats"): how many distinct outputs came of it.
using RepeatInfo = protocol::Repeats;
// What an engine's sampling at a temperature above 0 showed (PROTOCOL.md
// "Sampling"): how many seeds drew how many distinct samples, and whether
// each seed drew the same sample twice.
using SamplingInfo = protocol::Sampling;

struct BuildInfo {
  std::string engine, version, revision, compiler, flags;
  bool dirty = false;
};

// One cell of the matrix: a checkpoint x scenario x configuration child.
// Where a cell's wall time went, in milliseconds; a negative value was not
// measured (a stored or imported run, an engine that does not report its
// load). The child's parts add up to its `elapsed_ms` (to the millisecond);
// judging and storing come after the child.
// In a child shared by several cells (harness/runner/shared_child.h) each
// cell is timed from its request: the child's own start (fork, exec,
// dynamic linking) is in its first cell's `start_ms`, its exit in its last
// cell's `exit_ms`, so the parts still add up to the children's wall time.
struct CellTiming {
  // Starting the child: forking and exec'ing it, the engine's start-up
  // before it reads its inputs (a shared child's later cells: from the
  // request to the engine's start on it). When the engine does not report
  // `load_ms`, this holds everything before its `hello`, the load included.
  double start_ms = -1;
  // Reading the scenario, loading or synthesising the checkpoint and
  // building the pass: the engine's own `done.load_ms`.
  double load_ms = -1;
  double steps_ms = -1;  // from `hello` to the last record: the forward passes, the records
  double exit_ms = -1;   // from the last record to the child reaped, leftovers collected
  double judge_ms = -1;  // reading the child's transcript and judging it
  double store_ms = -1;  // writing the cell's rows to the store
  bool operator==(const CellTiming&) const = default;
};

struct CellResult {
  std::string checkpoint;  // the key (runner::ResolveCheckpoint)
  // The spec the engine was given, its file absolute; with `weights_xxh3`
  // it says exactly which file a result is for.
  std::string engine_checkpoint;
  std::string scenario;
  // The XXH3-64 of the scenario file's bytes (16 hex; empty when unknown,
  // as in runs stored before it was recorded): two scenarios with one name
  // are told apart by it.
  std::string scenario_xxh3;
  Configuration config;
  ResultCode code = ResultCode::kUnresolved;
  int exit_code = 0;
  int signal = 0;           // non-zero when killed by a signal
  std::string message;      // why it is not PASS, for a person
  std::string stderr_tail;  // the last lines the child wrote to stderr
  double elapsed_ms = 0;
  std::vector<StepRecord> steps;
  std::vector<TraceRecord> traces;
  std::optional<MathLibraryInfo> math;  // from the child's `hello`
  std::optional<BuildInfo> build;
  std::string dump_path;  // raw logits, when dumped
  // The dump's statistics (and rows) as a bundle carried them, or as the
  // store keeps them for an imported cell; unset for a local run, whose
  // statistics come from its file (harness/exchange/bundle_dumps.h).
  std::optional<DumpData> dump;
  // From the child's `hello` (empty / 0 when it never said hello).
  std::string weights_xxh3;  // the checkpoint's weights hash, 16 hex
  int vocab_size = 0;
  std::string isa_used;              // the ISA the engine resolved `isa` to ("avx512", ...)
  std::optional<DeviceInfo> device;  // from the child's `hello`: unset on the CPU
  // From the child's `hello`: what its hashes cover, unset for whole rows.
  std::optional<protocol::Readback> readback;
  // From the child's `hello`: a served engine's identity (its `server`
  // object as compact JSON text), empty for any other engine.
  std::string server;
  // From the child's `done`: unset when the engine ran the cell once. More
  // than one distinct output fails the cell (judge.h).
  std::optional<RepeatInfo> repeats;
  // From the child's `done`: unset when the engine did not sample. A seed
  // that did not reproduce its sample, or seeds that all drew one, fail the
  // cell (judge.h).
  std::optional<SamplingInfo> sampling;
  // The architecture of the machine that ran the cell where it is not the
  // run's: a fleet verdict's union of shards from several machines
  // (UnionOfShards); empty otherwise. Not stored.
  std::string machine_arch;
  CellTiming timing;  // measured by this process; not stored
};

// Returns the cell's step record of `index`, or nullptr when it has none.
const StepRecord* FindStep(const CellResult& cell, int index);

// Returns what a cell's repeats say when they did not all agree ("8
// repeats in one process gave 3 distinct outputs: repeat 2 first differs
// from repeat 1 at step 5"), or "" when they did or the cell ran once.
std::string RepeatVarianceText(const CellResult& cell);

// Returns what a cell's sampling found wrong ("seed 2 gave two different
// samples at temperature 1: the same seed must give the same sample", "4
// seeds gave one sample at temperature 1: sampling is frozen"), or "" when
// nothing was or the cell did not sample.
std::string SamplingDefectText(const CellResult& cell);

// Returns what a cell's sampling showed, for a card or summary ("4 seeds at
// temperature 1, 16 tokens: 4 distinct samples, each seed's twice the
// same"), or "" when it did not sample.
std::string SamplingText(const CellResult& cell);

// Where two step sequences first differ.
struct Divergence {
  std::string checkpoint, scenario;
  std::string config_a, config_b;  // config_b may be "reference" (the file)
  int step_index = -1;
  std::string kind;
  int position = 0;
  // With traces: the first differing layer and op.
  std::optional<int> layer;
  std::string op;
  // What differs at that step, for a person ("token 17 vs 18", "xxh3_64 ...
  // vs ...", "5 steps vs 9").
  std::string detail;
  // For a batched configuration: its batch and where the scenario's
  // sequence sat at that step ("batch 8 staggered, slot 3 of 6 sequences,
  // row 9 of 14"; DescribeBatchPlace); empty when neither side is batched.
  std::string batch_place;
};

struct Diagnosis {
  enum class Kind : uint8_t {
    kAllAgree,            // every configuration agrees with each other and the reference
    kIdentityBroken,      // configurations disagree with each other
    kMathLibraryDiffers,  // all agree, not with the reference; libm fingerprint differs
    kCodeChanged,         // all agree, not with the reference; same libm, or the portable
                          // profile (its math is the project's own code)
    kNoReference,         // no reference group for this platform and profile
    kChildFailures,       // children crashed, hung or lied
    kScenariosDiffer,     // scenarios declared equivalent give different bits (equivalence.h)
    kBatchVariance,       // the unbatched configurations agree; only batched ones differ
  };
  Kind kind = Kind::kAllAgree;
  std::string headline;              // one sentence for a person
  std::vector<std::string> details;  // what to do next, what differs
  std::vector<Divergence> divergences;
};

// What a diagnosis kind is, as data: its stable name (the one the store
// records and the JSON report exports), a title for a person, and its
// severity: when a run shows several findings, the most severe (lowest)
// leads the diagnosis and the others follow as "Also: ...".
struct DiagnosisKindInfo {
  Diagnosis::Kind kind;
  const char* name;   // "identity-broken"
  const char* title;  // "Identity broken"
  int severity;       // 0 most severe
};

// Every diagnosis kind, most severe first. A code change ranks above a
// different math library: when both show, the code change is the one to fix
// (and it may explain the libm profile's differences too).
// A batch variance is an identity break confined to one axis (the other
// sequences of a batch), so it follows a general identity break, which may
// explain it, and leads everything else.
inline constexpr std::array<DiagnosisKindInfo, 8> kDiagnosisKinds = {{
    {Diagnosis::Kind::kIdentityBroken, "identity-broken", "Identity broken", 0},
    {Diagnosis::Kind::kBatchVariance, "batch-variance", "Not batch-invariant", 1},
    // Chunking changed a row's bits: an identity break across scenarios.
    {Diagnosis::Kind::kScenariosDiffer, "scenarios-differ", "Equivalent scenarios differ", 2},
    {Diagnosis::Kind::kCodeChanged, "code-changed", "Code changed the numbers", 3},
    {Diagnosis::Kind::kMathLibraryDiffers, "math-library-differs", "Math library differs", 4},
    {Diagnosis::Kind::kNoReference, "no-reference", "No reference", 5},
    {Diagnosis::Kind::kChildFailures, "child-failures", "Children failed", 6},
    {Diagnosis::Kind::kAllAgree, "all-agree", "All configurations agree", 7},
}};

// Returns the kind's row of kDiagnosisKinds.
const DiagnosisKindInfo& KindInfo(Diagnosis::Kind kind);

// Returns the diagnosis kind's stable name ("all-agree", "identity-broken",
// ...), the one the store records and the JSON report exports.
const char* DiagnosisKindName(Diagnosis::Kind kind);

// Returns true and sets `*out` for a name DiagnosisKindName returns.
bool ParseDiagnosisKind(const std::string& name, Diagnosis::Kind* out);

// Returns true and sets `*out` for a name ResultCodeName returns ("PASS", ...).
bool ParseResultCode(const std::string& name, ResultCode* out);

// Returns why cells `a` and `b`, one scenario by name, ran different
// scenario files ("scenario 'classic' is not the same file on both sides:
// content xxh3 ... vs ..."), or "" when they ran the same one or either
// side's content is unknown.
std::string ScenarioContentMismatch(const CellResult& a, const CellResult& b);

// The shard of a sharded gate a run holds (`gate --shard K/N --group ID`,
// shard.h): stored beside the run (store/shard_records.h) and carried by
// bundles from version 5.
struct ShardInfo {
  std::string group;  // the group id the shards share
  int index = 0;      // K of K/N, 1-based
  int count = 0;      // N of K/N
};

struct RunResult {
  int64_t run_id = 0;
  std::string started_at;  // ISO 8601 UTC
  double elapsed_ms = 0;
  MachineInfo machine;
  // The machine's name (machine_name.h): the host's name or --machine-name
  // for a run made here; empty where none was given (MachineNameOf then
  // names it from `machine`). Runs are selected by machine with it.
  std::string machine_name;
  std::string command;  // the samebits command line that made the run
  std::vector<CellResult> cells;
  Diagnosis diagnosis;
  std::optional<ShardInfo> shard;  // unset: an ordinary run, not a shard
};

// The architecture of the machine that ran `cell` (CellResult::machine_arch,
// else the run's): libm cells are judged against their own architecture's
// references and agree only with cells of it.
inline const std::string& CellArch(const RunResult& run, const CellResult& cell) {
  return cell.machine_arch.empty() ? run.machine.arch : cell.machine_arch;
}

}  // namespace samebits::harness
