#include "engine/cli/isa_option.h"

#include "engine/cli/commands.h"

namespace samebits::cli {
namespace {

// Returns `auto` and every ISA name, in the table's order.
std::vector<std::string> IsaChoices() {
  std::vector<std::string> choices = {"auto"};
  for (const std::string& name : kernels::IsaNames()) choices.push_back(name);
  return choices;
}

// Returns `items` joined by `separator`, with `last` before the final one.
std::string Join(const std::vector<std::string>& items, const std::string& separator,
                 const std::string& last) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) text += i + 1 == items.size() ? last : separator;
    text += items[i];
  }
  return text;
}

}  // namespace

void AddIsaOption(CLI::App* sub, std::string* isa, const std::string& description) {
  const std::vector<std::string> choices = IsaChoices();
  sub->add_option("--isa", *isa, description)
      ->option_text(Join(choices, "|", "|"))
      ->check(CLI::IsMember(choices));
}

kernels::Isa ResolveIsaOption(const std::string& value) {
  if (value == "auto") return kernels::BestIsa();
  kernels::Isa isa;
  if (!kernels::ParseIsa(value, &isa)) {
    throw UsageError("unknown ISA '" + value + "' (use " + Join(IsaChoices(), ", ", " or ") + ")");
  }
  if (!kernels::IsaAvailable(isa)) {
    std::vector<std::string> available;
    for (const kernels::Isa each : kernels::AvailableIsas()) {
      available.emplace_back(kernels::IsaName(each));
    }
    // Unsupported, not a usage error: the engine answers with the protocol's
    // `unsupported` record (engine_main.cc), so the harness reports the cell
    // UNSUPPORTED on a machine without this ISA.
    throw UnsupportedError("ISA " + value +
                           " is not available on this machine or in this build (available: " +
                           Join(available, ", ", ", ") + ")");
  }
  return isa;
}

}  // namespace samebits::cli
