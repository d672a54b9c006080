// Serving several cells in one process (serve.h).
#include "engine/cli/serve.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "engine/cli/commands.h"

namespace samebits::cli {
namespace {

constexpr const char* kServeFlag = "--serve";

// The arguments only a cell's line may give: the cell, not the configuration.
bool IsCellArgument(const std::string& arg) {
  for (const char* name : {"--checkpoint", "--scenario", "--dump-logits"}) {
    const std::string n = name;
    if (arg == n || arg.rfind(n + "=", 0) == 0) return true;
  }
  return false;
}

// Reads one line of `in` without its newline; false at the end.
bool ReadLine(std::FILE* in, std::string* line) {
  line->clear();
  int c;
  while ((c = std::fgetc(in)) != EOF) {
    if (c == '\n') return true;
    line->push_back(static_cast<char>(c));
  }
  return !line->empty();
}

}  // namespace

bool IsServeCommandLine(const std::vector<std::string>& args) {
  return args.size() > 1 && args[1] == "run" &&
         std::find(args.begin() + 2, args.end(), kServeFlag) != args.end();
}

int ServeCells(const std::vector<std::string>& args, const CommandLineRunner& run, std::FILE* in,
               const ServeErrorReporter& report_error) {
  std::vector<std::string> shared;
  for (const std::string& a : args) {
    if (a == kServeFlag) continue;
    if (IsCellArgument(a)) {
      return report_error("run --serve: " + a +
                          " is a cell's argument, given on each line of stdin, not on the command "
                          "line");
    }
    shared.push_back(a);
  }
  // Cells of one synthetic checkpoint in a row load it once (commands.h).
  KeepLastSyntheticCheckpoint();
  std::string line;
  long number = 0;
  while (ReadLine(in, &line)) {
    ++number;
    const std::string where = "run --serve: stdin line " + std::to_string(number) + ": ";
    nlohmann::json request;
    try {
      request = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
      return report_error(where + "not JSON (expected an array of the cell's arguments)");
    }
    if (!request.is_array()) {
      return report_error(where + "expected a JSON array of the cell's arguments");
    }
    std::vector<std::string> cell = shared;
    for (const nlohmann::json& arg : request) {
      if (!arg.is_string()) return report_error(where + "every argument must be a string");
      const std::string a = arg.get<std::string>();
      if (a == kServeFlag) return report_error(where + "a cell cannot ask for --serve");
      cell.push_back(a);
    }
    const int code = run(cell);
    std::fflush(stdout);
    std::fflush(stderr);
    if (code != 0) return code;
  }
  return 0;
}

}  // namespace samebits::cli
