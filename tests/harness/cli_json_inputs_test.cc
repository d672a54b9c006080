// Class 3 of issue 43: untrusted files are bounded and unambiguous. Every
// JSON document the harness reads goes through one reader
// (harness/analysis/bounded_json.h): read up to a limit and no further, a
// key twice in one object refused. This test gives every kind of JSON input
// a command reads (engine profile, scenario, suite, equivalences, bundle) a
// repeated key, more bytes than its limit and an endless device, and checks
// that the command refuses each with the file's name and the problem,
// before running anything; and it checks that no source file of the harness
// parses JSON another way.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "harness/analysis/bounded_json.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// One kind of JSON input: a valid document of it, and the command that
// reads a file of it (given its path and the test's folder).
struct InputKind {
  std::string name;
  std::string valid;  // a document with at least one key the test repeats
  std::string repeated_key;
  uint64_t limit;
  std::function<std::vector<std::string>(const std::string& file, const fs::path& dir)> command;
};

// Returns `valid` with `key`'s first member written twice (the second time
// with the same value, so only the repeat is wrong).
std::string RepeatKey(const std::string& valid, const std::string& key) {
  const std::string needle = "\"" + key + "\":";
  const size_t at = valid.find(needle);
  EXPECT_NE(at, std::string::npos) << key;
  const nlohmann::json doc = nlohmann::json::parse(valid);
  return valid.substr(0, at) + needle + doc.at(key).dump() + ", " + valid.substr(at);
}

// Returns a new file for `kind` under `dir`, in a folder of its own
// (`case_name`), named as the command finds it.
std::string InputFile(const fs::path& dir, const std::string& case_name, const std::string& kind) {
  const fs::path folder = dir / (case_name + "-" + kind.substr(0, kind.find(' ')));
  fs::create_directories(folder);
  return (folder / (kind == "equivalences" ? "equivalences.json" : "input.json")).string();
}

std::vector<InputKind> Kinds(const fs::path& dir) {
  const std::string samebits = BinDir() + "/samebits";
  std::ifstream profile_in(Source("tests/standins/standin_profile.json"));
  nlohmann::json profile = nlohmann::json::parse(profile_in);
  profile["command"] = {BinDir() + "/samebits-standin-engine", "run"};
  std::ifstream classic_in(Source("scenarios/classic.json"));
  const std::string classic((std::istreambuf_iterator<char>(classic_in)),
                            std::istreambuf_iterator<char>());
  const std::string db = (dir / "runs.db").string();
  return {
      {"engine profile", profile.dump(), "command", harness::kMaxProfileBytes,
       [=](const std::string& file, const fs::path&) {
         return std::vector<std::string>{samebits, "run", "--engine-profile", file, "--list"};
       }},
      {"scenario", nlohmann::json::parse(classic).dump(), "steps", harness::kMaxScenarioBytes,
       [=](const std::string& file, const fs::path&) {
         return std::vector<std::string>{samebits,       "run",
                                         "--engine",     BinDir() + "/samebits-standin-engine",
                                         "--checkpoint", "synthetic:tiny",
                                         "--scenario",   file,
                                         "--config",     "cpu-t1",
                                         "--db",         db};
       }},
      {"suite", R"({"pairs": [{"checkpoint": "synthetic:tiny", "scenarios": ["classic"]}]})",
       "pairs", harness::kMaxSuiteBytes,
       [=](const std::string& file, const fs::path&) {
         return std::vector<std::string>{samebits, "run", "--suite", file, "--list"};
       }},
      {"equivalences",
       R"({"equivalences": [{"scenarios": ["classic", "classic"], "why": "the same"}]})",
       "equivalences", harness::kMaxEquivalencesBytes,
       [=](const std::string& file, const fs::path& d) {
         // gate reads <scenarios-dir>/equivalences.json: the file's folder.
         const fs::path folder = fs::path(file).parent_path();
         fs::copy_file(Source("scenarios/classic.json"), folder / "classic.json",
                       fs::copy_options::overwrite_existing);
         fs::create_directories(d / "references");
         return std::vector<std::string>{samebits,
                                         "gate",
                                         "--engine",
                                         BinDir() + "/samebits-standin-engine",
                                         "--checkpoint",
                                         "synthetic:tiny",
                                         "--scenarios-dir",
                                         folder.string(),
                                         "--config",
                                         "cpu-t1",
                                         "--db",
                                         db,
                                         "--references-dir",
                                         (d / "references").string()};
       }},
      {"bundle", R"({"format": "samebits-bundle", "version": 1, "runs": []})", "runs",
       uint64_t{256} << 20,
       [=](const std::string& file, const fs::path&) {
         return std::vector<std::string>{samebits, "import", file, "--db", db};
       }},
  };
}

TEST(JsonInputs, EveryKindRefusesARepeatedKeyNamingFileAndKey) {
  TempDir dir("json_inputs_repeat");
  for (const InputKind& kind : Kinds(dir.path())) {
    const std::string file = InputFile(dir.path(), "repeated", kind.name);
    std::ofstream(file) << RepeatKey(kind.valid, kind.repeated_key);
    const CommandResult r = RunCommand(kind.command(file, dir.path()));
    EXPECT_EQ(r.exit_code, 2) << kind.name << ": " << r.command << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("\"" + kind.repeated_key + "\" appears twice"))
        << kind.name << ":\n"
        << r.output;
    EXPECT_THAT(r.output, HasSubstr(file)) << kind.name;
  }
}

TEST(JsonInputs, EveryKindRefusesMoreThanItsLimitAndAnEndlessFile) {
  TempDir dir("json_inputs_size");
  for (const InputKind& kind : Kinds(dir.path())) {
    if (kind.limit > (uint64_t{32} << 20)) continue;  // the bundle's is tested in bundle tests
    // A valid document padded with spaces past the limit.
    const std::string file = InputFile(dir.path(), "large", kind.name);
    {
      std::ofstream out(file);
      out << kind.valid;
      const std::string spaces(1 << 16, ' ');
      for (uint64_t n = 0; n <= kind.limit; n += spaces.size()) out << spaces;
    }
    const CommandResult large = RunCommand(kind.command(file, dir.path()));
    EXPECT_EQ(large.exit_code, 2) << kind.name << ": " << large.output;
    EXPECT_THAT(large.output, HasSubstr("limit")) << kind.name << ":\n" << large.output;
    EXPECT_THAT(large.output, HasSubstr(file)) << kind.name;
  }
  // /dev/zero never ends: read up to the limit, then refused.
  for (const InputKind& kind : Kinds(dir.path())) {
    // Equivalences are read from a folder, not named; a bundle's limit is
    // 256 MiB, read whole before it is refused (bundle_hostile_test.cc).
    if (kind.name == "equivalences" || kind.name == "bundle") continue;
    const CommandResult endless = RunCommand(kind.command("/dev/zero", dir.path()));
    EXPECT_EQ(endless.exit_code, 2) << kind.name << ": " << endless.output;
    EXPECT_THAT(endless.output, HasSubstr("/dev/zero")) << kind.name << ":\n" << endless.output;
  }
}

// The reader itself: a repeated key at any depth, with where it is.
TEST(JsonInputs, TheReaderNamesTheRepeatedKeyAndWhere) {
  try {
    harness::ParseBoundedJson(R"({"axes": [{"name": "a"}, {"name": "b", "name": "c"}]})",
                              harness::JsonLimits{});
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("\"name\" appears twice in the object at /axes/1"));
  }
  EXPECT_NO_THROW(harness::ParseBoundedJson(R"([{"a": 1}, {"a": 2}])", harness::JsonLimits{}));
}

// No source file of the harness parses JSON but the one reader.
TEST(JsonInputs, OneReaderParsesEveryJsonOfTheHarness) {
  const std::regex parse(R"((json|Json)::(parse|sax_parse|accept)\s*\()");
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(Source("harness"))) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cc" && ext != ".h") continue;
    ++files;
    if (entry.path().filename() == "bounded_json.cc") continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_FALSE(std::regex_search(text, parse))
        << entry.path() << " parses JSON itself; read it with harness/analysis/bounded_json.h";
  }
  EXPECT_GT(files, 100);
}

}  // namespace
}  // namespace samebits::standin
