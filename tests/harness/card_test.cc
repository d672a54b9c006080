// `samebits card` end to end: the stand-in engine through a profile, whose
// only fault is at 3 threads, gets a card naming exactly that axis and
// value; a declared difference is KNOWN, and FIXED once it stops
// differing; and the minimal Python adapter (adapters/minimal-python), with
// axes the harness has never heard of, is gated through its own profile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Returns the number of times `needle` occurs in `text`.
int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class Card : public ::testing::Test {
 protected:
  // Runs `samebits card` on the stand-in under `fault` with `profile`.
  CommandResult RunCard(const std::string& fault, const std::string& profile,
                        const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {BinDir() + "/samebits",
                                     "card",
                                     "--engine-profile",
                                     profile,
                                     "--program",
                                     FaultyEngine(dir_.path(), fault),
                                     "--checkpoint",
                                     "synthetic:tiny",
                                     "--scenario",
                                     WriteScenario(dir_.path())};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }

  // Writes the stand-in's profile with `known` as its known differences.
  std::string ProfileWith(const nlohmann::json& known) {
    std::ifstream in(Source("tests/standins/standin_profile.json"));
    nlohmann::json j = nlohmann::json::parse(in);
    j["known_differences"] = known;
    const std::string path = (dir_.path() / "profile.json").string();
    std::ofstream(path) << j.dump(2);
    return path;
  }

  TempDir dir_{"card"};
};

TEST_F(Card, AStandinThatDiffersOnlyAtThreeThreadsNamesExactlyThatAxis) {
  const std::string html = (dir_.path() / "card.html").string();
  const CommandResult r =
      RunCard("wrong-hash-at-3-threads", Source("tests/standins/standin_profile.json"),
              {"--report-html", html});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("| threads | 3 | cpu-t3 | differs from step 3 (position"));
  EXPECT_THAT(r.output, HasSubstr("| threads | 2 | cpu-t2 | identical |"));
  EXPECT_THAT(r.output, HasSubstr("| kernels | reference | reference | identical |"));
  EXPECT_EQ(Count(r.output, "differs from step"), 1) << r.output;
  // One logit one ulp away: an NMSE measured at the first difference, the
  // argmax where it was.
  const size_t at = r.output.find("| threads | 3 |");
  ASSERT_NE(at, std::string::npos);
  const std::string row = r.output.substr(at, r.output.find('\n', at) - at);
  EXPECT_THAT(row, Not(HasSubstr("| - |"))) << row;
  EXPECT_THAT(row, HasSubstr("| no |")) << row;
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(page, HasSubstr("<svg"));
  EXPECT_THAT(page, HasSubstr("<tr class=\"DIFFERS\"><td>threads</td><td>3</td>"));
}

TEST_F(Card, ADeclaredDifferenceIsKnownAndFixedWhenItStopsDiffering) {
  const std::string profile = ProfileWith(nlohmann::json::parse(
      R"([{"axis": "threads", "values": ["3"], "reason": "a test's declared difference"}])"));
  const CommandResult known = RunCard("wrong-hash-at-3-threads", profile);
  EXPECT_EQ(known.exit_code, 0) << known.output;
  EXPECT_THAT(known.output, HasSubstr("| cpu-t3 | KNOWN: differs from step 3"));
  EXPECT_THAT(known.output, HasSubstr("cpu-t3: declared: a test's declared difference"));
  const CommandResult fixed = RunCard("ok", profile);
  EXPECT_EQ(fixed.exit_code, 1) << fixed.output;
  EXPECT_THAT(fixed.output, HasSubstr("| cpu-t3 | FIXED: identical, though declared to differ |"));
}

// --feed: the prompt fed whole, as a prefill and one extend, and token by
// token, row for row. samebits-engine gives the same bits all three ways;
// the stand-in, whose hashes depend on the scenario's name, differs from
// the first row, which a profile may declare on axis `feed`.
TEST_F(Card, TheFeedTableComparesThePromptFedThreeWays) {
  const CommandResult own =
      RunCommand({BinDir() + "/samebits", "card", "--engine-profile", OwnEngineProfile(dir_.path()),
                  "--checkpoint", "synthetic:tiny", "--feed"});
  EXPECT_EQ(own.exit_code, 0) << own.output;
  EXPECT_THAT(own.output, HasSubstr("feed: chunk-prefill-12 (whole) vs chunk-extend-6 (extend), "
                                    "chunk-extend-1x6 (token)"));
  EXPECT_THAT(own.output, HasSubstr("| feed | extend | cpu-t1 on chunk-extend-6 | identical |"));
  EXPECT_THAT(own.output, HasSubstr("| feed | token | cpu-t1 on chunk-extend-1x6 | identical |"));

  const CommandResult standin =
      RunCard("ok", Source("tests/standins/standin_profile.json"), {"--feed"});
  EXPECT_EQ(standin.exit_code, 1) << standin.output;
  EXPECT_THAT(standin.output, HasSubstr("| feed | extend |"));
  EXPECT_EQ(Count(standin.output, "differs from step 0"), 2) << standin.output;
  const std::string declared = ProfileWith(nlohmann::json::parse(
      R"([{"axis": "feed", "values": ["extend", "token"], "reason": "fed differently"}])"));
  const CommandResult known = RunCard("ok", declared, {"--feed"});
  EXPECT_EQ(known.exit_code, 0) << known.output;
  EXPECT_EQ(Count(known.output, "KNOWN: differs from step 0"), 2) << known.output;
}

TEST_F(Card, ACardWhoseControlDoesNotDifferIsInvalid) {
  std::ifstream in(Source("tests/standins/standin_profile.json"));
  nlohmann::json j = nlohmann::json::parse(in);
  j["card"]["control"] = {{"configuration", "cpu-t3"}, {"reason", "three threads differ"}};
  const std::string profile = (dir_.path() / "control.json").string();
  std::ofstream(profile) << j.dump(2);

  // The stand-in differs at three threads: the control is seen, and since
  // the profile does not declare threads 3, the row of that axis fails.
  const CommandResult seen = RunCard("wrong-hash-at-3-threads", profile);
  EXPECT_EQ(seen.exit_code, 1) << seen.output;
  EXPECT_THAT(seen.output, HasSubstr("probe power: the control cpu-t3 differs from the baseline "
                                     "in 1 of 1 tables, from step 3"));
  EXPECT_THAT(seen.output, HasSubstr("| negative control (cpu-t3) | K3 |"));
  EXPECT_THAT(seen.output, HasSubstr("| threads = 3 (cpu-t3) | **D3** |"));

  // A stand-in blind to the perturbation: every row identical, and yet the
  // card fails, saying why.
  const CommandResult blind = RunCard("ok", profile);
  EXPECT_EQ(blind.exit_code, 1) << blind.output;
  EXPECT_THAT(blind.output,
              HasSubstr("samebits: card: probe power: NONE: the control cpu-t3 is identical to "
                        "the baseline on synthetic:tiny / standin"));
  EXPECT_THAT(blind.output, HasSubstr("| negative control (cpu-t3) | **F** |"));
}

TEST_F(Card, ABrokenProfileIsRefusedBeforeAnyChildRuns) {
  const std::string profile =
      ProfileWith(nlohmann::json::parse(R"([{"axis": "colour", "reason": "no such axis"}])"));
  // A hanging engine would take the timeout if anything ran.
  const CommandResult r = RunCard("hang", profile, {"--timeout", "30"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("profile.json: known_differences[0].axis: expected an axis's "
                                  "name (or 'feed', the card's feed table), not 'colour'"));
}

TEST_F(Card, TheMinimalPythonAdapterIsGatedThroughItsOwnProfile) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  // A file that exists (the harness refuses a missing one before any cell)
  // but that this adapter, which loads only toy:NAME, cannot run.
  const std::string gguf = (dir_.path() / "other.gguf").string();
  std::ofstream(gguf) << "GGUF";
  const CommandResult r = RunCommand({BinDir() + "/samebits", "card", "--engine-profile",
                                      Source("adapters/minimal-python/profile.json"),
                                      "--checkpoint", "toy:small,gguf:" + gguf, "--scenario",
                                      Source("adapters/minimal-python/tokens.json")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Its own axes: the tiles never change a bit; the reversed sum differs,
  // as its profile declares.
  EXPECT_THAT(r.output, HasSubstr("| tile | 1 | forward-tile1 | identical |"));
  EXPECT_THAT(r.output, HasSubstr("| tile | 7 | forward-tile7 | identical |"));
  EXPECT_THAT(r.output, HasSubstr("| sum_order | reverse | reverse | KNOWN: differs from step 0"));
  // A checkpoint it does not load: its `unsupported` record, not a failure.
  EXPECT_THAT(r.output, HasSubstr("the baseline forward is UNSUPPORTED: the engine cannot run "
                                  "this here: checkpoint gguf:" +
                                  gguf));
}

}  // namespace
}  // namespace samebits::standin

namespace samebits::standin {
namespace {

// Another engine's card measures its baseline against samebits-engine's
// reference pass: samebits-engine itself under another profile's name
// conforms with an NMSE of exactly 0; a checkpoint samebits-engine cannot
// load says why it was not measured, and --no-reference leaves it out.
TEST(CardReferenceConformance, TheBaselineIsMeasuredAgainstSamebitsReferencePass) {
  TempDir dir("card-reference");
  std::ifstream in(Source("engines/samebits.json"));
  nlohmann::json j = nlohmann::json::parse(in);
  j["name"] = "samebits-copy";
  j["command"][0] = BinDir() + "/samebits-engine";
  // The matrix's templates are samebits-engine's own profile's alone.
  j.erase("matrix");
  j["card"]["values"] = {{"threads", {"2"}},
                         {"kernels", nlohmann::json::array()},
                         {"isa", nlohmann::json::array()},
                         {"gemv_chunk_bytes", nlohmann::json::array()},
                         {"batch", nlohmann::json::array()},
                         {"batch_schedule", nlohmann::json::array()},
                         {"batch_seed", nlohmann::json::array()},
                         {"math", nlohmann::json::array()}};
  const std::string profile = (dir.path() / "copy.json").string();
  std::ofstream(profile) << j.dump(2);
  const std::vector<std::string> argv = {BinDir() + "/samebits", "card",
                                         "--engine-profile",     profile,
                                         "--checkpoint",         "synthetic:tiny",
                                         "--scenario",           Source("scenarios/classic.json")};
  const CommandResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Conformance of cpu-t1 to samebits-engine's reference pass: "
                                  "CONFORMS (stable) over steps 0-"));
  EXPECT_THAT(r.output, HasSubstr("NMSE max 0, mean 0"));
  std::vector<std::string> without = argv;
  without.push_back("--no-reference");
  EXPECT_THAT(RunCommand(without).output, Not(HasSubstr("Conformance of")));
}

}  // namespace
}  // namespace samebits::standin
