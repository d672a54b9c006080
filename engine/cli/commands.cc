#include "engine/cli/commands.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "engine/formats/checkpoint.h"
#include "engine/kernels/test_only_table.h"

namespace samebits::cli {
namespace {

// A function-local static, so registration from other files' static
// initializers works whatever order they run in.
std::vector<CommandInfo>& Registry() {
  static std::vector<CommandInfo> commands;
  return commands;
}

}  // namespace

bool RegisterCommand(CommandInfo info) {
  Registry().push_back(std::move(info));
  return true;
}

std::vector<CommandInfo> RegisteredCommands() {
  std::vector<CommandInfo> commands = Registry();
  std::sort(commands.begin(), commands.end(), [](const CommandInfo& a, const CommandInfo& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  return commands;
}

model::ModelWeights LoadCheckpointForCommand(const std::string& spec) {
  try {
    return formats::LoadCheckpoint(spec);
  } catch (const formats::CheckpointError& e) {
    throw UsageError(e.what());
  }
}

bool ProfileRequestedByEnvironment() {
  const char* value = std::getenv("SAMEBITS_PROFILE");
  return value != nullptr && std::string_view(value) == "1";
}

const kernels::KernelTable& CpuPassKernelTable(kernels::Isa isa) {
  const char* value = std::getenv("SAMEBITS_TEST_ONLY_BREAK_IDENTITY");
  if (value == nullptr || std::string_view(value) != "1") return kernels::GetKernelTable(isa);
  std::fprintf(stderr,
               "samebits: SAMEBITS_TEST_ONLY_BREAK_IDENTITY=1: the cpu pass sums attention in "
               "a forbidden order and its logits WILL differ; unset it outside the tests\n");
  return kernels::TestOnlyReversedAttentionTable(isa);
}

}  // namespace samebits::cli
