// `samebits-engine export SPEC OUT`: writes any checkpoint (synthetic ones
// included) as GGUF v3 (OUT ending in .gguf) or as a safetensors directory
// with config.json (any other OUT), so that other engines can run the very
// weights whose hashes samebits records.
#include <cstdio>
#include <memory>
#include <string>

#include "engine/cli/commands.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf_writer.h"
#include "engine/formats/safetensors.h"
#include "engine/model/tensor_spec.h"

namespace samebits::cli {
namespace {

struct ExportOptions {
  std::string spec;
  std::string out;
  std::string format;
  int shards = 1;
};

int RunExport(const ExportOptions& options) {
  const std::string& out = options.out;
  const model::ModelWeights weights = LoadCheckpointForCommand(options.spec);
  const bool gguf = options.format.empty()
                        ? out.size() >= 5 && out.compare(out.size() - 5, 5, ".gguf") == 0
                        : options.format == "gguf";
  if (gguf) {
    formats::WriteGguf(weights, out);
  } else {
    formats::WriteSafetensors(weights, out, options.shards);
  }
  std::fprintf(stderr, "wrote %s (%s, %lld parameters, weights %s)\n", out.c_str(),
               gguf ? "GGUF v3" : "safetensors",
               static_cast<long long>(model::CountParameters(weights)),
               model::HashWeights(weights).c_str());
  return 0;
}

CommandSpec SetupExport(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "export", "Writes a checkpoint as GGUF v3 or safetensors (for other engines).");
  auto options = std::make_shared<ExportOptions>();
  sub->add_option("checkpoint", options->spec,
                  "The checkpoint to export: synthetic:NAME[-DTYPE], gguf:PATH, safetensors:DIR, "
                  "llama2c:PATH or a path.")
      ->option_text("SPEC")
      ->required();
  sub->add_option("output", options->out,
                  "Where to write: a path ending in .gguf writes GGUF v3; any other path is a "
                  "directory that receives config.json and model.safetensors.")
      ->option_text("OUT")
      ->required();
  sub->add_option("--format", options->format,
                  "The output format, when the path does not say: gguf or safetensors.")
      ->option_text("FORMAT")
      ->check(CLI::IsMember({"gguf", "safetensors"}));
  sub->add_option("--shards", options->shards,
                  "Split a safetensors export into this many files with an index.")
      ->option_text("N")
      ->check(CLI::Range(1, 1000));
  return {sub, [options] { return RunExport(*options); }};
}

}  // namespace
SAMEBITS_REGISTER_COMMAND(export, 50, SetupExport);
}  // namespace samebits::cli
