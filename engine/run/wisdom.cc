#include "engine/run/wisdom.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "engine/run/input_file.h"
#include "engine/run/strict_json.h"
#include "engine/threads/thread_pool.h"

namespace samebits::run {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxTextLength = 256;
constexpr int kMostCores = 1 << 16;

// Throws the fault `what` of `file` at `where` ("entries[3].knobs").
[[noreturn]] void Fail(const std::string& file, const std::string& where, const std::string& what) {
  throw WisdomError("wisdom file " + file + ": " + (where.empty() ? "" : where + ": ") + what);
}

void CheckKeys(const json& object, const std::set<std::string>& allowed, const std::string& file,
               const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    if (allowed.count(key) == 0) Fail(file, where, "unknown key '" + key + "'");
  }
}

const json& Required(const json& object, const std::string& key, const std::string& file,
                     const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) Fail(file, where, "the key '" + key + "' is missing");
  return *it;
}

std::string Text(const json& object, const std::string& key, const std::string& file,
                 const std::string& where) {
  const json& v = Required(object, key, file, where);
  if (!v.is_string()) Fail(file, where, "'" + key + "' must be a string");
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty() || s.size() > kMaxTextLength) {
    Fail(file, where,
         "'" + key + "' must be 1 to " + std::to_string(kMaxTextLength) + " characters long");
  }
  return s;
}

int64_t Whole(const json& v, const std::string& what, int64_t min, int64_t max,
              const std::string& file, const std::string& where) {
  if (!v.is_number_integer()) Fail(file, where, what + " must be a whole number");
  // A number past int64's range parses as unsigned; it is out of range too.
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max)) {
    Fail(file, where, what + " must be from " + std::to_string(min) + " to " + std::to_string(max));
  }
  const int64_t n = v.get<int64_t>();
  if (n < min || n > max) {
    Fail(file, where, what + " must be from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return n;
}

model::KnobValues ParseKnobs(const json& knobs, const std::string& file, const std::string& where) {
  if (!knobs.is_object()) Fail(file, where, "must be an object of knob values");
  model::KnobValues values;
  for (const auto& [name, value] : knobs.items()) {
    const model::TuningKnob* knob = model::FindTuningKnob(name);
    if (knob == nullptr) Fail(file, where, "no tuning knob is named '" + name + "'");
    values[name] = Whole(value, "'" + name + "'", knob->min, knob->max, file, where);
  }
  return values;
}

WisdomEntry ParseEntry(const json& e, const std::string& file, const std::string& where) {
  if (!e.is_object()) Fail(file, where, "must be an object");
  CheckKeys(e, {"cpu", "isa", "cores", "weights", "quant_dot", "threads", "knobs", "measured"},
            file, where);
  WisdomEntry entry;
  entry.key.cpu = Text(e, "cpu", file, where);
  entry.key.isa = Text(e, "isa", file, where);
  entry.key.cores = static_cast<int>(
      Whole(Required(e, "cores", file, where), "'cores'", 1, kMostCores, file, where));
  entry.key.weights = Text(e, "weights", file, where);
  entry.key.quant_dot = Text(e, "quant_dot", file, where);
  if (entry.key.quant_dot != "exact" && entry.key.quant_dot != "int8") {
    Fail(file, where, "'quant_dot' must be \"exact\" or \"int8\"");
  }
  entry.key.threads = static_cast<int>(Whole(Required(e, "threads", file, where), "'threads'", 1,
                                             threads::kMaxThreads, file, where));
  entry.knobs = ParseKnobs(Required(e, "knobs", file, where), file, where + ".knobs");
  if (const auto it = e.find("measured"); it != e.end()) {
    if (!it->is_object()) Fail(file, where, "'measured' must be an object");
    entry.measured = *it;
  }
  return entry;
}

json KeyJson(const WisdomKey& key) {
  return json{{"cpu", key.cpu},
              {"isa", key.isa},
              {"cores", key.cores},
              {"weights", key.weights},
              {"quant_dot", key.quant_dot},
              {"threads", key.threads}};
}

}  // namespace

const WisdomEntry* Wisdom::Find(const WisdomKey& key) const {
  for (const WisdomEntry& e : entries) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

void Wisdom::Put(WisdomEntry entry) {
  for (WisdomEntry& e : entries) {
    if (e.key == entry.key) {
      e = std::move(entry);
      return;
    }
  }
  entries.push_back(std::move(entry));
}

Wisdom ParseWisdom(std::string_view text, const std::string& file) {
  json root;
  try {
    root = ParseStrictJson(text);
  } catch (const StrictJsonError& e) {
    Fail(file, "", e.what());
  }
  if (!root.is_object()) Fail(file, "", "the top level must be an object");
  CheckKeys(root, {"samebits_wisdom", "entries"}, file, "");
  const int64_t version = Whole(Required(root, "samebits_wisdom", file, ""), "'samebits_wisdom'", 1,
                                std::numeric_limits<int32_t>::max(), file, "");
  if (version > kWisdomVersion) {
    Fail(file, "",
         "version " + std::to_string(version) + " is newer than this engine reads (" +
             std::to_string(kWisdomVersion) + "); use a newer samebits-engine or tune again");
  }
  const json& entries = Required(root, "entries", file, "");
  if (!entries.is_array()) Fail(file, "", "'entries' must be an array");
  if (entries.size() > kMaxWisdomEntries) {
    Fail(file, "", "more than " + std::to_string(kMaxWisdomEntries) + " entries");
  }
  Wisdom wisdom;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string where = "entries[" + std::to_string(i) + "]";
    WisdomEntry entry = ParseEntry(entries[i], file, where);
    if (wisdom.Find(entry.key) != nullptr) {
      Fail(file, where,
           "a second entry for the same machine and work (" + KeyJson(entry.key).dump() + ")");
    }
    wisdom.entries.push_back(std::move(entry));
  }
  return wisdom;
}

Wisdom LoadWisdom(const std::string& path) {
  std::string text;
  try {
    text = ReadInputFile(path, kMaxWisdomBytes);
  } catch (const InputFileError& e) {
    Fail(path.empty() ? "''" : path, "", e.what());
  }
  return ParseWisdom(text, path);
}

std::string WisdomText(const Wisdom& wisdom) {
  json entries = json::array();
  for (const WisdomEntry& e : wisdom.entries) {
    json entry = KeyJson(e.key);
    entry["knobs"] = e.knobs;
    entry["measured"] = e.measured;
    entries.push_back(std::move(entry));
  }
  return json{{"samebits_wisdom", kWisdomVersion}, {"entries", std::move(entries)}}.dump(2) + "\n";
}

void SaveWisdom(const Wisdom& wisdom, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) Fail(path, "", "cannot create its folder: " + ec.message());
  }
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << WisdomText(wisdom);
    out.flush();
    if (!out) {
      fs::remove(temporary, ec);
      Fail(path, "", "cannot write " + temporary);
    }
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    fs::remove(temporary, ec);
    Fail(path, "", "cannot replace it: " + ec.message());
  }
}

std::string DefaultWisdomPath() {
  if (const char* env = std::getenv("SAMEBITS_WISDOM"); env != nullptr && *env != '\0') return env;
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache != nullptr && *cache == '/') {
    return std::string(cache) + "/samebits/wisdom.json";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    return std::string(home) + "/.cache/samebits/wisdom.json";
  }
  return "";
}

WisdomChoice ChooseWisdom(const std::string& flag, const WisdomKey& key) {
  WisdomChoice choice;
  if (flag == "none") return choice;
  std::string path = flag;
  if (path.empty()) {
    const char* env = std::getenv("SAMEBITS_WISDOM");
    path = DefaultWisdomPath();
    std::error_code ec;
    // Only the cache's file may be absent (no tuning yet: today's
    // defaults); one named by the flag or $SAMEBITS_WISDOM must be there,
    // and one that is there but is no readable wisdom is refused below,
    // never passed over.
    const bool named = env != nullptr && *env != '\0';
    if (path.empty() || (!named && !std::filesystem::exists(path, ec))) return choice;
  }
  const Wisdom wisdom = LoadWisdom(path);
  choice.file = path;
  if (const WisdomEntry* entry = wisdom.Find(key)) choice.entry = *entry;
  return choice;
}

json TuningRecord(const model::KnobValues& knobs, const WisdomChoice& wisdom) {
  json record{{"knobs", knobs}};
  if (!wisdom.file.empty()) {
    json used{{"file", wisdom.file}};
    used["entry"] = wisdom.entry ? KeyJson(wisdom.entry->key) : json(nullptr);
    record["wisdom"] = std::move(used);
  }
  return record;
}

}  // namespace samebits::run
