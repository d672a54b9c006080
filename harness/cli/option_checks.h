// Parse-time checks of option values. Each refuses a value with a message
// naming the option and the range (CLI11 prints it; the program exits 2),
// so no command starts with a number it cannot honour: a NaN timeout that
// would switch the deadline off, an infinite one that would kill every
// child at once, zero or negative counts. The checks have no description,
// so they leave `--help` as it is.
#pragma once

#include <CLI/CLI.hpp>

namespace samebits::cli {

// The largest count accepted (threads, jobs, rounds): far above any machine
// this runs on, small enough that a typo is caught.
inline constexpr long long kMaxCount = 1024;
// The longest timeout accepted (a week). A child's deadline is kept in
// microseconds, so the bound also keeps it far from overflow.
inline constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600;

// Accepts a finite number of seconds above 0 and at most `max_seconds`.
CLI::Validator SecondsInRange(double max_seconds);

// Accepts a whole number from `min` to `max`.
CLI::Validator WholeNumberInRange(long long min, long long max);

// Accepts a finite number of at least 0 (a tolerance).
CLI::Validator FiniteNonNegativeNumber();

// Accepts the path of an existing folder.
CLI::Validator ExistingFolder();

// Accepts a machine name (harness/analysis/machine_name.h).
CLI::Validator ValidMachineName();

}  // namespace samebits::cli
