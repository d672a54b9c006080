// Interleaved A/B runs (ab_bench.h).
#include "harness/runner/ab_bench.h"

#include <algorithm>

#include "engine/platform/preflight.h"
#include "engine/protocol/records.h"
#include "harness/runner/cell_arguments.h"
#include "harness/runner/cell_runner.h"
#include "harness/runner/child.h"
#include "harness/runner/machine.h"
#include "harness/runner/matrix_run.h"
#include "harness/runner/run_error.h"

namespace samebits::runner {

using harness::BenchSample;
using harness::BenchSide;

namespace {

BenchSample RunOnce(const EngineProfile& profile, const BenchSide& side, char name, int round,
                    const BenchOptions& options) {
  BenchSample s;
  s.side = name;
  s.round = round;
  ChildSpec spec;
  spec.program = side.engine;
  spec.args = EngineArguments(profile, side.cell, /*trace=*/false, "");
  spec.env = ChildEnvironment(CellVariables(side.cell));
  spec.timeout_seconds = options.timeout_seconds;
  const ChildOutcome outcome = RunChild(spec);
  // An engine that refuses the command line (exit 2 before `hello`: a
  // checkpoint or scenario it cannot open, a configuration it cannot run
  // here) refuses every round alike: the bench cannot be made, and stops
  // before timing anything.
  if (outcome.started && !outcome.timed_out && outcome.signal == 0 && outcome.exit_code == 2) {
    const protocol::Transcript t = protocol::ReadTranscript(outcome.stdout_text);
    if (!t.hello) {
      const std::string said = t.error         ? t.error->message
                               : t.unsupported ? "unsupported: " + t.unsupported->reason
                                               : outcome.stderr_tail;
      throw RunError(std::string("bench: the engine of side ") + name + " (" +
                     side.cell.config.name + ") refused to run (exit 2" +
                     (said.empty() ? "" : ": " + said) + "); nothing was timed");
    }
  }
  // The cell runner's judgement: a child that crashed, lied about its
  // configuration or broke the protocol gives no time.
  const harness::CellResult judged = JudgeChild(side.cell, outcome);
  s.wall_ms = outcome.elapsed_ms;
  s.outputs = judged.steps;
  s.steps = static_cast<int>(judged.steps.size());
  if (judged.code != harness::ResultCode::kPass) {
    s.failure = std::string(harness::ResultCodeName(judged.code)) + ": " + judged.message;
    return s;
  }
  const protocol::Transcript t = protocol::ReadTranscript(outcome.stdout_text);
  s.elapsed_ms = t.done ? t.done->elapsed_ms : outcome.elapsed_ms;
  if (t.done) s.phases = t.done->phases;
  s.ok = s.elapsed_ms > 0;
  if (!s.ok) s.failure = "the engine reported no elapsed time";
  return s;
}

// Reads the machine and records the preflight in `record`, saying what it
// found. Returns false when the machine is busy and `force` was not given.
bool Preflight(const AbBenchOptions& options, harness::BenchRecord& record) {
  platform::PreflightLimits limits;
  limits.threads = std::max(record.a.cell.config.threads, record.b.cell.config.threads);
  const platform::PreflightVerdict pre = platform::AssessMachine(platform::ReadMachine(), limits);
  record.preflight = pre.summary + (pre.busy ? ": BUSY" : ": quiet");
  record.forced = options.force && pre.busy;
  options.say("preflight: " + record.preflight);
  for (const std::string& reason : pre.reasons) options.say("  " + reason);
  return !pre.busy || options.force;
}

// Returns the progress line of one run ("  A round 2: 41.5 ms").
std::string SampleLine(const BenchSample& s) {
  return std::string("  ") + s.side + " " +
         (s.round < 0 ? "warm-up" : "round " + std::to_string(s.round)) + ": " +
         (s.ok ? std::to_string(s.elapsed_ms) + " ms" : s.failure);
}

}  // namespace

AbBenchOutcome RunAbBench(const AbBenchOptions& options) {
  AbBenchOutcome out;
  harness::BenchRecord& record = out.record;
  record.a = ResolveBenchSide(options.a, options.sides);
  record.b = ResolveBenchSide(options.b, options.sides);
  record.started_at = NowUtc();
  record.command = options.command_line;
  const harness::MachineInfo machine = LocalMachine();
  record.machine = machine.cpu + ", " + machine.arch;
  if (!Preflight(options, record)) {
    out.refused = true;
    return out;
  }
  record.samples = RunBench(*options.sides.own_profile, record.a, record.b, options.timing,
                            [&](const BenchSample& s) {
                              if (!options.quiet) options.progress(SampleLine(s));
                            });
  record.summary = harness::SummarizeBench(record.samples);
  return out;
}

std::vector<BenchSample> RunBench(const EngineProfile& profile, const BenchSide& a,
                                  const BenchSide& b, const BenchOptions& options,
                                  const std::function<void(const BenchSample&)>& progress) {
  std::vector<BenchSample> samples;
  auto run = [&](const BenchSide& side, char name, int round) {
    samples.push_back(RunOnce(profile, side, name, round, options));
    if (progress) progress(samples.back());
  };
  for (int w = 0; w < options.warmup; ++w) {
    run(a, 'A', -1);
    run(b, 'B', -1);
  }
  for (int round = 0; round < options.rounds; ++round) {
    run(a, 'A', round);
    run(b, 'B', round);
    run(b, 'B', round);
    run(a, 'A', round);
  }
  return samples;
}

}  // namespace samebits::runner
