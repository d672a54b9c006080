// samebits-llamacpp: llama.cpp (libllama, CPU only) driven through the
// samebits child protocol (engine/protocol/PROTOCOL.md), so that `samebits
// gate --engine llama.cpp` (engines/llama.cpp.json) holds llama.cpp's
// logits to its own baseline bit for bit, and `samebits conform` to
// samebits' reference pass. main is orchestration: parse, load, configure,
// run the scenario, report; every failure is reported in one place.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "adapter_errors.h"
#include "checkpoint.h"
#include "companions.h"
#include "engine/platform/machine.h"
#include "engine/protocol/records.h"
#include "engine/run/logit_dump.h"
#include "engine/run/scenario.h"
#include "ggml.h"
#include "llama_session.h"
#include "scenario_run.h"

namespace samebits::llamacpp {
namespace {

struct Options {
  std::string checkpoint, scenario, dump_logits;
  int threads = 1;
  int ubatch = 512;
  std::string feed = "whole";
  std::string flash_attn = "off";
  std::string kv = "f32";
  int companions = 0;
  std::string schedule = "together";
  uint64_t companion_seed = 1;
  bool verbose = false;
};

// Returns the `hello` record: samebits' writer for the common fields, then
// this adapter's own axes under `config`, as llama.cpp resolved them.
std::string Hello(const Options& o, const run::Scenario& scenario, const CheckpointFile& file,
                  const LlamaSession& session) {
  protocol::Hello h;
  h.engine = {"llama.cpp", LLAMA_CPP_REV};
  h.build = {std::string("llama.cpp ") + LLAMA_CPP_REV + " (ggml " + ggml_version() + " " +
                 ggml_commit() + ")",
             false, SAMEBITS_LLAMACPP_COMPILER,
             "-O3 -DNDEBUG; ggml CPU: GGML_NATIVE=OFF, AVX-512 (F, VBMI, VNNI, BF16), no AMX"};
  h.platform = platform::ThisMachine();
  // ggml's CPU kernels bring their own exp and GELU tables and call the C
  // library for the rest: no samebits math profile applies.
  h.math = {"ggml", "ggml", ggml_version(), "0000000000000000"};
  h.config.checkpoint = o.checkpoint;
  h.config.scenario = scenario.name;
  h.config.threads = session.Threads();
  h.checkpoint = {o.checkpoint, file.weights_xxh3, session.VocabSize()};
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(protocol::ToJsonLine(h));
  nlohmann::ordered_json& config = j["config"];
  // samebits-engine's switches that mean nothing here are left out.
  for (const char* key : {"kernels", "isa", "gemv_chunk_bytes", "math"}) config.erase(key);
  config["ubatch"] = session.Ubatch();
  config["feed"] = o.feed;
  config["flash_attn"] = o.flash_attn;
  config["kv"] = o.kv;
  config["companions"] = o.companions;
  config["schedule"] = o.schedule;
  config["companion_seed"] = o.companion_seed;
  return j.dump();
}

void WriteLine(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

// Runs the scenario; returns the exit code. Throws on failure.
int Run(const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  const run::Scenario scenario = run::LoadScenario(o.scenario);
  const CheckpointFile file = ResolveCheckpoint(o.checkpoint);
  LlamaSession session(file.path);
  const std::vector<ResolvedStep> steps = ResolveSteps(scenario, session);
  const int positions = Positions(steps);
  if (positions > session.TrainedContext()) {
    throw InputError("scenario " + scenario.file + ": " + std::to_string(positions) +
                     " positions exceed the checkpoint's context of " +
                     std::to_string(session.TrainedContext()));
  }
  const bool whole = o.feed == "whole";
  // One unified cache holds every sequence's positions; n_batch equals it,
  // so a whole chunk (beside every companion's rows) is one llama_decode
  // call, which llama.cpp splits into micro-batches of n_ubatch rows.
  const int needed = positions + o.companions * Companions::MaxPositions(Calls(steps, whole));
  SessionOptions so;
  so.threads = o.threads;
  so.ubatch = o.ubatch;
  so.flash_attn = o.flash_attn == "on";
  so.kv_f16 = o.kv == "f16";
  so.sequences = 1 + o.companions;
  so.context = std::max(512, (needed + 255) / 256 * 256);
  session.CreateContext(so);
  if (session.Threads() != o.threads || session.Ubatch() != o.ubatch) {
    throw std::runtime_error("llama.cpp resolved threads " + std::to_string(session.Threads()) +
                             " and n_ubatch " + std::to_string(session.Ubatch()) + ", asked " +
                             std::to_string(o.threads) + " and " + std::to_string(o.ubatch));
  }
  std::unique_ptr<run::LogitDumpWriter> dump;
  if (!o.dump_logits.empty()) dump = std::make_unique<run::LogitDumpWriter>(o.dump_logits);
  Companions companions(o.companions,
                        o.schedule == "staggered" ? Schedule::kStaggered : Schedule::kTogether,
                        o.companion_seed, session.VocabSize());
  WriteLine(Hello(o, scenario, file, session));
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  protocol::RecordWriter writer(stdout);
  ScenarioRun scenario_run(session, companions, writer, dump.get(), whole);
  protocol::Done done = scenario_run.Run(steps);
  if (dump) dump->Close();
  done.load_ms = load_ms;
  writer.Write(done);
  if (o.verbose) std::fputs(TakeLlamaLog().c_str(), stderr);
  return 0;
}

// Reports a failure as PROTOCOL.md asks: the record on stdout, the message
// (after llama.cpp's log, which says more) on stderr.
int Fail(const protocol::Record& record, const std::string& message, int code) {
  std::fputs(TakeLlamaLog().c_str(), stderr);
  std::fprintf(stderr, "samebits-llamacpp: %s\n", message.c_str());
  protocol::RecordWriter(stdout).Write(record);
  return code;
}

}  // namespace
}  // namespace samebits::llamacpp

int main(int argc, char** argv) {
  using namespace samebits::llamacpp;
  namespace protocol = samebits::protocol;
  Options o;
  CLI::App app{"llama.cpp (libllama " LLAMA_CPP_REV
               ", CPU only) speaking the samebits child protocol (engine/protocol/PROTOCOL.md)."};
  app.require_subcommand(1);
  CLI::App* run = app.add_subcommand("run", "Runs one scenario on one checkpoint.");
  run->add_option("--checkpoint", o.checkpoint,
                  "The checkpoint: gguf:PATH or a .gguf path; other samebits specs "
                  "(synthetic:NAME) are exported to GGUF by samebits-engine first.")
      ->option_text("SPEC")
      ->required();
  run->add_option("--scenario", o.scenario, "The scenario file (scenarios/README.md).")
      ->option_text("FILE")
      ->required();
  run->add_option("--threads", o.threads, "llama.cpp's n_threads and n_threads_batch.")
      ->option_text("N")
      ->check(CLI::Range(1, 1024));
  run->add_option("--ubatch", o.ubatch,
                  "n_ubatch: the rows of one physical micro-batch (a longer call is split).")
      ->option_text("N")
      ->check(CLI::Range(1, 65536));
  run->add_option("--feed", o.feed,
                  "Prompt and extend chunks in one llama_decode call (whole) or one call per "
                  "token (token).")
      ->option_text("whole|token")
      ->check(CLI::IsMember({"whole", "token"}));
  run->add_option("--flash-attn", o.flash_attn, "flash_attn_type DISABLED (off) or ENABLED (on).")
      ->option_text("off|on")
      ->check(CLI::IsMember({"off", "on"}));
  run->add_option("--kv", o.kv,
                  "The K/V cache type (samebits keeps F32; llama.cpp's default is F16).")
      ->option_text("f32|f16")
      ->check(CLI::IsMember({"f32", "f16"}));
  run->add_option("--companions", o.companions,
                  "Companion sequences in the same llama_decode calls, each its own sequence id.")
      ->option_text("N")
      ->check(CLI::Range(0, 63));
  run->add_option("--schedule", o.schedule,
                  "Companions all start with the prefill and stay (together), or join, leave and "
                  "rejoin at different calls, the scenario's rows moving among theirs (staggered).")
      ->option_text("together|staggered")
      ->check(CLI::IsMember({"together", "staggered"}));
  run->add_option("--companion-seed", o.companion_seed, "The seed of the companions' prompts.")
      ->option_text("S");
  run->add_option("--dump-logits", o.dump_logits,
                  "Write every output row's logits here (float32 little-endian, no header).")
      ->option_text("FILE");
  run->add_flag("--verbose", o.verbose, "Print llama.cpp's log on stderr after a passing run.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string message = std::string(e.what()) + " (see --help)";
    return Fail(protocol::Error{message}, message, 2);
  }
  try {
    return Run(o);
  } catch (const Unsupported& e) {
    return Fail(protocol::Unsupported{e.what()}, std::string("unsupported: ") + e.what(), 2);
  } catch (const InputError& e) {
    return Fail(protocol::Error{e.what()}, e.what(), 2);
  } catch (const samebits::run::ScenarioError& e) {
    return Fail(protocol::Error{e.what()}, e.what(), 2);
  } catch (const std::exception& e) {
    return Fail(protocol::Error{e.what()}, e.what(), 1);
  }
}
