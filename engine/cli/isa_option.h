// The `--isa` option of `run` and `bench`: its values are the ISA table's
// names (engine/kernels/dispatch.cc), so a new ISA needs no change here.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "engine/kernels/kernels.h"

namespace samebits::cli {

// Adds `--isa auto|<every ISA name>` to `sub`, stored in `*isa`.
void AddIsaOption(CLI::App* sub, std::string* isa, const std::string& description);

// Returns the ISA `value` names (`auto`: the fastest available). Throws
// UsageError for an unknown name, or one this machine or build lacks,
// naming the ones that would do.
kernels::Isa ResolveIsaOption(const std::string& value);

}  // namespace samebits::cli
