#include "engine/run/scenario.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "engine/numerics/splitmix.h"
#include "engine/run/input_file.h"
#include "engine/run/strict_json.h"

namespace samebits::run {
namespace {

using nlohmann::json;

// The longest token sequence or decode run a scenario may ask for; far above
// any real scenario, low enough that a typo cannot exhaust memory.
constexpr int64_t kMaxCount = 1 << 20;

// The largest scenario file read: room for kMaxCount tokens written out.
constexpr size_t kMaxScenarioBytes = size_t{64} << 20;

// Names where a problem is: "scenario F", "scenario F: step 2", ...
class Context {
 public:
  Context(std::string prefix) : prefix_(std::move(prefix)) {}
  Context Child(const std::string& where) const { return Context(prefix_ + ": " + where); }
  [[noreturn]] void Fail(const std::string& problem) const {
    throw ScenarioError(prefix_ + ": " + problem);
  }

 private:
  std::string prefix_;
};

const char* TypeName(const json& j) {
  if (j.is_number_integer()) return "an integer";
  if (j.is_number_float()) return "a fractional number";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_array()) return "an array";
  if (j.is_object()) return "an object";
  return "null";
}

// Rejects any key of `object` outside `allowed`, naming the allowed ones.
void CheckKeys(const json& object, const Context& ctx, std::initializer_list<const char*> allowed) {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (const char* a : allowed) known = known || key == a;
    if (!known) {
      std::string list;
      for (const char* a : allowed) {
        list += list.empty() ? "'" : ", '";
        list += a;
        list += "'";
      }
      ctx.Fail("unknown key '" + key + "' (expected " + list + ")");
    }
  }
}

const json& Require(const json& object, const char* key, const Context& ctx) {
  const auto it = object.find(key);
  if (it == object.end()) ctx.Fail(std::string("missing '") + key + "'");
  return *it;
}

const json& RequireObject(const json& j, const char* what, const Context& ctx) {
  if (!j.is_object()) ctx.Fail(std::string("'") + what + "' must be an object, not " + TypeName(j));
  return j;
}

// Returns an integer in [lo, hi]; `what` describes the value for messages.
int64_t GetInt(const json& j, const std::string& what, int64_t lo, int64_t hi, const Context& ctx) {
  const std::string range = lo == 1 ? "a positive integer" : "a non-negative integer";
  if (!j.is_number_integer()) ctx.Fail("'" + what + "' must be " + range + ", not " + TypeName(j));
  if (j.is_number_unsigned()) {
    const uint64_t v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(hi)) {
      ctx.Fail("'" + what + "' is " + std::to_string(v) + ", more than the limit " +
               std::to_string(hi));
    }
    if (static_cast<int64_t>(v) < lo) ctx.Fail("'" + what + "' must be " + range + ", not 0");
    return static_cast<int64_t>(v);
  }
  const int64_t v = j.get<int64_t>();
  if (v < lo) ctx.Fail("'" + what + "' must be " + range + ", not " + std::to_string(v));
  if (v > hi) {
    ctx.Fail("'" + what + "' is " + std::to_string(v) + ", more than the limit " +
             std::to_string(hi));
  }
  return v;
}

uint64_t GetSeed(const json& j, const std::string& what, const Context& ctx) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer())
    ctx.Fail("'" + what + "' must be a non-negative integer, not " +
             std::to_string(j.get<int64_t>()));
  ctx.Fail("'" + what + "' must be a non-negative integer, not " + TypeName(j));
}

double GetNumber(const json& j, const std::string& what, const Context& ctx) {
  if (!j.is_number()) ctx.Fail("'" + what + "' must be a number, not " + TypeName(j));
  return j.get<double>();
}

TokenSource ParseTokenSource(const json& j, const char* what, const Context& ctx) {
  RequireObject(j, what, ctx);
  if (j.size() != 1) {
    ctx.Fail(std::string("'") + what +
             "' must have exactly one of 'random', 'tokens' or 'text', found " +
             std::to_string(j.size()) + " keys");
  }
  CheckKeys(j, ctx, {"random", "tokens", "text"});
  TokenSource source;
  if (const auto it = j.find("random"); it != j.end()) {
    const Context rctx = ctx.Child(std::string(what) + ".random");
    if (!it->is_object()) rctx.Fail("must be an object, not " + std::string(TypeName(*it)));
    CheckKeys(*it, rctx, {"length", "seed", "first_token"});
    source.kind = TokenSource::Kind::kRandom;
    source.random.length =
        static_cast<int>(GetInt(Require(*it, "length", rctx), "length", 1, kMaxCount, rctx));
    source.random.seed = GetSeed(Require(*it, "seed", rctx), "seed", rctx);
    if (const auto f = it->find("first_token"); f != it->end()) {
      source.random.first_token =
          static_cast<int>(GetInt(*f, "first_token", 0, std::numeric_limits<int32_t>::max(), rctx));
    }
  } else if (const auto it = j.find("tokens"); it != j.end()) {
    const Context tctx = ctx.Child(std::string(what) + ".tokens");
    if (!it->is_array())
      tctx.Fail("must be an array of token ids, not " + std::string(TypeName(*it)));
    if (it->empty()) tctx.Fail("must not be empty");
    if (static_cast<int64_t>(it->size()) > kMaxCount)
      tctx.Fail("has more than the limit of tokens");
    source.kind = TokenSource::Kind::kTokens;
    for (size_t i = 0; i < it->size(); ++i) {
      source.tokens.push_back(static_cast<int32_t>(GetInt(
          (*it)[i], "token " + std::to_string(i), 0, std::numeric_limits<int32_t>::max(), tctx)));
    }
  } else {
    const json& text = j.at("text");
    if (!text.is_string())
      ctx.Fail(std::string("'") + what + ".text' must be a string, not " + TypeName(text));
    if (text.get_ref<const std::string&>().empty())
      ctx.Fail(std::string("'") + what + ".text' must not be empty");
    source.kind = TokenSource::Kind::kText;
    source.text = text.get<std::string>();
  }
  return source;
}

model::SamplerConfig ParseSampler(const json& j, const Context& ctx) {
  if (!j.is_object()) ctx.Fail("must be an object, not " + std::string(TypeName(j)));
  const json& kind = Require(j, "kind", ctx);
  if (!kind.is_string())
    ctx.Fail("'kind' must be \"greedy\" or \"sample\", not " + std::string(TypeName(kind)));
  model::SamplerConfig config;
  if (kind == "greedy") {
    CheckKeys(j, ctx, {"kind"});
    config.kind = model::SamplerConfig::Kind::kGreedy;
    return config;
  }
  if (kind != "sample")
    ctx.Fail("unknown kind '" + kind.get<std::string>() + "' (expected \"greedy\" or \"sample\")");
  CheckKeys(j, ctx, {"kind", "temperature", "top_k", "top_p", "seed"});
  config.kind = model::SamplerConfig::Kind::kSample;
  // The seed is required: every random choice in a scenario is written down.
  config.seed = GetSeed(Require(j, "seed", ctx), "seed", ctx);
  if (const auto it = j.find("temperature"); it != j.end()) {
    const double t = GetNumber(*it, "temperature", ctx);
    if (!(t > 0.0) || !std::isfinite(t)) ctx.Fail("'temperature' must be a finite number above 0");
    // The sampler works in float: a value that overflows it, or underflows
    // it to zero or a subnormal (whose quotients overflow), is refused here,
    // before the engine says hello, rather than failing or sampling junk.
    config.temperature = static_cast<float>(t);
    if (!std::isnormal(config.temperature)) {
      ctx.Fail("'temperature' is " + it->dump() + ", outside the range of a float (" +
               std::to_string(FLT_MIN) + " to " + std::to_string(FLT_MAX) + ")");
    }
  }
  if (const auto it = j.find("top_k"); it != j.end()) {
    config.top_k =
        static_cast<int>(GetInt(*it, "top_k", 0, std::numeric_limits<int32_t>::max(), ctx));
  }
  if (const auto it = j.find("top_p"); it != j.end()) {
    const double p = GetNumber(*it, "top_p", ctx);
    if (!(p > 0.0 && p <= 1.0)) ctx.Fail("'top_p' must be in (0, 1]");
    config.top_p = static_cast<float>(p);
    if (!std::isnormal(config.top_p)) {
      ctx.Fail("'top_p' is " + it->dump() + ", too small for a float (at least " +
               std::to_string(FLT_MIN) + ")");
    }
  }
  return config;
}

ScenarioStep ParseStep(const json& j, size_t index, const Context& ctx) {
  if (!j.is_object()) ctx.Fail("must be an object, not " + std::string(TypeName(j)));
  int kinds = 0;
  for (const char* k : {"prefill", "decode", "extend"}) kinds += j.contains(k) ? 1 : 0;
  if (kinds != 1) ctx.Fail("must have exactly one of 'prefill', 'decode' or 'extend'");
  ScenarioStep step;
  if (const auto it = j.find("prefill"); it != j.end()) {
    CheckKeys(j, ctx, {"prefill", "all_positions"});
    if (*it != "prompt") ctx.Fail("'prefill' must be \"prompt\"");
    if (index != 0) ctx.Fail("'prefill' may only be the first step");
    step.kind = ScenarioStep::Kind::kPrefill;
  } else if (const auto it = j.find("decode"); it != j.end()) {
    CheckKeys(j, ctx, {"decode"});
    step.kind = ScenarioStep::Kind::kDecode;
    step.decode_count = static_cast<int>(GetInt(*it, "decode", 1, kMaxCount, ctx));
  } else {
    CheckKeys(j, ctx, {"extend", "all_positions"});
    step.kind = ScenarioStep::Kind::kExtend;
    step.chunk = ParseTokenSource(j.at("extend"), "extend", ctx);
  }
  if (const auto it = j.find("all_positions"); it != j.end()) {
    if (!it->is_boolean())
      ctx.Fail("'all_positions' must be true or false, not " + std::string(TypeName(*it)));
    step.all_positions = it->get<bool>();
  }
  if (index == 0 && step.kind != ScenarioStep::Kind::kPrefill) {
    ctx.Fail("the first step must be {\"prefill\": \"prompt\"}");
  }
  return step;
}

}  // namespace

const char* StepKindName(ScenarioStep::Kind kind) {
  switch (kind) {
    case ScenarioStep::Kind::kPrefill:
      return "prefill";
    case ScenarioStep::Kind::kDecode:
      return "decode";
    case ScenarioStep::Kind::kExtend:
      return "extend";
  }
  return "?";
}

Scenario ParseScenario(std::string_view json_text, const std::string& file) {
  const Context ctx("scenario " + file);
  json root;
  try {
    root = ParseStrictJson(json_text);
  } catch (const StrictJsonError& e) {
    ctx.Fail(e.what());
  }
  if (!root.is_object())
    ctx.Fail("the top level must be an object, not " + std::string(TypeName(root)));
  CheckKeys(root, ctx, {"name", "description", "prompt", "sampler", "steps"});

  Scenario scenario;
  scenario.file = file;
  const json& name = Require(root, "name", ctx);
  if (!name.is_string() || name.get_ref<const std::string&>().empty()) {
    ctx.Fail("'name' must be a non-empty string");
  }
  scenario.name = name.get<std::string>();
  if (const auto it = root.find("description"); it != root.end() && !it->is_string()) {
    ctx.Fail("'description' must be a string");
  }
  scenario.prompt = ParseTokenSource(Require(root, "prompt", ctx), "prompt", ctx);
  if (const auto it = root.find("sampler"); it != root.end()) {
    scenario.sampler = ParseSampler(*it, ctx.Child("sampler"));
  }
  const json& steps = Require(root, "steps", ctx);
  if (!steps.is_array()) ctx.Fail("'steps' must be an array, not " + std::string(TypeName(steps)));
  if (steps.empty()) ctx.Fail("'steps' must not be empty (start with {\"prefill\": \"prompt\"})");
  for (size_t i = 0; i < steps.size(); ++i) {
    scenario.steps.push_back(ParseStep(steps[i], i, ctx.Child("step " + std::to_string(i))));
  }
  return scenario;
}

Scenario LoadScenario(const std::string& path) {
  std::string text;
  try {
    text = ReadInputFile(path, kMaxScenarioBytes);
  } catch (const InputFileError& e) {
    throw ScenarioError("scenario " + (path.empty() ? std::string("''") : path) + ": " + e.what());
  }
  return ParseScenario(text, path);
}

std::vector<int32_t> RandomTokens(const RandomTokenSpec& spec, int vocab_size) {
  if (spec.first_token < 0 || spec.first_token >= vocab_size) {
    throw std::invalid_argument("random tokens: first_token " + std::to_string(spec.first_token) +
                                " is not below the vocabulary size " + std::to_string(vocab_size));
  }
  const uint64_t range = static_cast<uint64_t>(vocab_size - spec.first_token);
  std::vector<int32_t> tokens(static_cast<size_t>(spec.length));
  for (int i = 0; i < spec.length; ++i) {
    // Counter based, so token i does not depend on how many were drawn before it.
    const uint64_t z = numerics::SplitMix64At(spec.seed, static_cast<uint64_t>(i));
    // A plain modulo: its bias (below 2^-40 for a vocabulary under 2^24
    // ids) does not matter for test prompts, and it is trivial to reproduce elsewhere.
    tokens[static_cast<size_t>(i)] = spec.first_token + static_cast<int32_t>(z % range);
  }
  return tokens;
}

}  // namespace samebits::run
