// Configuration name templates (matrix_template.h).
#include "harness/runner/matrix_template.h"

#include <algorithm>
#include <stdexcept>

#include "harness/runner/matrix_flag_names.h"

namespace samebits::runner {
namespace {

// The placeholders, each with what it stands for (for the error listing
// them all, which is the template language's whole reference).
struct Placeholder {
  const char* name;
  const char* meaning;
};
constexpr Placeholder kPlaceholders[] = {
    {"each:threads", "every --threads value"},
    {"max:threads", "the largest --threads value"},
    {"second:threads", "the second smallest distinct --threads value"},
    {"each:isa", "every ISA of the engine's table"},
    {"small_chunk", "the small GEMV chunk, 8k or its bytes"},
};

bool IsKnown(const std::string& name) {
  return std::any_of(std::begin(kPlaceholders), std::end(kPlaceholders),
                     [&](const Placeholder& p) { return name == p.name; });
}

bool IsEach(const std::string& name) {
  return name.rfind("each:", 0) == 0;
}

std::string KnownPlaceholders() {
  std::string known;
  for (const Placeholder& p : kPlaceholders) {
    known += (known.empty() ? "{" : ", {") + std::string(p.name) + "} (" + p.meaning + ")";
  }
  return known;
}

// A template cut into literal text and placeholders, in order.
struct Part {
  std::string text;
  bool placeholder = false;
};

// Returns the parts of `text`; sets `error` (and returns none) when its
// braces do not pair up.
std::vector<Part> Parts(const std::string& text, std::string* error) {
  std::vector<Part> parts;
  size_t at = 0;
  while (at < text.size()) {
    const size_t open = text.find_first_of("{}", at);
    if (open == std::string::npos) break;
    const size_t close = text[open] == '{' ? text.find_first_of("{}", open + 1) : open;
    if (text[open] == '}' || close == std::string::npos || text[close] != '}') {
      *error = "expected each '{' closed by a '}' before any other brace, in '" + text + "'";
      return {};
    }
    if (open > at) parts.push_back({text.substr(at, open - at), false});
    parts.push_back({text.substr(open + 1, close - open - 1), true});
    at = close + 1;
  }
  if (at < text.size()) parts.push_back({text.substr(at), false});
  return parts;
}

// Returns the text of the single-valued placeholder `name`.
std::string SingleValue(const std::string& name, const TemplateInputs& inputs) {
  if (name == "small_chunk") {
    const int64_t bytes = inputs.small_chunk_bytes;
    return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + "k" : std::to_string(bytes);
  }
  if (inputs.threads.empty())
    throw std::invalid_argument(std::string(kThreadsFlag) + ": no thread count given");
  if (name == "max:threads") {
    return std::to_string(*std::max_element(inputs.threads.begin(), inputs.threads.end()));
  }
  // second:threads. With two thread counts or more, batching then meets a
  // row sharing other than the largest's; with one, it is that one.
  std::vector<int> counts = inputs.threads;
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return std::to_string(counts.size() > 1 ? counts[1] : counts[0]);
}

// Returns the values of the list placeholder `name`, in its order.
std::vector<std::string> EachValues(const std::string& name, const TemplateInputs& inputs) {
  if (name == "each:isa") return inputs.isas;
  std::vector<std::string> values;
  for (int n : inputs.threads) values.push_back(std::to_string(n));
  return values;
}

}  // namespace

bool IsTemplate(const std::string& text) {
  return text.find_first_of("{}") != std::string::npos;
}

std::string TemplateError(const std::string& text) {
  std::string error;
  const std::vector<Part> parts = Parts(text, &error);
  if (!error.empty()) return error;
  int lists = 0;
  for (const Part& p : parts) {
    if (!p.placeholder) continue;
    if (!IsKnown(p.text)) {
      return "expected placeholders among " + KnownPlaceholders() + "; not {" + p.text + "}";
    }
    if (IsEach(p.text) && ++lists > 1) {
      return "expected at most one {each:...} placeholder in a name (its names follow that "
             "list's order), in '" +
             text + "'";
    }
  }
  return "";
}

std::vector<std::string> ExpandTemplate(const std::string& text, const TemplateInputs& inputs) {
  const std::string error = TemplateError(text);
  if (!error.empty()) throw std::invalid_argument(error);
  std::string unused;
  const std::vector<Part> parts = Parts(text, &unused);
  std::vector<std::string> each = {""};  // one name when there is no list
  for (const Part& p : parts) {
    if (p.placeholder && IsEach(p.text)) each = EachValues(p.text, inputs);
  }
  std::vector<std::string> names;
  for (const std::string& value : each) {
    std::string name;
    for (const Part& p : parts) {
      if (!p.placeholder) {
        name += p.text;
      } else {
        name += IsEach(p.text) ? value : SingleValue(p.text, inputs);
      }
    }
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace samebits::runner
