// A served engine that the harness starts itself (issue 41): the openai-http
// bridge's --launch starts the server per cell on a Unix socket in a fresh
// temporary folder, waits for GET /health, and stops and reaps it, as
// engines/llama-server.json does with llama-server. Here the server is the
// stand-in (adapters/openai-http/standin_server.py --unix), so the tests
// need no llama.cpp build: every cell passes with the file's own weights
// hash, a server that never gets ready or exits at start is a clear error
// with its log, probabilities withheld at some steps narrow what the card
// claims to the chosen tokens, and no server or temporary folder outlives
// its cell. Last, front_doors.py (a served read-back against a logit
// dump of the same scenario) on a hand-computed fixture.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class LaunchedServer : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
    fs::create_directories(pids_);
    fs::create_directories(temp_);
    // The bridge makes the server's folder under TMPDIR: a folder of this
    // test's, so that a folder left behind is seen.
    const char* old = std::getenv("TMPDIR");
    old_tmpdir_ = old != nullptr ? old : "";
    had_tmpdir_ = old != nullptr;
    ::setenv("TMPDIR", temp_.c_str(), 1);
    std::ofstream(model_, std::ios::binary) << "GGUF: not a model, the bytes its hash is of";
  }
  void TearDown() override {
    if (had_tmpdir_) {
      ::setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }

  // engines/openai-http-standin.json made to launch the stand-in on a Unix
  // socket with `launch_args`, and `bridge_args` after the profile's own.
  std::string Profile(const std::vector<std::string>& launch_args,
                      const std::vector<std::string>& bridge_args = {}) {
    Json j = Json::parse(ReadText(Source("engines/openai-http-standin.json")));
    j["command"] = {Source("adapters/openai-http/openai_http_bridge.py"),
                    "run",
                    "--timeout",
                    "30",
                    "--launch",
                    "standin_server.py",
                    "--launch-arg=--unix",
                    "--launch-arg=%socket%",
                    "--launch-arg=--pid-dir=" + pids_.string()};
    for (const std::string& a : launch_args) j["command"].push_back("--launch-arg=" + a);
    for (const std::string& a : bridge_args) j["command"].push_back(a);
    j["checkpoints"] = {"gguf"};
    // llama-server's dialect alone and no stream axis, as
    // engines/llama-server.json (llama-server streams no withheld token).
    j["axes"][0]["values"] = {"llama"};
    for (const char* key : {"axes", "hello"}) {
      Json kept = Json::array();
      for (const Json& entry : j[key]) {
        if (entry.value("name", "") != "stream" && entry.value("key", "") != "config.stream")
          kept.push_back(entry);
      }
      j[key] = kept;
    }
    j["card"]["values"].erase("stream");
    j["matrix"].erase("checkpoints");
    std::string path = (dir_.path() / ("profile" + std::to_string(++profiles_) + ".json"));
    std::ofstream(path) << j.dump(2);
    return path;
  }

  CommandResult Run(const std::string& command, const std::string& profile,
                    const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {
        BinDir() + "/samebits", command,
        "--engine-profile",     profile,
        "--checkpoint",         "gguf:" + model_.string(),
        "--scenario",           Source("adapters/openai-http/tokens.json")};
    if (command != "card") argv.insert(argv.end(), {"--db", db_});
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }

  const harness::CellResult* Cell(const harness::RunResult& run, const std::string& config) {
    return FindCell(run, config);
  }
  // A cell of a temporary run would dangle: keep the run in a variable.
  const harness::CellResult* Cell(harness::RunResult&& run, const std::string& config) = delete;

  // How many servers wrote a pid file, and how many are still running.
  std::pair<int, int> ServersStartedAndLeft() const { return StandinServersStartedAndLeft(pids_); }

  bool TemporaryFoldersLeft() const { return !fs::is_empty(temp_); }

  TempDir dir_{"launched-server"};
  fs::path pids_ = dir_.path() / "pids";
  fs::path temp_ = dir_.path() / "tmp";
  fs::path model_ = dir_.path() / "model.gguf";
  std::string db_ = (dir_.path() / "runs.db").string();
  std::string old_tmpdir_;
  bool had_tmpdir_ = false;
  int profiles_ = 0;
};

TEST_F(LaunchedServer, EachCellStartsItsServerOnAUnixSocketAndReapsIt) {
  const CommandResult r = Run("run", Profile({}), {"--config", "llama,llama-r8,llama-load4"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(StoredCode(db_, "llama"), "PASS") << r.output;
  EXPECT_EQ(StoredCode(db_, "llama-r8"), "PASS") << r.output;
  EXPECT_EQ(StoredCode(db_, "llama-load4"), "PASS") << r.output;
  const harness::RunResult run = LatestRun(db_);
  const harness::CellResult* cell = Cell(run, "llama");
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(cell->steps.size(), 7u);
  // The file the server loaded, hashed as the llama.cpp adapter hashes it.
  const std::string bytes = ReadText(model_);
  char expected[17];
  std::snprintf(expected, sizeof(expected), "%016" PRIx64,
                static_cast<uint64_t>(XXH3_64bits(bytes.data(), bytes.size())));
  EXPECT_EQ(cell->weights_xxh3, expected);
  const auto [started, left] = ServersStartedAndLeft();
  EXPECT_EQ(started, 3) << "one server per cell";
  EXPECT_EQ(left, 0);
  EXPECT_FALSE(TemporaryFoldersLeft());
}

TEST_F(LaunchedServer, AServerThatNeverGetsReadyOrExitsAtStartIsAClearError) {
  struct Case {
    std::vector<std::string> launch_args;
    std::vector<std::string> bridge_args;
    std::vector<const char*> expected;
  };
  const std::vector<Case> cases = {
      {{"--fault=never-ready"},
       {"--launch-timeout", "2"},
       {"did not answer GET /health with 200 within 2 s", "answered HTTP 503",
        "its log's last lines"}},
      {{"--vocab=1"},
       {},
       {"exited with status 2 before it was ready", "--vocab must be in [2, 4096]"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.launch_args[0]);
    const CommandResult r =
        Run("run", Profile(c.launch_args, c.bridge_args), {"--config", "llama"});
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_EQ(StoredCode(db_, "llama"), "UNRESOLVED") << r.output;
    const harness::RunResult run = LatestRun(db_);
    const harness::CellResult* cell = Cell(run, "llama");
    ASSERT_NE(cell, nullptr);
    for (const char* text : c.expected) EXPECT_THAT(cell->message, HasSubstr(text));
    EXPECT_THAT(r.output, Not(HasSubstr("Traceback")));
  }
  EXPECT_EQ(ServersStartedAndLeft().second, 0);
  EXPECT_FALSE(TemporaryFoldersLeft());
}

// llama-server sends no probabilities for a token whose text ends inside a
// UTF-8 character: the bridge keeps the chosen token and the card claims
// no more than the chosen tokens.
TEST_F(LaunchedServer, WithheldProbabilitiesNarrowTheCardsClaimToTheChosenTokens) {
  const CommandResult r = Run("card", Profile({"--fault=withhold"}), {});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("compares the chosen token of each step (not whole"));
  EXPECT_THAT(r.output, HasSubstr("probe power: the control llama-biason differs"));
  // Streamed, llama-server sends not even the withheld token: an error that
  // says so and what to do, not a guess.
  const CommandResult streamed =
      Run("run", Profile({"--fault=withhold"}, {"--stream", "on"}), {"--config", "llama"});
  EXPECT_EQ(streamed.exit_code, 1) << streamed.output;
  EXPECT_THAT(streamed.output, HasSubstr("the event stream carried no token (llama-server streams "
                                         "no token whose text ends inside a UTF-8 character); "
                                         "read this server with --stream off"));
  EXPECT_EQ(ServersStartedAndLeft().second, 0);
  EXPECT_FALSE(TemporaryFoldersLeft());
}

// front_doors.py against a hand-computed fixture: a vocabulary of 4, the
// engine's first row all zeros (every log-probability -ln 4 =
// -1.3862943611198906), the server's top 2 there id 1 at exactly that and
// id 0 at -1.4 (so the same set, not the same order; differences 0 and
// 0.0137056388801094, median 0.0068528194400547); at step 1 the two chose
// other tokens, where their contexts part. A dump of the wrong size is
// refused (exit 2).
TEST_F(LaunchedServer, FrontDoorsComparesAServedReadBackWithALogitDump) {
  const fs::path served = dir_.path() / "served.jsonl";
  const fs::path records = dir_.path() / "records.jsonl";
  const fs::path dump = dir_.path() / "dump.f32";
  std::ofstream(served)
      << R"({"index": 0, "token": 0, "logprob": "-1.4", "withheld": false, )"
      << R"("top": [[0, "-1.4"], [1, "-1.3862943611198906"]]})"
      << "\n"
      << R"({"index": 1, "token": 3, "logprob": null, "withheld": true, "top": []})"
      << "\n";
  std::ofstream(records) << R"({"type":"hello","checkpoint":{"vocab_size":4}})"
                         << "\n"
                         << R"({"type":"step","index":0,"token":0})"
                         << "\n"
                         << R"({"type":"step","index":1,"token":2})"
                         << "\n";
  const float rows[8] = {0, 0, 0, 0, 0, 0, 1, 0};
  std::ofstream(dump, std::ios::binary).write(reinterpret_cast<const char*>(rows), sizeof(rows));
  const std::string script = Source("adapters/openai-http/front_doors.py");
  const CommandResult r = RunCommand({script, "--served", "srv=" + served.string(), "--engine",
                                      "eng=" + records.string() + "," + dump.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("| eng | 2 of 2 | 1 | 1 of 1 | 0 of 1 | 0.0137 | 0.00685 | step 1 |"))
      << r.output;
  std::ofstream(dump, std::ios::binary).write(reinterpret_cast<const char*>(rows), 12);
  const CommandResult bad = RunCommand({script, "--served", "srv=" + served.string(), "--engine",
                                        "eng=" + records.string() + "," + dump.string()});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("12 bytes, expected 2 rows of 4 float32"));
}

}  // namespace
}  // namespace samebits::standin
