#include "engine/run/strict_json.h"

#include <set>
#include <string>
#include <vector>

namespace samebits::run {

nlohmann::json ParseStrictJson(std::string_view text) {
  using json = nlohmann::json;
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  const json::parser_callback_t no_duplicates = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open_objects.emplace_back();
    if (event == json::parse_event_t::object_end && !open_objects.empty()) open_objects.pop_back();
    if (event == json::parse_event_t::key && !open_objects.empty() && duplicate.empty() &&
        !open_objects.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json root;
  try {
    root = json::parse(text, no_duplicates);
  } catch (const json::parse_error& e) {
    throw StrictJsonError(std::string("not valid JSON: ") + e.what());
  }
  if (!duplicate.empty()) {
    throw StrictJsonError("the key '" + duplicate + "' is given twice in one object");
  }
  return root;
}

}  // namespace samebits::run
