// The child protocol's records (PROTOCOL.md): typed structs, a writer that
// prints each as one compact JSON line and flushes it, and a strict reader
// used by the harness and the tests. The reader validates every field it
// knows, ignores fields it does not (they may be added within a version),
// and rejects anything else with a message naming the line and the problem.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/platform/machine.h"

namespace samebits::protocol {

inline constexpr int kProtocolVersion = 1;

// A line that is not a valid record of this protocol version.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EngineInfo {
  std::string name;
  std::string version;
  bool operator==(const EngineInfo&) const = default;
};

struct BuildInfo {
  std::string revision;
  bool dirty = false;
  std::string compiler;
  std::string flags;
  bool operator==(const BuildInfo&) const = default;
};

// The machine the engine ran on: uname, the C library, the CPU model and
// the ISA features the CPU reports (engine/platform/machine.h).
using PlatformInfo = platform::Machine;

struct MathInfo {
  std::string profile;  // "portable" or "libm"
  std::string library;  // "samebits-portable", "glibc", ...
  std::string version;
  std::string fingerprint;  // 16 lower-case hex digits
  bool operator==(const MathInfo&) const = default;
};

// The resolved configuration of this run.
struct RunConfig {
  std::string checkpoint;
  std::string scenario;
  std::string kernels;  // "reference" or "cpu"
  int threads = 1;
  std::string isa;  // the ISA actually used: "scalar", "avx2", ...
  int64_t gemv_chunk_bytes = 0;
  std::string math;  // "portable" or "libm"
  // How quantized matrices were multiplied: "exact" or "int8"
  // (numerics/int8_dot.h). Written only when not "exact"; an engine that
  // leaves it out ran the exact profile.
  std::string quant_dot = "exact";
  // Batch invariance (--batch): the scenario's sequence decoded beside
  // batch - 1 companion sequences. Written only when batch > 1; an engine
  // that leaves them out ran alone (batch 1).
  int batch = 1;
  uint64_t batch_seed = 0;
  std::string batch_schedule = "together";  // "together" or "staggered"
  bool operator==(const RunConfig&) const = default;
};

// The accelerator a cell ran on, when it was not the CPU the platform
// describes (optional in `hello`; PROTOCOL.md "The device"): a different
// GPU, driver or GPU library is a named cause of a difference, as a
// different math library is, not a change of the code.
struct DeviceInfo {
  std::string kind;         // "cuda", ...: never empty
  std::string name;         // "NVIDIA H200"
  std::string capability;   // the compute capability: "9.0"
  int multiprocessors = 0;  // 0: not reported
  std::string driver;       // "580.159.04"
  std::string libraries;    // "CUDA 13.0, cuBLAS 13.1.0, cuDNN 9.13.0, torch 2.11.0+cu130"
  bool operator==(const DeviceInfo&) const = default;
};

// What an engine's `step` hashes cover (optional in `hello`; PROTOCOL.md):
// whole logit rows, or only what a served engine returned of each row.
struct Readback {
  std::string kind = "full";  // "full", "topk" or "tokens"
  int k = 0;                  // "topk": how many (token, log-probability) pairs
  bool operator==(const Readback&) const = default;
};

// Returns what identical hashes under `r` prove, for a person: "every
// step's whole logit row", "the chosen token and the top 20
// (token, log-probability) pairs of each step, as returned", "the chosen
// token of each step".
std::string DescribeReadback(const Readback& r);

// Returns the narrower of two read-backs, the one whose identical hashes
// prove less: the chosen tokens alone, then the top K (the smaller K), then
// whole rows. `so_far` unset means whole rows.
Readback NarrowerReadback(const std::optional<Readback>& so_far, const Readback& next);

struct CheckpointInfo {
  std::string spec;
  std::string weights_xxh3;  // 16 lower-case hex digits
  int vocab_size = 0;
  bool operator==(const CheckpointInfo&) const = default;
};

struct Hello {
  int protocol = kProtocolVersion;
  EngineInfo engine;
  BuildInfo build;
  PlatformInfo platform;
  MathInfo math;
  RunConfig config;
  CheckpointInfo checkpoint;
  std::optional<DeviceInfo> device;  // unset: the run used the platform's CPU
  std::optional<Readback> readback;  // unset: whole rows ("full")
  // A served engine's identity as its bridge read it (the hello's `server`
  // object: URL, the model entry of GET /v1/models, ...), as compact JSON
  // text; empty when the hello has none. Kept, shown, never judged.
  std::string server;
  // samebits-engine's tuning knobs in use and the wisdom file that chose
  // them (the hello's `tuning` object, PROTOCOL.md), as compact JSON text;
  // empty when the hello has none. No knob changes a bit: kept, shown, and
  // checked only by a profile's echo.
  std::string tuning;
  bool operator==(const Hello&) const = default;
};

// The forward call of a batched run that computed one output row:
// `sequences` sequences (the scenario's and its companions) fed `rows`
// token rows together; the scenario's sequence was the `slot`-th of them
// (0-based, in row order) and this output row was row `row` of the call.
struct BatchPlace {
  int sequences = 1;
  int rows = 1;
  int slot = 0;
  int row = 0;
  bool operator==(const BatchPlace&) const = default;
};

// One output row (a `step` record). The harness keeps these as they are
// (harness::StepRecord is this type).
struct Step {
  int index = 0;
  std::string kind;  // "prefill", "decode" or "extend"
  int position = 0;
  int input_token = 0;
  int token = 0;
  uint64_t fnv1a64 = 0;
  uint64_t xxh3_64 = 0;
  int argmax = 0;
  int nan_count = 0;  // NaN logits (the JSON key `nan`)
  int inf_count = 0;  // infinite logits (the JSON key `inf`)
  // The decoded text of `token`, when the checkpoint has a vocabulary
  // (optional: older engines and checkpoints without one leave it out).
  std::optional<std::string> text;
  // Where this row sat in the batched forward call that computed it
  // (present only in runs with batch > 1).
  std::optional<BatchPlace> batch;
  bool operator==(const Step&) const = default;
};

struct Trace {
  int position = 0;
  int layer = -1;  // -1 for model-level ops
  std::string op;
  uint64_t xxh3_64 = 0;
  bool operator==(const Trace&) const = default;
};

// How `done.elapsed_ms` splits between the two phases of a run: the chunked
// feeds (prefill and extend) and the single-token decode steps. Optional in
// the protocol: an engine that does not time phases leaves it out, and a
// reader then knows the split is unknown.
struct PhaseTimes {
  double prefill_ms = 0;
  int64_t prefill_tokens = 0;  // positions fed by prefill and extend steps
  double decode_ms = 0;
  int64_t decode_tokens = 0;  // decode steps
  bool operator==(const PhaseTimes&) const = default;
};

// An engine that ran the same cell several times in one process
// (PROTOCOL.md "Repeats"): how many times, how many distinct whole outputs
// came of it, and where the first repeat that differed from the first one
// did so. The records written are the first repeat's.
struct Repeats {
  int count = 1;
  int distinct = 1;
  int first_repeat = 0;  // 1-based; 0 when every repeat agreed
  int first_step = -1;   // that repeat's first differing step; -1 likewise
  bool operator==(const Repeats&) const = default;
};

// An engine that also sampled the cell's prompt at a temperature above 0
// (PROTOCOL.md "Sampling"): each of `seeds` seeds twice. Different seeds
// must give different samples (sampling is not frozen) and one seed the
// same sample twice (a seed makes it reproducible).
struct Sampling {
  int seeds = 2;             // how many seeds, each sampled twice
  double temperature = 1.0;  // > 0
  int tokens = 1;            // tokens per sample
  int distinct = 1;          // distinct samples among the seeds' first ones
  int unstable_seed = 0;     // 1-based: the first seed whose two samples differed; 0 none
  bool operator==(const Sampling&) const = default;
};

struct Done {
  int64_t steps = 0;
  double elapsed_ms = 0;
  std::optional<PhaseTimes> phases;
  // Optional: the time from the engine's start to its `hello` (reading the
  // scenario, loading or synthesising the checkpoint, building the pass),
  // so a harness can tell a child's start from its load.
  std::optional<double> load_ms;
  std::optional<Repeats> repeats;    // unset: the cell ran once
  std::optional<Sampling> sampling;  // unset: the cell did not sample
  bool operator==(const Done&) const = default;
};

struct Error {
  std::string message;
  bool operator==(const Error&) const = default;
};

// The engine cannot run this configuration or checkpoint here (an ISA the
// machine lacks, an architecture it does not implement): not a failure of
// the engine, and the only way a reader learns it (error text is never read
// for it). Written instead of `done`; nothing may follow it.
struct Unsupported {
  std::string reason;
  bool operator==(const Unsupported&) const = default;
};

using Record = std::variant<Hello, Step, Trace, Done, Error, Unsupported>;

// Return the record as one compact JSON line, without the newline.
// What an engine can never run here, as its `capabilities` probe says
// (PROTOCOL.md, "Capabilities"): an axis value ("isa" "neon") and why.
struct Unavailable {
  std::string axis;
  std::string value;
  std::string reason;
  bool operator==(const Unavailable&) const = default;
};

// The synthetic checkpoints an engine knows: `synthetic:NAME` for each of
// `names`, and `synthetic:NAME-TYPE` for each of `types` too.
struct SyntheticCheckpoints {
  std::vector<std::string> names;
  std::vector<std::string> types;
  bool operator==(const SyntheticCheckpoints&) const = default;
};

struct Capabilities {
  std::vector<Unavailable> unavailable;
  // Optional (PROTOCOL.md): which `synthetic:` checkpoints the engine knows,
  // so a harness refuses another before any cell runs; absent: it does not
  // say, and such a checkpoint fails at its first cell.
  std::optional<SyntheticCheckpoints> synthetic;
  // The engine serves several cells of one configuration in one process
  // (`run --serve`, PROTOCOL.md "Serving several cells"); written only
  // when true, read as false when absent.
  bool serve = false;
  bool operator==(const Capabilities&) const = default;
};

std::string ToJsonLine(const Capabilities& record);
// Returns the `capabilities` record on `line`. Throws ProtocolError for
// anything else (another record, a malformed field).
Capabilities ParseCapabilities(std::string_view line);

// The `device` object of a hello and the `repeats` object of a done record
// as compact JSON text, and back (the harness keeps them so in its store
// and bundles: one format, written once). The parsers check what
// ParseRecord checks and throw ProtocolError.
std::string ToJsonText(const DeviceInfo& device);
DeviceInfo ParseDeviceText(std::string_view text);
std::string ToJsonText(const Repeats& repeats);
Repeats ParseRepeatsText(std::string_view text);
std::string ToJsonText(const Sampling& sampling);
Sampling ParseSamplingText(std::string_view text);
std::string ToJsonText(const Readback& readback);
Readback ParseReadbackText(std::string_view text);
// Checks that `text` is one JSON object (a hello's `server`) and returns it
// compact; throws ProtocolError naming `where` otherwise.
std::string CompactObjectText(std::string_view text, const std::string& where);

std::string ToJsonLine(const Hello& record);
std::string ToJsonLine(const Step& record);
std::string ToJsonLine(const Trace& record);
std::string ToJsonLine(const Done& record);
std::string ToJsonLine(const Error& record);
std::string ToJsonLine(const Unsupported& record);

// Returns the record on `line` (without its newline). Throws ProtocolError
// naming the problem: not JSON, not an object, an unknown `type`, a missing
// field or one of the wrong type or range, an unsupported protocol version.
Record ParseRecord(std::string_view line);

// Writes records to a stream, one line each, flushed after every record so
// that a reader sees everything up to a crash.
class RecordWriter {
 public:
  explicit RecordWriter(std::FILE* out) : out_(out) {}
  void Write(const Record& record);

 private:
  std::FILE* out_;
};

// Everything an engine printed, judged as a whole.
struct Transcript {
  std::optional<Hello> hello;
  std::vector<Step> steps;
  std::vector<Trace> traces;
  std::optional<Done> done;
  std::optional<Error> error;  // the engine's own error record
  // The engine's `unsupported` record: it cannot run this here. The
  // transcript is then not ok (`failure` says so), but the run did not fail.
  std::optional<Unsupported> unsupported;
  // False when the stream broke the protocol or reported an error; then
  // `failure` says why, for a person.
  bool ok = false;
  std::string failure;
};

// Reads a child's stdout line by line, checking the sequence: `hello`
// first and once, then `step` (indices 0, 1, 2 ...) and `trace` records,
// then `done` (whose `steps` must match) and nothing after it. An `error`
// record anywhere ends the run as failed, an `unsupported` record as not
// run (`Transcript::unsupported`). The first problem is kept.
class TranscriptReader {
 public:
  // Feeds one line (its trailing "\n" or "\r\n" removed or not).
  void FeedLine(std::string_view line);
  // Feeds a chunk of output that may hold partial lines.
  void Feed(std::string_view bytes);
  // Returns the transcript; a stream without `done` is a failure ("the
  // engine exited without a `done` record"), whatever the exit code was.
  Transcript Finish();
  // Whether a problem was found so far: the stream can no longer pass.
  bool failed() const { return failed_; }
  // What was read so far (a harness reading a served cell line by line:
  // whether `done`, an `error` or an `unsupported` record came).
  const Transcript& so_far() const { return transcript_; }

 private:
  void Fail(const std::string& why);

  Transcript transcript_;
  std::string pending_;
  int64_t line_number_ = 0;
  bool failed_ = false;
};

// Returns the transcript of a complete stdout text.
Transcript ReadTranscript(std::string_view text);

// Returns `value` as 16 lower-case hex digits.
std::string HashToHex(uint64_t value);
// Returns true and sets `*out` when `text` is exactly 16 lower-case hex digits.
bool ParseHashHex(std::string_view text, uint64_t* out);

}  // namespace samebits::protocol
