// The engine's input files in JSON (a scenario, a wisdom file) are read
// strictly: besides being valid JSON, no object may give a key twice (JSON
// keeps one of them silently, so a typo'd copy would be lost unseen).
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace samebits::run {

class StrictJsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Returns `text` parsed. Throws StrictJsonError, saying "not valid JSON:
// ..." or "the key 'K' is given twice in one object".
nlohmann::json ParseStrictJson(std::string_view text);

}  // namespace samebits::run
