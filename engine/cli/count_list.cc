#include "engine/cli/count_list.h"

#include <algorithm>
#include <sstream>

#include "engine/cli/commands.h"
#include "engine/threads/thread_pool.h"

namespace samebits::cli {

std::vector<int> ParseCountList(const std::string& text, const std::string& flag,
                                const std::string& what, int max) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    int n = 0;
    try {
      size_t used = 0;
      n = std::stoi(item, &used);
      if (used != item.size()) n = 0;
    } catch (const std::exception&) {
      n = 0;
    }
    if (n < 1 || n > max) {
      std::string message = flag;
      message += ": '";
      message += item;
      message += "' is not a ";
      message += what;
      message += " in 1..";
      message += std::to_string(max);
      throw UsageError(message);
    }
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  if (out.empty()) throw UsageError(flag + ": give at least one " + what + ", e.g. 1,2");
  return out;
}

std::vector<int> ParseThreadsList(const std::string& text) {
  if (!text.empty())
    return ParseCountList(text, "--threads-list", "thread count", threads::kMaxThreads);
  std::vector<int> counts = {1};
  const int all = threads::DefaultThreadCount();
  if (all != 1) counts.push_back(all);
  return counts;
}

}  // namespace samebits::cli
