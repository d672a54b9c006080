// The layer checker (include_layers.h).
#include "tests/harness/include_layers.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace samebits::layers {
namespace {

namespace fs = std::filesystem;

// Returns `line` without its `#` comment and surrounding blanks.
std::vector<std::string> Words(std::string line) {
  const size_t hash = line.find('#');
  if (hash != std::string::npos) line.resize(hash);
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Returns the folder a path is in: its first two components
// ("harness/runner/x.h" -> "harness/runner"), or "" for fewer.
std::string FolderOf(const std::string& path) {
  const size_t first = path.find('/');
  if (first == std::string::npos) return "";
  const size_t second = path.find('/', first + 1);
  if (second == std::string::npos) return "";
  return path.substr(0, second);
}

// Returns the layer line `folder` is on, for messages ("harness/store
// harness/report").
std::string LineOf(const LayerOrder& order, const std::string& folder) {
  for (const auto& line : order.lines) {
    if (std::find(line.begin(), line.end(), folder) == line.end()) continue;
    std::string out;
    for (const std::string& f : line) out += (out.empty() ? "" : " ") + f;
    return out;
  }
  return "";
}

// Returns why `file`'s folder may not include `included`'s, or "" when it
// may.
std::string RuleBroken(const LayerOrder& order, const std::string& file,
                       const std::string& included) {
  const std::string from = FolderOf(file);
  const std::string to = FolderOf(included);
  if (to.empty()) return "not a path inside a folder of engine/ or harness/";
  if (from == to) return "";
  const auto from_rank = order.rank.find(from);
  if (from_rank == order.rank.end()) return "";  // CheckIncludes names the file's folder once
  const auto to_rank = order.rank.find(to);
  if (to_rank == order.rank.end()) {
    return "folder " + to + " is in no layer: add it to tests/harness/layers.txt";
  }
  for (const LayerOrder::Only& only : order.only) {
    if (file.rfind(only.prefix, 0) != 0 || included.rfind(only.prefix, 0) == 0) continue;
    if (std::find(only.allowed.begin(), only.allowed.end(), to) == only.allowed.end()) {
      std::string allowed;
      for (const std::string& a : only.allowed) allowed += (allowed.empty() ? "" : ", ") + a;
      return from + " may use outside " + only.prefix + " only " + allowed;
    }
  }
  if (to_rank->second == from_rank->second) {
    return from + " and " + to + " are peers (one layer: " + LineOf(order, from) +
           ") and may not include each other";
  }
  if (to_rank->second > from_rank->second) {
    return from + " may not include " + to + ", a layer above it (" + LineOf(order, to) +
           " is above " + LineOf(order, from) + ")";
  }
  return "";
}

// Adds the project includes of `path` (relative `rel`) to `result`.
void CheckFile(const fs::path& path, const std::string& rel, const LayerOrder& order,
               CheckResult& result) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*"((engine|harness)/[^"]*)\")");
  std::ifstream in(path);
  std::string text;
  int line_number = 0;
  ++result.files;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    std::smatch m;
    if (!std::regex_search(line, m, kInclude)) continue;
    ++result.includes;
    const std::string rule = RuleBroken(order, rel, m[1].str());
    if (!rule.empty()) result.violations.push_back({rel, line_number, m[1].str(), rule});
  }
}

}  // namespace

LayerOrder ParseLayerOrder(const std::string& text) {
  LayerOrder order;
  std::istringstream in(text);
  std::vector<std::vector<std::string>> lines;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    std::vector<std::string> words = Words(line);
    if (words.empty()) continue;
    if (words[0] == "only") {
      if (words.size() < 3) {
        throw std::runtime_error("layers line " + std::to_string(number) +
                                 ": `only` needs a prefix and at least one folder");
      }
      order.only.push_back({words[1], {words.begin() + 2, words.end()}});
      continue;
    }
    for (const std::string& folder : words) {
      if (FolderOf(folder + "/x") != folder) {
        throw std::runtime_error("layers line " + std::to_string(number) + ": '" + folder +
                                 "' is not a folder such as engine/model");
      }
      for (const auto& earlier : lines) {
        if (std::find(earlier.begin(), earlier.end(), folder) != earlier.end()) {
          throw std::runtime_error("layers line " + std::to_string(number) + ": '" + folder +
                                   "' is already in a layer above");
        }
      }
    }
    lines.push_back(std::move(words));
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    for (const std::string& folder : lines[i]) {
      order.rank[folder] = static_cast<int>(lines.size() - 1 - i);
    }
  }
  order.lines = std::move(lines);
  return order;
}

CheckResult CheckIncludes(const std::string& root, const LayerOrder& order) {
  CheckResult result;
  for (const char* top : {"engine", "harness"}) {
    const fs::path dir = fs::path(root) / top;
    if (!fs::is_directory(dir)) continue;
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
      const std::string rel = fs::relative(e.path(), root).generic_string();
      if (!FolderOf(rel).empty() && order.rank.count(FolderOf(rel)) == 0) {
        result.violations.push_back({rel, 0, "",
                                     "folder " + FolderOf(rel) +
                                         " is in no layer: add it to "
                                         "tests/harness/layers.txt"});
      }
      CheckFile(e.path(), rel, order, result);
    }
  }
  std::sort(result.violations.begin(), result.violations.end(),
            [](const Violation& a, const Violation& b) {
              return std::tie(a.file, a.line) < std::tie(b.file, b.line);
            });
  return result;
}

std::string Describe(const Violation& v) {
  std::string out = v.file + ":" + std::to_string(v.line) + ": ";
  if (!v.included.empty()) out += "includes \"" + v.included + "\": ";
  return out + v.rule;
}

}  // namespace samebits::layers
