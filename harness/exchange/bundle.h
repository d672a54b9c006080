// Bundles: runs as a self-describing, versioned JSON document, to carry them
// from one machine's store to another's (`samebits export`, `import`,
// `compare`). A bundle holds, per run, the machine, and per cell the build,
// the math library and its fingerprint, every step's hashes, the
// activation traces and, where a raw logit dump exists, its statistics and
// (up to a size cap) its rows (bundle_dumps.h). It leaves out what only
// makes sense on the machine that made the run: the run's id in its store
// and the paths of the dump files.
//
//   {"format": "samebits-bundle", "version": 1,
//    "runs": [{"content_id": "<32 hex>", "started_at": ..., "machine": {..., "name"},
//              "shard": {"group", "index", "count"},
//              "diagnosis": {...}, "cells": [{..., "steps": [...], "traces": [...]}]}]}
//
// Each run carries a content id: the XXH3-128 of its canonical JSON (every
// field but the id itself and a dump's `rows_included` and `rows_base64`,
// which are bound to the run by its step hashes instead). Importing keys
// runs by it, so importing a bundle twice adds nothing, and a bundle whose
// content does not match its id (a damaged file, a field edited by hand)
// is refused. The id is unkeyed: it detects damage, not a deliberate edit
// (whoever edits a hash can recompute it). A bundle may also be signed with
// a shared key (bundle_signature.h), which detects any change made without
// the key.
//
// A bundle is untrusted input: ReadBundle caps its size, checks the format
// name and version, and checks every field's type and range, naming the file
// and the field ("b.json: runs[0].cells[3].steps[2].xxh3_64: expected 16
// hex digits").
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::exchange {

// A bundle that cannot be written or read; the message names the file.
class BundleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr const char* kBundleFormat = "samebits-bundle";
// Version 2 adds batched configurations: a config's `batch`,
// `batch_seed` and `batch_schedule`, a step's `batch` place and a
// divergence's `batch_place`, each present only when batched. Version 3
// adds a cell's `dump` (bundle_dumps.h). Version 4 adds the machine's
// `name` (harness/analysis/machine_name.h), written only when it is not the
// one the machine's description gives (a reader of an older bundle derives
// that one). Version 5 adds a run's `shard` ({"group", "index", "count"}:
// the sharded gate's shard the run is, so an imported shard counts in
// `samebits verdict --group`), written only for a shard. Version 6 adds a
// config's `quant_dot` (harness/analysis/numeric_profile.h), written only
// when it is not exact, so that an older samebits refuses an int8 cell
// rather than read it as an exact one. A bundle is written with the lowest
// version that holds what it carries (1 without batches, dumps, names,
// shards or int8 cells), so older samebits read every bundle they could;
// versions 1 to 6 are read.
inline constexpr int kBundleVersion = 6;
inline constexpr int kBatchBundleVersion = 2;
inline constexpr int kDumpBundleVersion = 3;
inline constexpr int kMachineNameBundleVersion = 4;
inline constexpr int kShardBundleVersion = 5;
inline constexpr int kQuantDotBundleVersion = 6;
inline constexpr int kOldestBundleVersion = 1;
// Bundles larger than this are refused before they are parsed.
inline constexpr uint64_t kMaxBundleBytes = 256ull << 20;

// Returns the run's content id (32 lower-case hex digits): equal for two
// runs exactly when their bundled forms are equal.
std::string ContentId(const harness::RunResult& run);

struct BundleKey;  // bundle_signature.h

// Returns the bundle of `runs` as JSON text, signed with `sign` when given.
std::string FormatBundle(const std::vector<harness::RunResult>& runs,
                         const BundleKey* sign = nullptr);

// Writes the bundle of `runs` (signed with `sign` when given) to `path`
// through a temporary file renamed over it, so a reader never sees half a
// bundle. Throws BundleError.
void WriteBundle(const std::vector<harness::RunResult>& runs, const std::string& path,
                 const BundleKey* sign = nullptr);

// Returns the runs in `text` (run ids 0, dump paths empty; a cell's `dump`
// as the bundle carried it). `file` names it in errors. With `verify`, the
// bundle must carry a signature made with that key over its unchanged
// content (CheckBundleSignature), checked before anything else is read.
// Throws BundleError.
std::vector<harness::RunResult> ParseBundle(const std::string& text, const std::string& file,
                                            const BundleKey* verify = nullptr);

// Returns the runs in the bundle file `path`, refusing one over `max_bytes`
// and, with `verify`, one not signed with that key (ParseBundle). Throws
// BundleError.
std::vector<harness::RunResult> ReadBundle(const std::string& path,
                                           uint64_t max_bytes = kMaxBundleBytes,
                                           const BundleKey* verify = nullptr);

}  // namespace samebits::exchange
