// Interleaved A/B runs (ab_bench.h).
#include "harness/runner/ab_bench.h"

#include "engine/protocol/records.h"
#include "harness/runner/cell_runner.h"
#include "harness/runner/child.h"

namespace samebits::runner {

using harness::BenchSample;
using harness::BenchSide;

namespace {

BenchSample RunOnce(const BenchSide& side, char name, int round, const BenchOptions& options) {
  BenchSample s;
  s.side = name;
  s.round = round;
  ChildSpec spec;
  spec.program = side.engine;
  spec.args = EngineArguments(side.cell, /*trace=*/false, "");
  spec.env = ChildEnvironment(CellVariables(side.cell));
  spec.timeout_seconds = options.timeout_seconds;
  const ChildOutcome outcome = RunChild(spec);
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

}  // namespace

std::vector<BenchSample> RunBench(const BenchSide& a, const BenchSide& b,
                                  const BenchOptions& options,
                                  const std::function<void(const BenchSample&)>& progress) {
  std::vector<BenchSample> samples;
  auto run = [&](const BenchSide& side, char name, int round) {
    samples.push_back(RunOnce(side, name, round, options));
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
