// Engine profiles (harness/runner/engine_profile.h): samebits' own profile
// reproduces the matrix's configuration names and arguments, names are
// parsed back (any value in a range), and every kind of broken profile is
// refused with its file, key and what was expected.
#include "harness/runner/engine_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/runner/matrix.h"
#include "harness/runner/profile_matrix.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::runner {
namespace {

using ::testing::HasSubstr;

std::string SamebitsProfilePath() {
  return std::string(SAMEBITS_SOURCE_DIR) + "/engines/samebits.json";
}

const EngineProfile& Samebits() {
  static const EngineProfile profile = LoadEngineProfile(SamebitsProfilePath());
  return profile;
}

// A small profile of a made-up engine; `edit` changes its JSON before it is
// parsed.
nlohmann::json Minimal() {
  return nlohmann::json::parse(R"({
    "profile": 1,
    "name": "toy",
    "command": ["bin/toy-engine", "go"],
    "checkpoints": ["gguf"],
    "arguments": ["--model", "{checkpoint}", "--scenario={scenario}"],
    "dump_logits": ["--logits", "{file}"],
    "axes": [
      {"name": "attention", "values": ["flash", "plain"], "token": "{value}",
       "argv": ["--attention", "{value}"]},
      {"name": "ubatch", "range": [1, 512], "default": "512", "token": "ub{value}",
       "argv": ["--ubatch={value}"]}
    ],
    "baseline": "plain",
    "hello": [{"key": "config.attention", "value": "{attention}"},
              {"key": "config.ubatch", "value": "{ubatch}", "unless": {"attention": "plain"}}],
    "known_differences": [{"axis": "attention", "values": ["flash"],
                           "checkpoints": ["gguf:*q4_k*"], "reason": "flash attention sums in another order"}]
  })");
}

EngineProfile Parse(const nlohmann::json& j) {
  return ParseEngineProfile(j.dump(), "/profiles/toy.json");
}

// Expects `j` to be refused naming `key` with `expected` in the message.
void ExpectRefused(const nlohmann::json& j, const std::string& key, const std::string& expected) {
  try {
    Parse(j);
    ADD_FAILURE() << "accepted a profile broken at " << key;
  } catch (const ProfileError& e) {
    EXPECT_EQ(e.file, "/profiles/toy.json");
    EXPECT_EQ(e.key, key) << e.what();
    EXPECT_THAT(e.what(), HasSubstr(expected));
    EXPECT_THAT(e.what(), HasSubstr("/profiles/toy.json: " + (key.empty() ? "" : key + ": ")));
  }
}

TEST(EngineProfile, SamebitsProfileNamesEveryDefaultConfigurationAsTheMatrixDoes) {
  const EngineProfile& p = Samebits();
  EXPECT_EQ(p.name, "samebits");
  EXPECT_EQ(p.baseline.name, "reference");
  const std::vector<harness::Configuration> all =
      DefaultConfigurations(p, {1, 2, 3}, {"portable", "libm"}, 8192, {"exact", "int8"});
  ASSERT_FALSE(all.empty());
  for (const harness::Configuration& c : all) {
    const EngineConfiguration e = ParseConfigurationName(p, c.name);
    EXPECT_EQ(e.values.at("kernels"), c.kernels) << c.name;
    EXPECT_EQ(e.values.at("threads"), std::to_string(c.threads)) << c.name;
    EXPECT_EQ(e.values.at("isa"), c.isa) << c.name;
    EXPECT_EQ(e.values.at("gemv_chunk_bytes"), std::to_string(c.gemv_chunk_bytes)) << c.name;
    EXPECT_EQ(e.values.at("math"), c.math) << c.name;
    EXPECT_EQ(e.values.at("quant_dot"), c.quant_dot) << c.name;
    EXPECT_EQ(e.values.at("batch"), std::to_string(c.batch)) << c.name;
    EXPECT_EQ(e.values.at("batch_seed"), std::to_string(c.batch_seed)) << c.name;
    EXPECT_EQ(e.values.at("batch_schedule"), c.batch_schedule) << c.name;
  }
}

// samebits-engine's hello must echo the dot-product profile a cell asked
// for: an engine that ran the exact profile (one older than --quant-dot,
// which ignores it) fails an int8 cell loudly.
TEST(EngineProfile, SamebitsHelloMustEchoTheQuantDotProfile) {
  const EngineProfile& p = Samebits();
  nlohmann::json hello = {{"type", "hello"},
                          {"math", {{"profile", "portable"}}},
                          {"config", {{"kernels", "cpu"}, {"threads", 1}, {"math", "portable"}}}};
  const EngineConfiguration exact = ParseConfigurationName(p, "cpu-t1");
  const EngineConfiguration int8 = ParseConfigurationName(p, "cpu-t1-int8");
  EXPECT_EQ(int8.values.at("quant_dot"), "int8");
  EXPECT_EQ(HelloMismatch(p, exact, hello), "");
  EXPECT_EQ(HelloMismatch(p, int8, hello), "config.quant_dot is missing, expected int8");
  hello["config"]["quant_dot"] = "int8";
  EXPECT_EQ(HelloMismatch(p, int8, hello), "");
  // Only a cell that asks for int8 names its profile on the command line.
  const auto args = [&](const EngineConfiguration& c) {
    return BuildArguments(p, c, "synthetic:tiny", "/s/classic.json", false, "");
  };
  const std::vector<std::string> without = args(exact);
  EXPECT_EQ(std::count(without.begin(), without.end(), "--quant-dot"), 0);
  const std::vector<std::string> with = args(int8);
  const auto at = std::find(with.begin(), with.end(), "--quant-dot");
  ASSERT_NE(at, with.end());
  ASSERT_NE(at + 1, with.end());
  EXPECT_EQ(*(at + 1), "int8");
}

// The int8 profile differs from the exact one by design on quantized
// weights (the card says KNOWN), and gives the same bits on F32, F16 and
// BF16 ones, where a declaration would turn an agreement into FIXED.
TEST(EngineProfile, SamebitsDeclaresInt8ToDifferOnQuantizedWeightsOnly) {
  const EngineProfile& p = Samebits();
  const EngineConfiguration int8 = ParseConfigurationName(p, "cpu-t1-int8");
  for (const char* quantized :
       {"synthetic:tiny-q4_0", "synthetic:tiny-q5_1", "synthetic:medium-q8_0",
        "synthetic:medium-q4_k", "synthetic:medium-q6_k",
        "gguf:../shared/checkpoints/small_dense_qwen3_q4_k_m.gguf",
        "gguf:../shared/checkpoints/small_dense_qwen3_q8_0.gguf",
        "gguf:../shared/checkpoints/small_dense_qwen3_q6_k.gguf"}) {
    const KnownDifference* k = FindKnownDifference(p, p.baseline, int8, quantized, "classic");
    ASSERT_NE(k, nullptr) << quantized;
    EXPECT_EQ(k->axis, "quant_dot") << quantized;
  }
  for (const char* unquantized :
       {"synthetic:tiny", "synthetic:medium", "synthetic:tiny-bf16", "synthetic:gemma",
        "gguf:../shared/checkpoints/small_dense_qwen3_q4_k_m.deq-f32.gguf",
        "gguf:../shared/checkpoints/tiny_dense_llama_f32.gguf",
        "gguf:../shared/checkpoints/stories260K.gguf"}) {
    EXPECT_EQ(FindKnownDifference(p, p.baseline, int8, unquantized, "classic"), nullptr)
        << unquantized;
  }
  EXPECT_EQ(FindKnownDifference(p, p.baseline, ParseConfigurationName(p, "cpu-t1"),
                                "synthetic:medium-q4_k", "classic"),
            nullptr);
  // A cell of the profile's configuration (samebits card, conform) knows its
  // dot-product profile, and why it is declared to differ.
  const harness::Configuration cell =
      ProfileConfiguration(p, int8, "synthetic:medium-q4_k", "classic");
  EXPECT_EQ(cell.quant_dot, "int8");
  EXPECT_EQ(cell.math, "portable");
  EXPECT_NE(cell.known_difference.find("int8 per block"), std::string::npos);
  EXPECT_EQ(ProfileConfiguration(p, int8, "synthetic:tiny", "classic").known_difference, "");
}

TEST(EngineProfile, AnyValueInARangeIsAcceptedWithoutOtherFlags) {
  const EngineConfiguration c = ParseConfigurationName(Samebits(), "cpu-t4");
  EXPECT_EQ(c.values.at("threads"), "4");
  EXPECT_EQ(ParseConfigurationName(Samebits(), "cpu-t1000").values.at("threads"), "1000");
  EXPECT_EQ(ParseConfigurationName(Samebits(), "cpu-t7-chunk3k").values.at("gemv_chunk_bytes"),
            "3072");
  EXPECT_EQ(ParseConfigurationName(Samebits(), "cpu-t2-chunk500").values.at("gemv_chunk_bytes"),
            "500");
  EXPECT_EQ(ParseConfigurationName(Samebits(), "cpu-avx2-b4-seed7-libm").values.at("batch_seed"),
            "7");
}

TEST(EngineProfile, NamesAreFormattedFromValuesWithUnits) {
  EXPECT_EQ(FormatConfigurationName(Samebits(), {{"kernels", "cpu"},
                                                 {"threads", "3"},
                                                 {"gemv_chunk_bytes", "8192"},
                                                 {"batch", "8"},
                                                 {"batch_schedule", "staggered"}}),
            "cpu-t3-chunk8k-b8-staggered");
  EXPECT_EQ(FormatConfigurationName(Samebits(), {{"kernels", "reference"}, {"math", "libm"}}),
            "reference-libm");
  EXPECT_THROW(FormatConfigurationName(Samebits(), {{"threads", "2"}}), ConfigurationNameError);
  EXPECT_THROW(FormatConfigurationName(Samebits(), {{"kernels", "gpu"}}), ConfigurationNameError);
  EXPECT_THROW(FormatConfigurationName(Samebits(), {{"kernels", "cpu"}, {"colour", "red"}}),
               ConfigurationNameError);
}

TEST(EngineProfile, BadNamesSayWhatIsWrong) {
  const auto message = [](const std::string& name) -> std::string {
    try {
      ParseConfigurationName(Samebits(), name);
    } catch (const ConfigurationNameError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_THAT(message("cpu-b1"), HasSubstr("names batch's default (1); leave it out"));
  EXPECT_THAT(message("cpu-t2-b4-together"), HasSubstr("batch_schedule's default"));
  EXPECT_THAT(message("cpu-t2-b4-seed1"), HasSubstr("batch_seed's default"));
  // A part of an axis's shape whose value the axis does not take says so.
  EXPECT_THAT(
      message("cpu-t2000"),
      HasSubstr("'t2000' asks for threads 2000, which is not a whole number from 1 to 1024"));
  EXPECT_THAT(message("cpu-t02"), HasSubstr("'t02' is not a part this engine's names take"));
  EXPECT_THAT(message("cpu-libm-t2"), HasSubstr("expected, in this order: quant_dot as {value}"));
  EXPECT_THAT(message("cpu-libm-int8-t2"), HasSubstr("nothing may follow the last axis"));
  EXPECT_THAT(message("cpu-int8-libm"), HasSubstr("nothing may follow the last axis"));
  EXPECT_THAT(message("cpu-t2-exact"),
              HasSubstr("names quant_dot's default (exact); leave it out"));
  EXPECT_THAT(message("cpu-avx2-t2"), HasSubstr("expected, in this order: batch as b{value}"));
  EXPECT_THAT(message("t2"), HasSubstr("gives no kernels"));
  EXPECT_THAT(message("cpu--t2"), HasSubstr("an empty part"));
  EXPECT_THAT(message("cpu-t02"), HasSubstr("'t02' is not a part"));
  EXPECT_THAT(message("cpu-t2-chunk0k"), HasSubstr("'chunk0k' is not a part"));
}

TEST(EngineProfile, HelloEchoIsOneGenericComparison) {
  const EngineProfile p = Parse(Minimal());
  const EngineConfiguration flash = ParseConfigurationName(p, "flash-ub64");
  nlohmann::json hello = {{"type", "hello"}, {"config", {{"attention", "flash"}, {"ubatch", 64}}}};
  EXPECT_EQ(HelloMismatch(p, flash, hello), "");
  hello["config"]["ubatch"] = 512;
  EXPECT_EQ(HelloMismatch(p, flash, hello), "config.ubatch is 512, expected 64");
  hello["config"].erase("attention");
  EXPECT_EQ(HelloMismatch(p, flash, hello),
            "config.attention is missing, expected flash; config.ubatch is 512, expected 64");
  // `unless`: the plain configuration need not echo its ubatch.
  const nlohmann::json plain = {{"config", {{"attention", "plain"}}}};
  EXPECT_EQ(HelloMismatch(p, ParseConfigurationName(p, "plain-ub64"), plain), "");
}

TEST(EngineProfile, ArgumentsAreAListAndValuesStayOneArgument) {
  const EngineProfile p = Parse(Minimal());
  const std::vector<std::string> args =
      BuildArguments(p, ParseConfigurationName(p, "flash-ub64"), "gguf:/m/a b; rm -rf x.gguf",
                     "/s/c.json", false, "/d/out.f32");
  EXPECT_EQ(args, (std::vector<std::string>{"go", "--model", "gguf:/m/a b; rm -rf x.gguf",
                                            "--scenario=/s/c.json", "--attention", "flash",
                                            "--ubatch=64", "--logits", "/d/out.f32"}));
}

// `argv_order` orders the axes' argv (the rest follow in axis order), and
// the two parts a shared child is given make the whole command line.
TEST(EngineProfile, ArgvOrderOrdersTheAxesArgvAndThePartsMakeTheWhole) {
  nlohmann::json j = Minimal();
  j["argv_order"] = {"ubatch"};
  const EngineProfile p = Parse(j);
  EXPECT_EQ(p.argv_order, (std::vector<std::string>{"ubatch", "attention"}));
  const EngineConfiguration c = ParseConfigurationName(p, "flash-ub64");
  EXPECT_EQ(
      BuildArguments(p, c, "gguf:/m/a.gguf", "/s/c.json", false, "/d/out.f32"),
      (std::vector<std::string>{"go", "--model", "gguf:/m/a.gguf", "--scenario=/s/c.json",
                                "--ubatch=64", "--attention", "flash", "--logits", "/d/out.f32"}));
  EXPECT_EQ(BuildConfigurationArguments(p, c, false),
            (std::vector<std::string>{"go", "--ubatch=64", "--attention", "flash"}));
  EXPECT_EQ(BuildCellArguments(p, c, "gguf:/m/a.gguf", "/s/c.json", "/d/out.f32"),
            (std::vector<std::string>{"--model", "gguf:/m/a.gguf", "--scenario=/s/c.json",
                                      "--logits", "/d/out.f32"}));
  // Without it: axis order.
  EXPECT_EQ(Parse(Minimal()).argv_order, (std::vector<std::string>{"attention", "ubatch"}));
}

TEST(EngineProfile, ArgvOrderNamesEachAxisAtMostOnce) {
  nlohmann::json j = Minimal();
  j["argv_order"] = {"ubatch", "threads"};
  ExpectRefused(j, "argv_order[1]", "expected the name of an axis, not 'threads'");
  j["argv_order"] = {"ubatch", "ubatch"};
  ExpectRefused(j, "argv_order[1]", "expected each axis once");
  j["argv_order"] = nlohmann::json::array();
  ExpectRefused(j, "argv_order", "expected at least one string");
}

// A declaration explains a difference along its own axis only: judged
// against another baseline (a card's --baseline), a configuration that
// keeps that baseline's value on the declared axis is not covered by it,
// and the baseline's old value now differs as declared. The PyTorch
// adapter's GPU card (baseline t1-cuda) is the case: its `device`
// declaration covers the CPU row, not every CUDA row.
TEST(EngineProfile, KnownDifferencesApplyOnlyWhereTheAxisLeavesTheBaseline) {
  const EngineProfile p = Parse(Minimal());
  const EngineConfiguration flash = ParseConfigurationName(p, "flash");
  const EngineConfiguration flash64 = ParseConfigurationName(p, "flash-ub64");
  const EngineConfiguration plain = ParseConfigurationName(p, "plain");
  const std::string q4k = "gguf:/m/llama-q4_k_m.gguf";
  EXPECT_NE(FindKnownDifference(p, plain, flash64, q4k, "classic"), nullptr);
  EXPECT_EQ(FindKnownDifference(p, flash, flash64, q4k, "classic"), nullptr);
  nlohmann::json both = Minimal();
  both["known_differences"][0]["values"] = {"flash", "plain"};
  const EngineProfile q = Parse(both);
  EXPECT_NE(FindKnownDifference(q, flash, plain, q4k, "classic"), nullptr);
  EXPECT_EQ(FindKnownDifference(q, flash, flash64, q4k, "classic"), nullptr);
}

TEST(EngineProfile, KnownDifferencesMatchAxisValueCheckpointAndScenario) {
  const EngineProfile p = Parse(Minimal());
  const EngineConfiguration flash = ParseConfigurationName(p, "flash");
  const KnownDifference* k =
      FindKnownDifference(p, p.baseline, flash, "gguf:/m/llama-q4_k_m.gguf", "classic");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->reason, "flash attention sums in another order");
  EXPECT_EQ(FindKnownDifference(p, p.baseline, flash, "gguf:/m/llama-f16.gguf", "classic"),
            nullptr);
  EXPECT_EQ(FindKnownDifference(p, p.baseline, ParseConfigurationName(p, "plain"),
                                "gguf:/m/llama-q4_k_m.gguf", "classic"),
            nullptr);
  // Without values: any value but the baseline's.
  nlohmann::json j = Minimal();
  j["known_differences"][0].erase("values");
  j["known_differences"][0].erase("checkpoints");
  const EngineProfile any = Parse(j);
  EXPECT_NE(
      FindKnownDifference(any, any.baseline, ParseConfigurationName(any, "flash"), "x", "classic"),
      nullptr);
  EXPECT_EQ(FindKnownDifference(any, any.baseline, ParseConfigurationName(any, "plain-ub8"), "x",
                                "classic"),
            nullptr);
  // Limited to scenarios: only those (a chunk longer than a micro-batch is
  // split only where a scenario feeds one).
  j["known_differences"][0]["scenarios"] = {"win*", "long"};
  const EngineProfile some = Parse(j);
  const EngineConfiguration f = ParseConfigurationName(some, "flash");
  EXPECT_NE(FindKnownDifference(some, some.baseline, f, "x", "window"), nullptr);
  EXPECT_NE(FindKnownDifference(some, some.baseline, f, "x", "long"), nullptr);
  EXPECT_EQ(FindKnownDifference(some, some.baseline, f, "x", "classic"), nullptr);
  EXPECT_EQ(FindKnownDifference(some, some.baseline, f, "x", ""), nullptr);
  j["known_differences"][0]["scenarios"] = nlohmann::json::array();
  ExpectRefused(j, "known_differences[0].scenarios", "");
}

TEST(EngineProfile, TheProgramIsFoundBesideTheProfileOrOnPath) {
  harness::testing::TempDir dir;
  const std::string program = dir.File("bin/toy-engine");
  harness::testing::WriteFile(program, "#!/bin/sh\n");
  nlohmann::json j = Minimal();
  EngineProfile p = ParseEngineProfile(j.dump(), dir.File("toy.json"));
  EXPECT_THROW(ResolveProgram(p), ProfileError);  // not executable yet
  ::chmod(program.c_str(), 0755);
  EXPECT_EQ(ResolveProgram(p), program);
  j["command"] = {"sh", "-c"};
  EXPECT_THAT(ResolveProgram(ParseEngineProfile(j.dump(), dir.File("toy.json"))), HasSubstr("/sh"));
  j["command"] = {"no-such-engine-on-path-xyz"};
  try {
    ResolveProgram(ParseEngineProfile(j.dump(), dir.File("toy.json")));
    ADD_FAILURE() << "found a program that does not exist";
  } catch (const ProfileError& e) {
    EXPECT_EQ(e.key, "command[0]");
    EXPECT_THAT(e.what(), HasSubstr("no 'no-such-engine-on-path-xyz' was found"));
  }
}

TEST(EngineProfile, FindsEnginesByName) {
  const std::string engines = std::string(SAMEBITS_SOURCE_DIR) + "/engines";
  EXPECT_EQ(FindEngineProfile(engines, "samebits"), engines + "/samebits.json");
  EXPECT_EQ(FindEngineProfile(engines, "nonexistent"), "");
  EXPECT_EQ(FindEngineProfile(engines, "../engines/samebits"), "");
  EXPECT_EQ(FindEngineProfile(engines, "/bin/sh"), "");
  // A dot belongs to a name (llama.cpp); a name cannot start with one.
  EXPECT_EQ(FindEngineProfile(engines, "llama.cpp"), engines + "/llama.cpp.json");
  EXPECT_EQ(FindEngineProfile(engines, ".samebits"), "");
  EXPECT_EQ(FindEngineProfile(engines, ".."), "");
}

TEST(EngineProfile, TheCardsNegativeControlIsAConfigurationOtherThanItsBaseline) {
  nlohmann::json j = Minimal();
  j["card"] = {{"control", {{"configuration", "flash"}, {"reason", "sums in another order"}}}};
  const EngineProfile p = Parse(j);
  ASSERT_TRUE(p.card_control.has_value());
  EXPECT_EQ(p.card_control->name, "flash");
  EXPECT_EQ(p.card_control->values.at("attention"), "flash");
  EXPECT_EQ(p.card_control_reason, "sums in another order");
  EXPECT_FALSE(Parse(Minimal()).card_control.has_value());

  j["card"]["control"]["configuration"] = "plain";
  ExpectRefused(j, "card.control.configuration", "other than the card's baseline");
  j["card"]["control"]["configuration"] = "flash-ub9999";
  ExpectRefused(j, "card.control.configuration", "expected a configuration name");
  j["card"]["control"] = {{"configuration", "flash"}};
  ExpectRefused(j, "card.control", "expected {\"configuration\": NAME, \"reason\": TEXT}");
  j["card"]["control"] = {{"configuration", "flash"}, {"reason", "x"}, {"colour", "red"}};
  ExpectRefused(j, "card.control.colour", "is not a key");
}

TEST(EngineProfileErrors, TheDocumentAndItsKeys) {
  ExpectRefused(nlohmann::json::array(), "", "expected an object");
  try {
    ParseEngineProfile("{not json", "/profiles/toy.json");
    ADD_FAILURE();
  } catch (const ProfileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected a JSON document"));
  }
  nlohmann::json j = Minimal();
  j["comand"] = {"x"};
  ExpectRefused(j, "comand", "is not a key of a profile here");
  j = Minimal();
  j.erase("command");
  ExpectRefused(j, "command", "is missing (required)");
  j = Minimal();
  j["profile"] = 2;
  ExpectRefused(j, "profile", "expected 1");
  j = Minimal();
  j["name"] = "Toy Engine";
  ExpectRefused(j, "name", "expected lower-case letters");
  j["name"] = ".toy";
  ExpectRefused(j, "name", "from a letter or digit");
  j = Minimal();
  j["command"] = nlohmann::json::array();
  ExpectRefused(j, "command", "expected at least one string");
  j = Minimal();
  j["command"] = {"toy", 3};
  ExpectRefused(j, "command[1]", "expected a string");
  j = Minimal();
  j["command"] = {"toy", "{checkpoint}"};
  ExpectRefused(j, "command[1]", "uses {checkpoint}, which is not known here (known: none)");
  j = Minimal();
  j["checkpoints"] = {"GGUF files"};
  ExpectRefused(j, "checkpoints[0]", "expected a checkpoint kind");
  j = Minimal();
  j["conformance"] = {{"max_nmse", -1}};
  ExpectRefused(j, "conformance.max_nmse", "expected a number of at least 0");
}

TEST(EngineProfileErrors, Axes) {
  nlohmann::json j = Minimal();
  j["axes"] = nlohmann::json::array();
  ExpectRefused(j, "axes", "expected an array of at least one axis");
  j = Minimal();
  j["axes"][0]["default"] = "plain";
  ExpectRefused(j, "axes", "expected an axis without a default");
  j = Minimal();
  j["axes"][1]["name"] = "attention";
  ExpectRefused(j, "axes[1].name", "'attention' names two axes");
  j = Minimal();
  j["axes"][1]["name"] = "Ubatch";
  ExpectRefused(j, "axes[1].name", "expected a name of lower-case letters");
  j = Minimal();
  j["axes"][1]["name"] = "checkpoint";
  ExpectRefused(j, "axes[1].name", "reserved for a placeholder");
  j = Minimal();
  j["axes"][0]["range"] = {1, 2};
  ExpectRefused(j, "axes[0]", "expected exactly one of 'values' and 'range'");
  j = Minimal();
  j["axes"][0]["values"] = {"flash", "--rm"};
  ExpectRefused(j, "axes[0].values[1]", "expected letters, digits");
  j = Minimal();
  j["axes"][0]["values"] = {"flash", "flash"};
  ExpectRefused(j, "axes[0].values[1]", "listed twice");
  j = Minimal();
  j["axes"][1]["range"] = {8, 4};
  ExpectRefused(j, "axes[1].range", "expected 0 <= MIN <= MAX");
  j = Minimal();
  j["axes"][1]["range"] = {1, "many"};
  ExpectRefused(j, "axes[1].range[1]", "expected a whole number");
  j = Minimal();
  j["axes"][1]["default"] = "1024";
  ExpectRefused(j, "axes[1].default",
                "is not a value of the axis (expected a whole number from 1 to 512");
  j = Minimal();
  j["axes"][1]["default"] = 512;
  ExpectRefused(j, "axes[1].default", "expected a string");
  j = Minimal();
  j["axes"][1]["token"] = "ub";
  ExpectRefused(j, "axes[1].token", "expected {value} once");
  j = Minimal();
  j["axes"][1]["token"] = "u-b{value}";
  ExpectRefused(j, "axes[1].token", "expected {value} once");
  j = Minimal();
  j["axes"][0]["units"] = {{"k", 1024}};
  ExpectRefused(j, "axes[0].units", "only a 'range' axis takes units");
  j = Minimal();
  j["axes"][1]["units"] = {{"k", 1}};
  ExpectRefused(j, "axes[1].units.k", "expected a factor of at least 2");
  j = Minimal();
  j["axes"][0]["name_default"] = true;
  ExpectRefused(j, "axes[0].name_default", "has no default to name");
  j = Minimal();
  j["axes"][1]["argv"] = {"--ubatch", "{colour}"};
  ExpectRefused(j, "axes[1].argv[1]", "uses {colour}, which is not known here");
  j = Minimal();
  j["axes"][1]["argv"] = {"--ubatch", "{value"};
  ExpectRefused(j, "axes[1].argv[1]", "paired braces");
  j = Minimal();
  j["axes"][1].erase("argv");
  ExpectRefused(j, "axes[1].argv", "is missing (required)");
  j = Minimal();
  j["axes"][0]["argv_at_default"] = false;
  ExpectRefused(j, "axes[0].argv_at_default", "the axis has no default");
}

TEST(EngineProfileErrors, ArgumentsBaselineHelloAndKnownDifferences) {
  nlohmann::json j = Minimal();
  j["arguments"] = {"--model", "{checkpoint}"};
  ExpectRefused(j, "arguments", "expected {scenario} in one of the arguments");
  j = Minimal();
  j["dump_logits"] = {"--logits"};
  ExpectRefused(j, "dump_logits", "expected {file} in one");
  j = Minimal();
  j["baseline"] = "plain-ub1024";
  ExpectRefused(j, "baseline", "expected a configuration name: configuration 'plain-ub1024'");
  j = Minimal();
  j["hello"][0]["key"] = "";
  ExpectRefused(j, "hello[0].key", "expected a non-empty string");
  j = Minimal();
  j["hello"][1]["unless"] = {{"colour", "red"}};
  ExpectRefused(j, "hello[1].unless.colour", "expected an axis's name");
  j = Minimal();
  j["hello"][1]["unless"] = {{"attention", "fast"}};
  ExpectRefused(j, "hello[1].unless.attention", "expected one of flash, plain");
  j = Minimal();
  j["hello"][0]["value"] = "{colour}";
  ExpectRefused(j, "hello[0].value", "uses {colour}");
  j = Minimal();
  j["known_differences"][0]["axis"] = "colour";
  ExpectRefused(j, "known_differences[0].axis",
                "expected an axis's name (or 'feed', the card's feed table), not 'colour'");
  j = Minimal();
  j["known_differences"][0]["values"] = {"fast"};
  ExpectRefused(j, "known_differences[0].values[0]", "expected one of flash, plain");
  j = Minimal();
  j["known_differences"][0].erase("reason");
  ExpectRefused(j, "known_differences[0].reason", "is missing (required)");
  j = Minimal();
  j["known_differences"][0]["why"] = "x";
  ExpectRefused(j, "known_differences[0].why", "is not a key of a profile here");
}

TEST(EngineProfileErrors, AnUnreadableFileIsNamed) {
  try {
    LoadEngineProfile("/nonexistent/engines/x.json");
    ADD_FAILURE();
  } catch (const ProfileError& e) {
    EXPECT_EQ(std::string(e.what()),
              "/nonexistent/engines/x.json: cannot be read: no such file (a profile is at most "
              "1048576 bytes)");
  }
}

// samebits-engine's own profile as JSON, to break one key of it.
nlohmann::json SamebitsJson() {
  std::ifstream in(SamebitsProfilePath());
  return nlohmann::json::parse(in);
}

// A broken template in samebits-engine's matrix is refused when the profile
// is loaded, naming the entry and the placeholders there are.
TEST(EngineProfileErrors, TheMatrixTemplatesOfSamebitsEngine) {
  nlohmann::json j = SamebitsJson();
  j["matrix"]["configurations"][1] = "cpu-t{each:thread}";
  ExpectRefused(j, "matrix.configurations[1]", "expected placeholders among {each:threads}");
  ExpectRefused(j, "matrix.configurations[1]", "not {each:thread}");
  j["matrix"]["configurations"][1] = "cpu-t{max:threads";
  ExpectRefused(j, "matrix.configurations[1]", "expected each '{' closed by a '}'");
  j["matrix"]["configurations"][1] = "cpu-t{each:threads}-{each:isa}";
  ExpectRefused(j, "matrix.configurations[1]", "at most one {each:...} placeholder");
  // Another engine's names draw on no --threads or --math of the harness.
  j = Minimal();
  j["matrix"] = {{"configurations", {"plain", "ub{max:threads}"}}};
  ExpectRefused(j, "matrix.configurations[1]", "only its profile (name samebits)");
}

// A template whose names the grammar does not read, or no templates at all,
// is refused when the matrix is expanded (before any child), with the file
// and the entry.
TEST(EngineProfileErrors, TheMatrixOfSamebitsEngineExpands) {
  nlohmann::json j = SamebitsJson();
  j["matrix"]["configurations"][2] = "cpu-t{max:threads}-fast";
  const EngineProfile bad_name = Parse(j);
  try {
    DefaultConfigurations(bad_name, {1, 2}, {"portable"}, 8192);
    ADD_FAILURE() << "expanded a template to a name the profile does not take";
  } catch (const ProfileError& e) {
    EXPECT_EQ(e.key, "matrix.configurations[2]");
    EXPECT_THAT(e.what(), HasSubstr("/profiles/toy.json: matrix.configurations[2]: expected a "
                                    "template of configuration names; it gave 'cpu-t2-fast'"));
  }
  j["matrix"].erase("configurations");
  const EngineProfile none = Parse(j);
  try {
    DefaultConfigurations(none, {1}, {"portable"}, 8192);
    ADD_FAILURE() << "expanded a matrix without configurations";
  } catch (const ProfileError& e) {
    EXPECT_EQ(e.key, "matrix.configurations");
    EXPECT_THAT(e.what(), HasSubstr("is missing"));
  }
}

}  // namespace
}  // namespace samebits::runner
