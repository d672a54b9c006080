// `samebits-engine list`: the synthetic checkpoints this build can generate.
#include <cstdio>
#include <memory>
#include <string>

#include "engine/cli/commands.h"
#include "engine/model/synthetic.h"

namespace samebits::cli {
namespace {

struct ListOptions {
  bool names_only = false;
};

int RunList(const ListOptions& options) {
  for (const std::string& name : model::SyntheticNames()) {
    const std::string spec = "synthetic:" + name;
    if (options.names_only) {
      std::printf("%s\n", spec.c_str());
      continue;
    }
    const model::ModelConfig c = model::SyntheticConfig(name);
    std::printf("%-18s %-8s vocab %5d  d_model %4d  layers %d  heads %d/%d  experts %d\n",
                spec.c_str(), c.arch.c_str(), c.vocab_size, c.d_model, c.n_layers(), c.n_heads,
                c.n_kv_heads, c.n_experts);
  }
  return 0;
}

CommandSpec SetupList(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "list", "Lists the synthetic checkpoints (append -f32, -f16 or -bf16 to choose a dtype).");
  auto options = std::make_shared<ListOptions>();
  sub->add_flag("--names", options->names_only, "Print only the checkpoint specs, one per line.");
  return {sub, [options] { return RunList(*options); }};
}

}  // namespace
SAMEBITS_REGISTER_COMMAND(list, 30, SetupList);
}  // namespace samebits::cli
