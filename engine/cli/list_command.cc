// `samebits-engine list`: the synthetic checkpoints this build can generate.
#include <cstdio>
#include <string>

#include "engine/cli/commands.h"
#include "engine/model/synthetic.h"

namespace samebits::cli {
namespace {

class ListCommand : public Command {
 public:
  void Define(CLI::App& sub) override {
    sub.add_flag("--names", names_only_, "Print only the checkpoint specs, one per line.");
  }

  int Execute() override {
    for (const std::string& name : model::SyntheticNames()) {
      const std::string spec = "synthetic:" + name;
      if (names_only_) {
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

 private:
  bool names_only_ = false;
};

const bool kRegistered = RegisterCommand(
    {"list", "Lists the synthetic checkpoints (append -f32, -f16 or -bf16 to choose a dtype).", 30,
     [] { return MakeCommand<ListCommand>(); }});

}  // namespace
}  // namespace samebits::cli
