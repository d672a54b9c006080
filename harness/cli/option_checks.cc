// Parse-time checks of option values (option_checks.h).
#include "harness/cli/option_checks.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "harness/analysis/machine_name.h"

namespace samebits::cli {

CLI::Validator SecondsInRange(double max_seconds) {
  return CLI::Validator(
      [max_seconds](std::string& value) -> std::string {
        const std::string range = "a number of seconds above 0 and at most " +
                                  std::to_string(static_cast<long long>(max_seconds));
        char* end = nullptr;
        errno = 0;
        const double seconds = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE) {
          return "'" + value + "' is not a number; give " + range;
        }
        // NaN fails every comparison, so test for the good range, not the bad.
        if (!(std::isfinite(seconds) && seconds > 0 && seconds <= max_seconds)) {
          return "'" + value + "' is out of range; give " + range;
        }
        return "";
      },
      "");
}

CLI::Validator WholeNumberInRange(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        const std::string range =
            "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
        char* end = nullptr;
        errno = 0;
        const long long n = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE) {
          return "'" + value + "' is not " + range;
        }
        if (n < min || n > max) return "'" + value + "' is out of range; give " + range;
        return "";
      },
      "");
}

CLI::Validator FiniteNonNegativeNumber() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double x = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE ||
            !(std::isfinite(x) && x >= 0)) {
          return "'" + value + "' is not a finite number of at least 0";
        }
        return "";
      },
      "");
}

CLI::Validator ExistingFolder() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        std::error_code ec;
        if (std::filesystem::is_directory(value, ec)) return "";
        return "no such folder: " + value;
      },
      "");
}

CLI::Validator ValidMachineName() {
  return CLI::Validator(
      [](std::string& value) -> std::string { return harness::MachineNameProblem(value); }, "");
}

}  // namespace samebits::cli
