// JSON within limits (bounded_json.h).
//
// The document is read twice: once by a SAX handler that builds nothing and
// only measures (depth, values, an estimate of the memory the document will
// take), then, when it is within every limit, by nlohmann's ordinary parser.
// nlohmann's callback parser (json::parse with a callback), which would do
// both in one pass, is quadratic: after each object or array it walks every
// element of the one that holds it, looking for values the callback
// discarded, so an array of a million `{}` took minutes. The measuring
// pass also refuses repeated keys, which the ordinary parser would resolve
// silently to the last.
#include "harness/analysis/bounded_json.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <new>
#include <stdexcept>
#include <unordered_set>
#include <vector>

namespace samebits::harness {
namespace {

namespace fs = std::filesystem;

using nlohmann::json;

// Thrown by the measuring pass at the first limit passed.
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

// Counts what the document would cost without building it. Each method
// returns true to go on; a limit passed throws LimitPassed, a syntax error
// keeps nlohmann's exception for the caller.
class MeasuringSax final : public nlohmann::json_sax<json> {
 public:
  explicit MeasuringSax(const JsonLimits& limits) : limits_(limits) {}

  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t& text) override {
    memory_ += kStringBytes + text.size();
    return Value();
  }
  bool binary(binary_t& bytes) override {
    memory_ += kStringBytes + bytes.size();
    return Value();
  }
  bool start_object(std::size_t) override { return Open(true); }
  bool key(string_t& name) override {
    memory_ += kMemberBytes + name.size();
    Frame& object = frames_.back();
    if (!object.keys.insert(name).second) {
      throw LimitPassed("the key \"" + name + "\" appears twice in the object at " +
                        (frames_.size() == 1 ? std::string("the top") : "/" + Pointer()) +
                        " (a reader would take the last; write each key once)");
    }
    object.key = name;
    return Count();
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(false); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    // 4xx are nlohmann's out_of_range errors (a number such as 1e400).
    error_ = (e.id >= 400 && e.id < 500 ? "a number is out of range: "
                                        : "not valid JSON, or truncated: ") +
             std::string(e.what());
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  // An open object (its keys so far, the last one) or array (its elements
  // so far), for refusing a repeated key and saying where it was.
  struct Frame {
    bool object = false;
    std::unordered_set<std::string> keys;
    std::string key;
    uint64_t elements = 0;
  };

  // Counts a new element of the array that holds it, if an array does.
  void Element() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().elements;
  }
  // Returns the JSON pointer of the innermost open object, without its
  // leading slash ("axes/0").
  std::string Pointer() const {
    std::string out;
    for (size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      out += (i > 0 ? "/" : "") + (f.object ? f.key : std::to_string(f.elements - 1));
    }
    return out;
  }
  bool Value() {
    Element();
    memory_ += kValueBytes * 2;
    return Count();
  }
  bool Open(bool object) {
    Element();
    if (++depth_ > limits_.max_depth)
      throw LimitPassed("nested deeper than " + std::to_string(limits_.max_depth) + " levels");
    memory_ += kValueBytes * 2 + kObjectBytes;  // the value, vector slack, the container
    frames_.push_back(Frame{object, {}, {}, 0});
    return Count();
  }
  bool Close() {
    --depth_;
    frames_.pop_back();
    return true;
  }
  bool Count() {
    if (++values_ > limits_.max_values)
      throw LimitPassed("more than " + std::to_string(limits_.max_values) + " values");
    if (memory_ > limits_.max_memory_bytes)
      throw LimitPassed("would take more than " + std::to_string(limits_.max_memory_bytes >> 20) +
                        " MiB of memory to read");
    return true;
  }

  const JsonLimits& limits_;
  int depth_ = 0;
  uint64_t values_ = 0, memory_ = 0;
  std::vector<Frame> frames_;
  std::string error_;
};

}  // namespace

JsonLimits LimitsForSize(uint64_t text_bytes) {
  JsonLimits limits;
  const uint64_t scaled =
      text_bytes > (limits.max_memory_bytes / 8) ? limits.max_memory_bytes : text_bytes * 8;
  limits.max_memory_bytes = std::max<uint64_t>(64ull << 20, scaled);
  return limits;
}

json ParseBoundedJson(const std::string& text, const JsonLimits& limits) {
  try {
    MeasuringSax measure(limits);
    if (!json::sax_parse(text, &measure)) throw std::runtime_error(measure.error());
    return json::parse(text);
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

std::string ReadBoundedFile(const std::string& path, uint64_t max_bytes) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw std::runtime_error("no such file");
  if (fs::is_directory(status)) throw std::runtime_error("is a folder, not a file");
  const std::string limit = "the " + std::to_string(max_bytes) + "-byte limit";
  if (fs::is_regular_file(status)) {
    const uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > max_bytes)
      throw std::runtime_error(std::to_string(size) + " bytes is larger than " + limit);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot be read");
  // A pipe or a device has no size: read up to one byte past the limit.
  try {
    std::string text;
    char buffer[65536];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
      text.append(buffer, static_cast<size_t>(in.gcount()));
      if (text.size() > max_bytes)
        throw std::runtime_error("more than " + limit + " (read no further)");
    }
    if (in.bad()) throw std::runtime_error("cannot be read (an I/O error)");
    return text;
  } catch (const std::bad_alloc&) {
    throw std::runtime_error("too large to read in the memory this process may use");
  }
}

nlohmann::json ReadJsonFile(const std::string& path, const std::string& what, uint64_t max_bytes) {
  try {
    const std::string text = ReadBoundedFile(path, max_bytes);
    return ParseBoundedJson(text, LimitsForSize(text.size()));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(what + " " + path + ": " + e.what());
  }
}

}  // namespace samebits::harness
