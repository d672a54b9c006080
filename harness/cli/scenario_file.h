// Which file `--scenario NAME|FILE` means, for the commands that take a
// scenario by name or path (card, conform).
#pragma once

#include <string>

namespace samebits::cli {

// Returns the file of scenario `name`: a path as given (made absolute),
// else scenarios/NAME.json of the project. Throws UsageError when it is
// neither.
std::string ScenarioFile(const std::string& name);

}  // namespace samebits::cli
