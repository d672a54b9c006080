// `samebits profile check` end to end: every profile in engines/ and the
// minimal profile engines/README.md shows (read from the README itself, so
// the documentation cannot drift) are valid and their programs exist; a
// broken profile exits 2 naming the key; and --hello runs the baseline once
// and says whether its hello echoes its configuration (the stand-in engine
// under its faults, and samebits-engine on an ISA this machine lacks).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Json = nlohmann::json;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Returns the JSON block of engines/README.md that follows its marker line.
std::string ReadmeMinimalProfile() {
  const std::string readme = ReadText(Source("engines/README.md"));
  const std::string marker = "<!-- tests/harness/profile_check_test.cc reads the next json block";
  const size_t at = readme.find(marker);
  if (at == std::string::npos) return "";
  const size_t open = readme.find("```json\n", at);
  if (open == std::string::npos) return "";
  const size_t start = open + 8;
  const size_t close = readme.find("```", start);
  return close == std::string::npos ? "" : readme.substr(start, close - start);
}

class ProfileCheck : public ::testing::Test {
 protected:
  CommandResult Check(const std::string& profile, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {BinDir() + "/samebits", "profile", "check", profile};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }

  // Writes `profile` as FOLDER/engines/NAME.json beside a `build` that is
  // this build, as a profile in the tree's engines/ sees it; returns the file.
  std::string WriteInTree(const Json& profile, const std::string& name) {
    fs::create_directories(dir_.path() / "engines");
    std::error_code ec;
    fs::create_directory_symlink(SAMEBITS_BINARY_DIR, dir_.path() / "build", ec);
    std::string path = (dir_.path() / "engines" / (name + ".json")).string();
    std::ofstream(path) << profile.dump(2);
    return path;
  }

  // Returns the stand-in's profile with `change` applied, written to a file.
  std::string StandinWith(const std::function<void(Json&)>& change) {
    Json j = Json::parse(ReadText(Source("tests/standins/standin_profile.json")));
    change(j);
    std::string path = (dir_.path() / "profile.json").string();
    std::ofstream(path) << j.dump(2);
    return path;
  }

  CommandResult StandinHello(const std::string& profile, const std::string& fault) {
    return Check(profile, {"--program", FaultyEngine(dir_.path(), fault), "--hello",
                           "synthetic:tiny", "--scenario", WriteScenario(dir_.path())});
  }

  TempDir dir_{"profile_check"};
};

// Every profile the project ships, found by listing the folder (a profile
// added later is checked without anyone adding it here).
TEST_F(ProfileCheck, EveryProfileInEnginesIsValidAndItsProgramExists) {
  int checked = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(Source("engines"))) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    std::vector<std::string> extra;
    // A profile whose program is this tree's build/bin is given this
    // build's program when the tests were built elsewhere (build-asan).
    const Json profile = Json::parse(ReadText(entry.path().string()));
    const std::string program = profile["command"][0].get<std::string>();
    const std::string built = "../build/bin/";
    if (program.rfind(built, 0) == 0 &&
        fs::weakly_canonical(BinDir()) != fs::weakly_canonical(Source("build/bin"))) {
      extra = {"--program", BinDir() + "/" + program.substr(built.size())};
    }
    const CommandResult r = Check(entry.path().string(), extra);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("a valid engine profile (format 1)"));
    EXPECT_THAT(r.output, HasSubstr("  name         " + profile["name"].get<std::string>()));
    EXPECT_THAT(r.output, HasSubstr("  baseline     " + profile["baseline"].get<std::string>()));
    ++checked;
  }
  EXPECT_GE(checked, 3) << "engines/ holds samebits, pytorch and llama.cpp at least";
}

TEST_F(ProfileCheck, TheOwnProfileListsTheDefaultGateConfigurations) {
  const CommandResult r = Check(Source("engines/samebits.json"));
  EXPECT_THAT(r.output, HasSubstr("by default (--threads 1,2,3, --math portable): reference, "
                                  "cpu-t1, cpu-t2, cpu-t3, cpu-t3-chunk8k, cpu-t3-tm3-tn5-rows2, "
                                  "cpu-scalar"));
  EXPECT_THAT(r.output, HasSubstr("cpu-t2-b4, cpu-t3-b8-staggered\n"));
}

TEST_F(ProfileCheck, TheReadmesMinimalProfileIsValidAndSaysHello) {
  const std::string text = ReadmeMinimalProfile();
  ASSERT_FALSE(text.empty()) << "engines/README.md lost its marked json block";
  const std::string profile = WriteInTree(Json::parse(text), "minimal");
  const CommandResult r = Check(profile, {"--hello", "synthetic:tiny"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("  baseline     reference\n"));
  EXPECT_THAT(r.output, HasSubstr("2 configuration(s) by default: reference, cpu\n"));
  EXPECT_THAT(r.output, HasSubstr("hello: ok (reference on synthetic:tiny / "));
}

struct Broken {
  const char* what;
  std::function<void(Json&)> change;
  const char* expected;  // in the error, after the file
};

TEST_F(ProfileCheck, ABrokenProfileExitsTwoNamingTheKey) {
  const std::vector<Broken> cases = {
      {"no command", [](Json& j) { j.erase("command"); }, "command: is missing (required)"},
      {"an unknown key", [](Json& j) { j["colour"] = "blue"; },
       "colour: is not a key of a profile here (known: profile, name,"},
      {"a baseline the grammar refuses", [](Json& j) { j["baseline"] = "reference-t1-t2"; },
       "baseline: expected a configuration name: configuration 'reference-t1-t2': 't2' is not "
       "a part this engine's names take (nothing may follow the last axis)"},
      {"two axes that spell the same token",
       [](Json& j) {
         j["axes"].push_back(Json::parse(R"({"name": "a", "values": ["p", "q"], "default": "p",
                                             "token": "{value}", "argv": []})"));
         j["axes"].push_back(Json::parse(R"({"name": "b", "values": ["q", "r"], "default": "r",
                                             "token": "{value}", "argv": []})"));
       },
       "axes: expected every configuration name to read back as the values it was written for; "
       "configuration reference-q (a=p, b=q, kernels=reference, threads=1): 'reference-q' reads "
       "back as a=q, b=r, kernels=reference, threads=1"},
      {"a missing program",
       [](Json& j) {
         j["command"] = {"./no-such-engine", "run"};
       },
       "command[0]: expected an executable program; "},
  };
  for (const Broken& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string profile = StandinWith(c.change);
    const CommandResult r = Check(profile);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr(profile + ": " + c.expected)) << r.output;
  }
  const CommandResult missing = Check((dir_.path() / "absent.json").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("absent.json: cannot be read"));
}

TEST_F(ProfileCheck, HelloPassesOnlyWhenTheBaselineSaysAValidEchoingHello) {
  const std::string profile = Source("tests/standins/standin_profile.json");
  const CommandResult ok = StandinHello(profile, "ok");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("hello: ok (reference on synthetic:tiny / "));

  const CommandResult garbage = StandinHello(profile, "garbage");
  EXPECT_EQ(garbage.exit_code, 1) << garbage.output;
  EXPECT_THAT(garbage.output, HasSubstr("hello: FAILED (reference on synthetic:tiny"));
  EXPECT_THAT(garbage.output, HasSubstr("not a JSON line"));

  const CommandResult error = StandinHello(profile, "error");
  EXPECT_EQ(error.exit_code, 1) << error.output;
  EXPECT_THAT(error.output, HasSubstr("hello: FAILED"));
  EXPECT_THAT(error.output, HasSubstr("stand-in error requested"));

  // A hello that does not echo what the profile promises: the engine ran
  // something other than what was asked.
  const std::string promises_cpu = StandinWith(
      [](Json& j) { j["hello"] = Json::parse(R"([{"key": "config.kernels", "value": "cpu"}])"); });
  const CommandResult other = StandinHello(promises_cpu, "ok");
  EXPECT_EQ(other.exit_code, 1) << other.output;
  EXPECT_THAT(other.output, HasSubstr("config.kernels is reference, expected cpu"));
}

TEST_F(ProfileCheck, AnEngineThatCannotRunTheBaselineHereIsUnsupportedNotAFailure) {
  std::string lacking;
  Json isas = Json::array();
  for (const kernels::IsaEntry& e : kernels::Isas()) {
    isas.push_back(e.name);
    if (!kernels::IsaAvailable(e.isa)) lacking = e.name;
  }
  if (lacking.empty()) GTEST_SKIP() << "this machine runs every ISA: no baseline it cannot run";
  Json profile = Json::parse(ReadmeMinimalProfile());
  profile["axes"].push_back(
      {{"name", "isa"}, {"values", isas}, {"token", "{value}"}, {"argv", {"--isa", "{value}"}}});
  profile["baseline"] = "cpu-" + lacking;
  const CommandResult r =
      Check(WriteInTree(profile, "lacking"), {"--hello", "synthetic:tiny", "--timeout", "60"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("hello: UNSUPPORTED (cpu-" + lacking + " on synthetic:tiny"));
  EXPECT_THAT(r.output, HasSubstr(lacking)) << "the engine's reason names the ISA";
}

}  // namespace
}  // namespace samebits::standin
