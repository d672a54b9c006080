// A run named on the command line the way `samebits compare` and `samebits
// conform` take their operands: a run id in the store (or `latest`), a
// machine's newest run in the store (machine:NAME), a database file (its
// latest run) or a bundle file (its last run).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "harness/analysis/results.h"

namespace samebits::exchange {
struct BundleKey;
}

namespace samebits::cli {

// The operand prefix that names a machine's newest run in the store
// ("machine:ci-arm64"); a file whose name starts with it is given as
// ./machine:...
inline constexpr std::string_view kMachinePrefix = "machine:";

struct RunOperand {
  harness::RunResult run;
  std::string label;  // how reports name it: "run 3 of other.db", "bundle x86.json"
};

// Returns the run `which` names; run ids are read from the store `db`
// (empty: the default). With `verify`, a bundle must be signed with that
// key (exchange/bundle_signature.h) and a database file is refused (it
// carries no signature); a run id names the local store's own run. Throws
// UsageError for an operand that is none of these, or a bundle without
// runs, and exchange::BundleError for a bundle that does not verify.
RunOperand LoadRunOperand(const std::string& which, const std::string& db,
                          const exchange::BundleKey* verify = nullptr);

// Adds the operands A and B (required, declared inputs) and --db (the
// store run ids are read from, declared read-only) to `sub`; with
// `engines`, their help also offers engine:NAME (conform_engines.h).
void AddRunOperands(CLI::App* sub, std::string& a, std::string& b, std::string& db,
                    bool engines = false);

}  // namespace samebits::cli
