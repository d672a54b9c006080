// Reference files (references.h).
#include "harness/analysis/references.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "engine/numerics/hash.h"
#include "harness/analysis/compare.h"

namespace samebits::harness {
namespace {

std::string Encode(std::string_view field) {
  std::string out;
  for (char c : field) {
    switch (c) {
      case ' ':
        out += "%20";
        break;
      case '\t':
        out += "%09";
        break;
      case '\n':
        out += "%0A";
        break;
      case '\r':
        out += "%0D";
        break;
      case '%':
        out += "%25";
        break;
      default:
        out += c;
    }
  }
  return out.empty() ? "%" : out;  // "%" alone stands for an empty field.
}

bool Decode(std::string_view field, std::string* out) {
  out->clear();
  if (field == "%") return true;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '%') {
      *out += field[i];
      continue;
    }
    if (i + 2 >= field.size()) return false;
    const std::string hex(field.substr(i + 1, 2));
    if (!std::isxdigit(static_cast<unsigned char>(hex[0])) ||
        !std::isxdigit(static_cast<unsigned char>(hex[1]))) {
      return false;
    }
    *out += static_cast<char>(std::stoi(hex, nullptr, 16));
    i += 2;
  }
  return true;
}

std::vector<std::string_view> SplitSpaces(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= line.size()) {
    size_t end = line.find(' ', start);
    if (end == std::string_view::npos) end = line.size();
    out.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool ParseInt(std::string_view text, int* out) {
  if (text.empty() || text.size() > 10) return false;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value > 2147483647) return false;
  *out = static_cast<int>(value);
  return true;
}

// Lower-case digits only, the project's one rule (numerics::ParseHex16).
bool ParseHex(std::string_view text, uint64_t* out) {
  return numerics::ParseHex16(text, out);
}

auto SortKey(const ReferenceLine& l) {
  return std::tie(l.checkpoint, l.scenario, l.step);
}

}  // namespace

bool ReferenceGroup::Has(const std::string& checkpoint, const std::string& scenario) const {
  return std::any_of(lines.begin(), lines.end(), [&](const ReferenceLine& l) {
    return l.checkpoint == checkpoint && l.scenario == scenario;
  });
}

std::vector<StepRecord> ReferenceGroup::Steps(const std::string& checkpoint,
                                              const std::string& scenario) const {
  std::vector<StepRecord> out;
  for (const ReferenceLine& l : lines) {
    if (l.checkpoint != checkpoint || l.scenario != scenario) continue;
    StepRecord s;
    s.index = l.step;
    s.kind = l.kind;
    s.position = l.position;
    s.token = l.token;
    s.fnv1a64 = l.fnv1a64;
    s.xxh3_64 = l.xxh3_64;
    out.push_back(s);
  }
  std::sort(out.begin(), out.end(),
            [](const StepRecord& a, const StepRecord& b) { return a.index < b.index; });
  return out;
}

std::vector<StepRecord> AsReferenceSteps(const std::vector<StepRecord>& steps) {
  std::vector<StepRecord> out = steps;
  for (StepRecord& s : out) {
    s.input_token = 0;
    s.argmax = 0;
    s.nan_count = 0;
    s.inf_count = 0;
  }
  return out;
}

std::string ReferenceGroupKey(const NumericProfile& profile, const std::string& arch,
                              const std::string& engine) {
  std::string key = ProfileName(profile);
  if (profile.math != kPortableMath) key += "-" + (arch.empty() ? "unknown" : arch);
  return engine.empty() || engine == "samebits" ? key : engine + "/" + key;
}

ReferenceGroupKeyParts ParseReferenceGroupKey(const std::string& key) {
  ReferenceGroupKeyParts parts;
  const size_t slash = key.find('/');
  const std::string group = slash == std::string::npos ? key : key.substr(slash + 1);
  if (slash != std::string::npos) parts.engine = key.substr(0, slash);
  if (const std::optional<NumericProfile> p = ParseProfileName(group, &parts.arch)) {
    parts.profile = *p;
  }
  return parts;
}

std::string ReferenceFileName(const std::string& key) {
  return key + ".txt";
}

namespace {

// Returns the data line `checkpoint scenario step kind position token
// fnv1a64 xxh3_64` split into `f`; throws what `fail` makes of a bad field.
template <typename Fail>
ReferenceLine ParseDataLine(const std::vector<std::string_view>& f, const Fail& fail) {
  if (f.size() != 8) {
    throw fail(
        "expected 8 fields (checkpoint scenario step kind position token fnv1a64 "
        "xxh3_64), found " +
        std::to_string(f.size()));
  }
  ReferenceLine l;
  if (!Decode(f[0], &l.checkpoint) || l.checkpoint.empty()) throw fail("bad checkpoint field");
  if (!Decode(f[1], &l.scenario) || l.scenario.empty()) throw fail("bad scenario field");
  if (!ParseInt(f[2], &l.step))
    throw fail("step must be a non-negative integer, not '" + std::string(f[2]) + "'");
  l.kind = std::string(f[3]);
  if (l.kind != "prefill" && l.kind != "decode" && l.kind != "extend") {
    throw fail("kind must be prefill, decode or extend, not '" + l.kind + "'");
  }
  if (!ParseInt(f[4], &l.position)) throw fail("position must be a non-negative integer");
  if (!ParseInt(f[5], &l.token)) throw fail("token must be a non-negative integer");
  if (!ParseHex(f[6], &l.fnv1a64)) throw fail("fnv1a64 must be 16 lower-case hex digits");
  if (!ParseHex(f[7], &l.xxh3_64)) throw fail("xxh3_64 must be 16 lower-case hex digits");
  return l;
}

// Throws ReferenceError unless each pair's steps are 0, 1, 2 ... with none
// missing.
void CheckNoStepIsMissing(const ReferenceGroup& group, const std::string& file) {
  std::vector<ReferenceLine> sorted = group.lines;
  std::sort(sorted.begin(), sorted.end(),
            [](const ReferenceLine& a, const ReferenceLine& b) { return SortKey(a) < SortKey(b); });
  for (size_t i = 0; i < sorted.size(); ++i) {
    const bool first = i == 0 || sorted[i - 1].checkpoint != sorted[i].checkpoint ||
                       sorted[i - 1].scenario != sorted[i].scenario;
    const int expected = first ? 0 : sorted[i - 1].step + 1;
    if (sorted[i].step != expected) {
      throw ReferenceError(file + ": " + sorted[i].checkpoint + " " + sorted[i].scenario +
                           ": step " + std::to_string(expected) + " is missing");
    }
  }
}

}  // namespace

ReferenceGroup ParseReferenceGroup(std::string_view text, const std::string& file) {
  ReferenceGroup group;
  bool saw_format = false;
  bool saw_group = false;
  bool saw_math = false;
  int line_number = 0;
  auto fail = [&](const std::string& why) -> ReferenceError {
    return ReferenceError(file + ":" + std::to_string(line_number) + ": " + why);
  };
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string_view> f = SplitSpaces(line);
    if (f[0] == "format") {
      int version = 0;
      if (f.size() != 2 || !ParseInt(f[1], &version)) throw fail("expected `format <number>`");
      if (version != kReferenceFormat) {
        throw fail("format " + std::string(f[1]) + " is not one this samebits reads (" +
                   std::to_string(kReferenceFormat) + ")");
      }
      saw_format = true;
      continue;
    }
    if (!saw_format) throw fail("the first line that is not a comment must be `format 1`");
    if (f[0] == "group") {
      if (f.size() != 2 || !Decode(f[1], &group.key) || group.key.empty()) {
        throw fail("expected `group <key>`");
      }
      if (saw_group) throw fail("a second `group` line; one file holds one group");
      saw_group = true;
      continue;
    }
    if (f[0] == "math-library") {
      uint64_t fingerprint = 0;
      if (f.size() != 4 || !Decode(f[1], &group.math.name) || !Decode(f[2], &group.math.version) ||
          !ParseHex(f[3], &fingerprint)) {
        throw fail("expected `math-library <name> <version> <16 hex digit fingerprint>`");
      }
      group.math.fingerprint = std::string(f[3]);
      if (saw_math) throw fail("a second `math-library` line");
      saw_math = true;
      continue;
    }
    if (f[0] == "revision") {
      if (f.size() != 2 || !Decode(f[1], &group.revision)) throw fail("expected `revision <rev>`");
      continue;
    }
    ReferenceLine l = ParseDataLine(f, fail);
    if (!saw_group || !saw_math) {
      throw fail("a data line before the `group` and `math-library` lines");
    }
    for (const ReferenceLine& other : group.lines) {
      if (other.checkpoint == l.checkpoint && other.scenario == l.scenario &&
          other.step == l.step) {
        throw fail("step " + std::to_string(l.step) + " of " + l.checkpoint + " " + l.scenario +
                   " appears twice");
      }
    }
    group.lines.push_back(std::move(l));
  }
  if (!saw_format) throw ReferenceError(file + ": empty (no `format` line)");
  if (!saw_group) throw ReferenceError(file + ": no `group` line");
  if (!saw_math) throw ReferenceError(file + ": no `math-library` line");
  CheckNoStepIsMissing(group, file);
  const ReferenceGroupKeyParts parts = ParseReferenceGroupKey(group.key);
  group.math.profile = parts.profile.math;
  group.quant_dot = parts.profile.quant_dot;
  return group;
}

std::string FormatReferenceGroup(const ReferenceGroup& group) {
  std::vector<ReferenceLine> lines = group.lines;
  std::sort(lines.begin(), lines.end(),
            [](const ReferenceLine& a, const ReferenceLine& b) { return SortKey(a) < SortKey(b); });
  std::ostringstream out;
  out << "# samebits references: the outputs the identity gate expects, for one math profile\n"
         "# and platform. Written by `samebits reference generate`; review changes as a diff,\n"
         "# never edit by hand. Data lines: checkpoint scenario step kind position token\n"
         "# fnv1a64 xxh3_64 (hashes of the logits' IEEE bits, as the protocol's `step` record).\n";
  out << "format " << kReferenceFormat << "\n";
  out << "group " << Encode(group.key) << "\n";
  out << "math-library " << Encode(group.math.name) << " " << Encode(group.math.version) << " "
      << group.math.fingerprint << "\n";
  if (!group.revision.empty()) out << "revision " << Encode(group.revision) << "\n";
  for (const ReferenceLine& l : lines) {
    out << Encode(l.checkpoint) << " " << Encode(l.scenario) << " " << l.step << " " << l.kind
        << " " << l.position << " " << l.token << " " << Hex16(l.fnv1a64) << " " << Hex16(l.xxh3_64)
        << "\n";
  }
  return out.str();
}

std::optional<ReferenceGroup> LoadReferenceGroup(const std::string& dir, const std::string& key) {
  const std::filesystem::path path = std::filesystem::path(dir) / ReferenceFileName(key);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReferenceError(path.string() + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  ReferenceGroup group = ParseReferenceGroup(text.str(), path.string());
  if (group.key != key) {
    throw ReferenceError(path.string() + ": holds group '" + group.key + "', expected '" + key +
                         "'");
  }
  return group;
}

void SaveReferenceGroup(const std::string& dir, const ReferenceGroup& group) {
  std::error_code ec;
  const std::filesystem::path path = std::filesystem::path(dir) / ReferenceFileName(group.key);
  // Another engine's groups live in a folder of their own (ReferenceGroupKey).
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) throw ReferenceError(dir + ": cannot create the folder: " + ec.message());
  const std::filesystem::path temp = path.string() + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << FormatReferenceGroup(group);
    if (!out) throw ReferenceError(temp.string() + ": cannot be written");
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) throw ReferenceError(path.string() + ": cannot be replaced: " + ec.message());
}

}  // namespace samebits::harness
