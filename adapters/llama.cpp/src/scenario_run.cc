#include "scenario_run.h"

#include <chrono>
#include <stdexcept>
#include <string>

#include "adapter_errors.h"
#include "engine/numerics/hash.h"
#include "greedy.h"

namespace samebits::llamacpp {
namespace {

using Kind = run::ScenarioStep::Kind;

// Returns the ids of `source` (`where` names it in messages). The prompt's
// text gets BOS when the vocabulary adds one; an extend's text never.
std::vector<int32_t> Resolve(const run::TokenSource& source, const LlamaSession& session,
                             bool prompt, const std::string& where) {
  const int vocab = session.VocabSize();
  switch (source.kind) {
    case run::TokenSource::Kind::kTokens:
      for (const int32_t t : source.tokens) {
        if (t < 0 || t >= vocab) {
          throw InputError(where + ": token " + std::to_string(t) +
                           " is outside the checkpoint's vocabulary of " + std::to_string(vocab));
        }
      }
      return source.tokens;
    case run::TokenSource::Kind::kRandom:
      if (source.random.first_token >= vocab) {
        throw InputError(where + ": first_token " + std::to_string(source.random.first_token) +
                         " is outside the checkpoint's vocabulary of " + std::to_string(vocab));
      }
      return run::RandomTokens(source.random, vocab);
    case run::TokenSource::Kind::kText: {
      std::vector<int32_t> tokens = session.Tokenize(source.text, prompt);
      if (tokens.empty()) throw InputError(where + ": the text has no tokens");
      return tokens;
    }
  }
  throw std::logic_error("unknown token source");
}

}  // namespace

std::vector<ResolvedStep> ResolveSteps(const run::Scenario& scenario, const LlamaSession& session) {
  if (scenario.sampler.kind != model::SamplerConfig::Kind::kGreedy) {
    throw Unsupported("scenario " + scenario.file +
                      ": a sampled scenario (this adapter samples greedily only)");
  }
  std::vector<ResolvedStep> steps;
  for (size_t i = 0; i < scenario.steps.size(); ++i) {
    const run::ScenarioStep& s = scenario.steps[i];
    ResolvedStep r{s.kind, {}, s.decode_count, s.all_positions};
    const std::string where = "scenario " + scenario.file + ": step " + std::to_string(i);
    if (s.kind == Kind::kPrefill) r.tokens = Resolve(scenario.prompt, session, true, where);
    if (s.kind == Kind::kExtend) r.tokens = Resolve(s.chunk, session, false, where);
    steps.push_back(std::move(r));
  }
  return steps;
}

int Positions(const std::vector<ResolvedStep>& steps) {
  int n = 0;
  for (const ResolvedStep& s : steps) {
    n += s.kind == Kind::kDecode ? s.decode_count : static_cast<int>(s.tokens.size());
  }
  return n;
}

int Calls(const std::vector<ResolvedStep>& steps, bool whole) {
  int n = 0;
  for (const ResolvedStep& s : steps) {
    if (s.kind == Kind::kDecode)
      n += s.decode_count;
    else
      n += whole ? 1 : static_cast<int>(s.tokens.size());
  }
  return n;
}

protocol::Done ScenarioRun::Run(const std::vector<ResolvedStep>& steps) {
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  protocol::PhaseTimes phases;
  const auto start = Clock::now();
  for (const ResolvedStep& s : steps) {
    const auto step_start = Clock::now();
    if (s.kind == Kind::kDecode) {
      for (int i = 0; i < s.decode_count; ++i) {
        Call("decode", {{last_token_, position_, 0, true}});
      }
      phases.decode_ms += ms(Clock::now() - step_start);
      phases.decode_tokens += s.decode_count;
    } else {
      Feed(s.kind == Kind::kPrefill ? "prefill" : "extend", s.tokens, s.all_positions);
      phases.prefill_ms += ms(Clock::now() - step_start);
      phases.prefill_tokens += static_cast<int64_t>(s.tokens.size());
    }
  }
  protocol::Done done;
  done.steps = index_;
  done.elapsed_ms = ms(Clock::now() - start);
  done.phases = phases;
  return done;
}

void ScenarioRun::Feed(const char* kind, const std::vector<int32_t>& tokens, bool every) {
  std::vector<BatchRow> rows;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const bool output = every || i + 1 == tokens.size();
    rows.push_back({tokens[i], position_ + static_cast<int>(i), 0, output});
  }
  if (whole_) {
    Call(kind, rows);
    return;
  }
  for (const BatchRow& row : rows) Call(kind, {row});
}

void ScenarioRun::Call(const char* kind, const std::vector<BatchRow>& own) {
  int first = 0;
  const std::vector<BatchRow> rows = companions_.Rows(call_, own, session_, &first);
  session_.Decode(rows);
  for (size_t i = 0; i < own.size(); ++i) {
    if (own[i].output) Emit(kind, own[i], session_.Logits(first + static_cast<int>(i)));
  }
  companions_.After(session_);
  position_ += static_cast<int>(own.size());
  call_ += 1;
}

void ScenarioRun::Emit(const char* kind, const BatchRow& row, std::span<const float> logits) {
  if (dump_ != nullptr) dump_->WriteRow(logits);
  const numerics::LogitHashes hashes = numerics::HashLogits(logits);
  protocol::Step step;
  step.index = index_++;
  step.kind = kind;
  step.position = row.position;
  step.input_token = row.token;
  step.argmax = Greedy(logits);
  step.token = step.argmax;
  step.fnv1a64 = hashes.fnv1a64;
  step.xxh3_64 = hashes.xxh3_64;
  step.nan_count = hashes.nan_count;
  step.inf_count = hashes.inf_count;
  writer_.Write(step);
  last_token_ = step.token;
}

}  // namespace samebits::llamacpp
