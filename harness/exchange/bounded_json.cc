// JSON within limits (bounded_json.h).
#include "harness/exchange/bounded_json.h"

#include <algorithm>
#include <new>
#include <stdexcept>

namespace samebits::exchange {
namespace {

using nlohmann::json;

// Thrown by the parser callback to stop at the first limit passed.
class LimitPassed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Rough costs of nlohmann's representation on a 64-bit library: a value,
// an object's map and each of its members, an array's vector (doubling).
constexpr uint64_t kValueBytes = 16;
constexpr uint64_t kObjectBytes = 48;
constexpr uint64_t kMemberBytes = 96;
constexpr uint64_t kStringBytes = 32;

}  // namespace

JsonLimits LimitsForSize(uint64_t text_bytes) {
  JsonLimits limits;
  const uint64_t scaled =
      text_bytes > (limits.max_memory_bytes / 8) ? limits.max_memory_bytes : text_bytes * 8;
  limits.max_memory_bytes = std::max<uint64_t>(64ull << 20, scaled);
  return limits;
}

json ParseBoundedJson(const std::string& text, const JsonLimits& limits) {
  uint64_t values = 0, memory = 0;
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event,
                                            json& parsed) -> bool {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= limits.max_depth)
          throw LimitPassed("nested deeper than " + std::to_string(limits.max_depth) + " levels");
        memory += kValueBytes * 2 + kObjectBytes;  // the value, vector slack, the container
        break;
      case json::parse_event_t::key:
        memory += kMemberBytes + parsed.get_ref<const std::string&>().size();
        break;
      case json::parse_event_t::value:
        memory += kValueBytes * 2;
        if (parsed.is_string())
          memory += kStringBytes + parsed.get_ref<const std::string&>().size();
        break;
      default:
        return true;
    }
    if (++values > limits.max_values)
      throw LimitPassed("more than " + std::to_string(limits.max_values) + " values");
    if (memory > limits.max_memory_bytes)
      throw LimitPassed("would take more than " + std::to_string(limits.max_memory_bytes >> 20) +
                        " MiB of memory to read");
    return true;
  };
  try {
    return json::parse(text, check);
  } catch (const LimitPassed& e) {
    throw std::runtime_error(std::string("refused while reading: ") + e.what());
  } catch (const json::out_of_range& e) {
    throw std::runtime_error(std::string("a number is out of range: ") + e.what());
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("not valid JSON, or truncated: ") + e.what());
  } catch (const std::bad_alloc&) {
    throw std::runtime_error("too large to read in the memory this process may use");
  }
}

}  // namespace samebits::exchange
