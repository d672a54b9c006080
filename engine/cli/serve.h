// `samebits-engine run --serve [ARGS...]`: runs many cells of one
// configuration in one process (PROTOCOL.md, "Serving several cells"), so
// a harness pays the process's start, its dynamic linking and the load of
// a synthetic checkpoint once per group of cells instead of once per cell.
//
// ARGS are the `run` arguments every cell shares (the configuration). Each
// line of stdin is one cell: a JSON array of the arguments that cell adds
// (`--checkpoint`, `--scenario`, `--dump-logits`). The cell is run as the
// command line `run ARGS... LINE...` would run it, through the very same
// parser and action, and prints exactly the records that command prints.
// A cell that ends with `done` leaves the process waiting for the next
// line; any other end (an `error` or `unsupported` record) ends the
// process with the exit code the command would have had, so a harness
// judges the failing cell as it judges a child of its own. The end of
// stdin ends the process with 0.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace samebits::cli {

// Returns true when `args` (the program's name first) is `run ... --serve
// ...`.
bool IsServeCommandLine(const std::vector<std::string>& args);

// Runs one whole command line (the program's name first); returns its exit
// code. Errors are its own to report.
using CommandLineRunner = std::function<int(const std::vector<std::string>& args)>;

// Reports a bad serving command line or request line (an `error` record
// and stderr); returns the exit code.
using ServeErrorReporter = std::function<int(const std::string& message)>;

// Serves the cells read from `in` as the header says; returns the exit
// code: 0 at the end of `in`, else the failing cell's (or 2 for a request
// line that is not a JSON array of strings, or that repeats a shared
// argument).
int ServeCells(const std::vector<std::string>& args, const CommandLineRunner& run, std::FILE* in,
               const ServeErrorReporter& report_error);

}  // namespace samebits::cli
