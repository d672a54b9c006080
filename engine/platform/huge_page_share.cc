#include "engine/platform/huge_page_share.h"

#include <charconv>
#include <fstream>
#include <iterator>
#include <string>

namespace samebits::platform {
namespace {

// Reads "   12345 kB" (the text after a field's colon) as 12345.
std::optional<int64_t> KibValue(std::string_view rest) {
  const size_t begin = rest.find_first_not_of(' ');
  if (begin == std::string_view::npos) return std::nullopt;
  rest.remove_prefix(begin);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (error != std::errc() || value < 0) return std::nullopt;
  if (std::string_view(end, static_cast<size_t>(rest.data() + rest.size() - end)) != " kB") {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<HugePageShare> ParseSmapsRollup(std::string_view text) {
  HugePageShare share;
  bool has_rss = false;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // the heading line
    const std::string_view name = line.substr(0, colon);
    const bool rss = name == "Rss";
    const bool huge =
        name == "AnonHugePages" || name == "ShmemPmdMapped" || name == "FilePmdMapped";
    if (!rss && !huge) continue;
    const std::optional<int64_t> kib = KibValue(line.substr(colon + 1));
    if (!kib) return std::nullopt;
    if (rss) {
      share.resident_kib = *kib;
      has_rss = true;
    } else {
      share.huge_kib += *kib;
    }
  }
  if (!has_rss) return std::nullopt;
  return share;
}

std::optional<HugePageShare> ReadHugePageShare() {
  std::ifstream in("/proc/self/smaps_rollup");
  if (!in) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseSmapsRollup(text);
}

}  // namespace samebits::platform
