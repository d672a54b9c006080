// A suite: a file that pairs checkpoints with the scenarios that fit them
// (scenarios/real/suite.json pairs the real files in ../shared/checkpoints
// with the scenarios whose token ids their vocabularies hold). A matrix over
// every checkpoint x every scenario cannot express that, because a scenario
// written for a 32000-token vocabulary is out of range for a 512-token one.
//
// The file:
//
//   {"description": "...",
//    "pairs": [{"checkpoint": "gguf:../shared/checkpoints/stories260K.gguf",
//               "scenarios": ["llamacpp-seq-512", "text-story"]}, ...]}
//
// A checkpoint spec's file is written relative to the suite file's folder
// (as a scenario is), and a --checkpoint given on the command line is
// relative to the working folder, as for every command-line tool. Either
// way the harness hands the engine the absolute file, and keys results (in
// the store and the references) by the spec with its file relative to the
// project root (CheckpointKey), so references depend neither on the
// caller's working folder nor on where the clone lies, and one file has one
// key however it was named. Scenario names are files next to the suite file
// (`NAME.json`).
#pragma once

#include <string>
#include <vector>

#include "harness/runner/matrix.h"

namespace samebits::runner {

struct SuitePair {
  std::string checkpoint;  // the spec as written in the suite (its file relative to the suite's)
  std::vector<std::string> scenario_files;  // paths, next to the suite file
};

struct Suite {
  std::string file;
  std::vector<SuitePair> pairs;
};

// Returns the suite in `path`. Throws std::invalid_argument naming the file
// and the problem (unreadable, not JSON, a missing field, a scenario file
// that does not exist, a checkpoint listed twice).
Suite LoadSuite(const std::string& path);

// The name a suite file has inside a scenarios folder. A folder listing
// skips it: it pairs checkpoints with the folder's scenarios and is not a
// scenario itself.
inline constexpr const char* kSuiteFileName = "suite.json";

// A checkpoint spec split into its format prefix and its file.
struct ResolvedCheckpoint {
  // The key results are stored and referenced by: the spec with its file
  // relative to the project root ("gguf:../shared/checkpoints/x.gguf"), or
  // absolute when the file lies farther away than the root's parent; a spec
  // that names no file as it is.
  std::string key;
  std::string engine_spec;  // what the engine is given: the file absolute
  std::string file;         // the file or folder it names; empty for synthetic:
  bool exists = true;       // whether `file` exists (true when there is none)
};

// Returns whether `spec` names a file: "gguf:PATH", "llama2c:PATH",
// "safetensors:DIR" or a bare path, as opposed to "synthetic:NAME" or
// another engine's own "scheme:NAME".
bool NamesFile(const std::string& spec);

// Returns `spec` with a relative PATH resolved against `base_dir`, its key
// for the project at `root`, and whether the file is there.
ResolvedCheckpoint ResolveCheckpoint(const std::string& spec, const std::string& base_dir,
                                     const std::string& root);

// Returns the checkpoint of `pair` resolved against the folder of the suite
// file (ResolveCheckpoint).
ResolvedCheckpoint ResolveSuiteCheckpoint(const Suite& suite, const SuitePair& pair,
                                          const std::string& root);

// Returns the cells of the suite: each pair's checkpoint x its scenarios x
// the configurations `options` selects (its checkpoints and scenario_files
// are ignored), keyed by the checkpoints' keys. `checkpoints` (keys, as
// ResolveCheckpoint gives them) and `scenarios` (names or paths, compared by
// name), when not empty, narrow the suite to the pairs they name; naming one
// the suite does not hold throws std::invalid_argument. A checkpoint whose
// file is missing makes all its cells UNSUPPORTED with a reason naming the
// file and where it was looked for.
std::vector<Cell> ExpandSuite(const Suite& suite, const MatrixOptions& options,
                              const std::vector<std::string>& checkpoints,
                              const std::vector<std::string>& scenarios, const std::string& root);

}  // namespace samebits::runner
