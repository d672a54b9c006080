#include "engine/run/scenario_run.h"

#include <chrono>
#include <memory>

#include "engine/model/tensor_spec.h"
#include "engine/protocol/platform.h"
#include "engine/protocol/records.h"
#include "engine/run/batch_driver.h"
#include "engine/threads/thread_pool.h"

namespace samebits::run {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The forward pass the options name, the pool it runs on, and the
// configuration it really uses (as `hello` records it).
struct Pass {
  std::unique_ptr<threads::ThreadPool> pool;
  std::unique_ptr<model::Forward> forward;
  protocol::RunConfig config;
};

Pass MakePass(const RunOptions& options, const model::ModelWeights& weights,
              const numerics::MathLibrary& math, const Scenario& scenario) {
  Pass pass;
  protocol::RunConfig& config = pass.config;
  config.checkpoint = options.checkpoint;
  config.scenario = scenario.name;
  config.kernels = model::KernelPathName(options.path);
  config.math = std::string(numerics::MathProfileName(options.math));
  config.quant_dot = std::string(numerics::QuantDotName(options.quant_dot));
  config.batch = options.batch.batch;
  config.batch_seed = options.batch.seed;
  config.batch_schedule = BatchScheduleName(options.batch.schedule);
  config.isa = kernels::IsaName(options.isa);
  if (options.path == model::KernelPath::kReference) {
    // The reference is single-threaded plain code with no chunking; its
    // dot products run on the kernel table --isa chose, recorded here.
    config.threads = 1;
    config.gemv_chunk_bytes = 0;
    pass.forward = model::MakeReferenceForward(weights, math, options.isa, options.quant_dot);
    return pass;
  }
  model::CpuOptions cpu_options;
  cpu_options.isa = options.isa;
  cpu_options.quant_dot = options.quant_dot;
  model::ApplyKnobs(options.knobs, cpu_options);
  cpu_options.profile = options.profile;
  config.threads = options.threads;
  config.gemv_chunk_bytes = cpu_options.gemv_chunk_bytes;
  pass.pool = std::make_unique<threads::ThreadPool>(options.threads);
  pass.forward = model::MakeCpuForward(weights, math, *pass.pool, cpu_options, *options.cpu_table,
                                       *options.cpu_multi_sequence_table);
  return pass;
}

protocol::Hello MakeHello(const RunOptions& options, const RunInputs& inputs,
                          const protocol::RunConfig& config) {
  const model::ModelWeights& weights = inputs.weights;
  protocol::Hello hello;
  hello.engine = protocol::ThisEngine();
  hello.build = protocol::ThisBuild();
  hello.platform = protocol::ThisPlatform();
  hello.math = protocol::DescribeMath(options.math);
  hello.config = config;
  hello.checkpoint.spec = options.checkpoint;
  hello.checkpoint.weights_xxh3 =
      inputs.weights_xxh3.empty() ? model::HashWeights(weights) : inputs.weights_xxh3;
  hello.checkpoint.vocab_size = weights.config.vocab_size;
  // The knobs cut only the cpu pass's work; the reference has none.
  if (options.path == model::KernelPath::kCpu) hello.tuning = options.tuning_record;
  return hello;
}

// Writes a `step` record per output row (and its logits to the dump), and
// times the phases for `done`: the time from the end of the previous row's
// record to this row is its forward pass (zero for the later rows of one
// chunk), credited to decode for decode rows and to prefill for prefill
// and extend rows; writing the records is left out of both.
class StepRecorder {
 public:
  StepRecorder(protocol::RecordWriter& writer, const model::ModelWeights& weights,
               LogitDumpWriter* dump)
      : writer_(writer), weights_(weights), dump_(dump) {}

  void Start() { mark_ = Clock::now(); }

  void OnStep(const StepResult& s) {
    const double forward_ms = MsSince(mark_);
    if (s.kind == ScenarioStep::Kind::kDecode) {
      phases_.decode_ms += forward_ms;
      ++phases_.decode_tokens;
    } else {
      phases_.prefill_ms += forward_ms;
    }
    protocol::Step step{s.index,
                        StepKindName(s.kind),
                        s.position,
                        s.input_token,
                        s.token,
                        s.fnv1a64,
                        s.xxh3_64,
                        s.argmax,
                        s.nan_count,
                        s.inf_count,
                        /*text=*/std::nullopt,
                        /*batch=*/std::nullopt};
    // The text of the chosen token, decoded after the token fed before it.
    if (weights_.vocabulary) step.text = weights_.vocabulary->DecodeToken(s.input_token, s.token);
    if (s.batch)
      step.batch =
          protocol::BatchPlace{s.batch->sequences, s.batch->rows, s.batch->slot, s.batch->row};
    writer_.Write(step);
    if (dump_ != nullptr) dump_->WriteRow(s.logits);
    mark_ = Clock::now();
  }

  // Returns the phase times, the prefill tokens counted from the summary.
  protocol::PhaseTimes Phases(const RunSummary& summary) {
    phases_.prefill_tokens = summary.positions - phases_.decode_tokens;
    return phases_;
  }

 private:
  protocol::RecordWriter& writer_;
  const model::ModelWeights& weights_;
  LogitDumpWriter* dump_;
  protocol::PhaseTimes phases_;
  Clock::time_point mark_ = Clock::now();
};

// Prints the cpu pass's op profile on stderr.
void PrintProfile(const model::Forward& forward) {
  const std::string report = forward.ProfileReport();
  std::fprintf(
      stderr, "%s",
      report.empty() ? "no profile: the reference path is not profiled\n" : report.c_str());
}

}  // namespace

void RunScenarioWithRecords(const RunOptions& options, const RunInputs& inputs, std::FILE* out) {
  const numerics::MathLibrary& math = numerics::GetMathLibrary(options.math);
  const Pass pass = MakePass(options, inputs.weights, math, inputs.scenario);
  protocol::RecordWriter writer(out);
  std::optional<double> load_ms;
  if (inputs.started) load_ms = MsSince(*inputs.started);
  writer.Write(MakeHello(options, inputs, pass.config));

  StepRecorder recorder(writer, inputs.weights, inputs.dump);
  DriverSinks sinks;
  sinks.on_step = [&](const StepResult& s) { recorder.OnStep(s); };
  if (options.trace) {
    sinks.on_trace = [&](const TraceResult& t) {
      writer.Write(protocol::Trace{t.position, t.layer, t.op, t.xxh3_64});
    };
  }
  const auto start = Clock::now();
  recorder.Start();
  const RunSummary summary = RunBatchedScenario(inputs.prepared, inputs.weights.config,
                                                *pass.forward, math, options.batch, sinks);
  const double elapsed_ms = MsSince(start);
  if (inputs.dump != nullptr) inputs.dump->Close();
  writer.Write(protocol::Done{summary.steps, elapsed_ms, recorder.Phases(summary), load_ms});
  if (options.profile) PrintProfile(*pass.forward);
}

}  // namespace samebits::run
