// A served engine gated over HTTP (issue 41), end to end: `samebits gate`
// and `samebits card` drive adapters/openai-http's bridge through
// engines/openai-http-standin.json, and the bridge starts the stand-in
// server (adapters/openai-http/standin_server.py, a toy model) per cell.
// The well-behaved server passes every cell (two API dialects, 8 repeats,
// 4 filler requests in flight) and its planted difference is KNOWN; a
// server whose repeats or whose answers under load differ fails exactly
// that cell, with the distinct count; every other misbehaviour (a timeout,
// a dropped connection, malformed JSON, HTTP 500, NaN, fewer log-probs than
// asked, none at all, no server) is an error naming the URL and the
// request, never a traceback; a server slower than the cell's deadline is
// killed with the bridge; -inf is counted, not an error; a read-back of
// tokens alone still sees the planted difference. No stand-in server
// outlives its cell.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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

// Returns a local TCP port nothing listens on (bound, then closed).
int ClosedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

class ServedEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
    fs::create_directories(pids_);
    fs::create_directories(references_);
  }

  // engines/openai-http-standin.json with its bridge's absolute path, the
  // stand-in told `standin_args` (and to write its pid under pids_), and
  // `bridge_args` after the profile's own. Returns the file written.
  std::string Profile(const std::vector<std::string>& standin_args,
                      const std::vector<std::string>& bridge_args = {}) {
    Json j = Json::parse(ReadText(Source("engines/openai-http-standin.json")));
    j["command"][0] = Source("adapters/openai-http/openai_http_bridge.py");
    j["command"].push_back("--standin-arg=--pid-dir=" + pids_.string());
    for (const std::string& a : standin_args) j["command"].push_back("--standin-arg=" + a);
    for (const std::string& a : bridge_args) j["command"].push_back(a);
    std::string path = (dir_.path() / ("profile" + std::to_string(++profiles_) + ".json")).string();
    std::ofstream(path) << j.dump(2);
    return path;
  }

  std::vector<std::string> Selection() const {
    return {"--checkpoint", "served:toy", "--scenario", Source("adapters/openai-http/tokens.json")};
  }

  // `samebits gate` of `profile`; `configs` empty: the profile's default.
  CommandResult Gate(const std::string& profile, const std::string& configs = "") {
    std::vector<std::string> argv = {
        BinDir() + "/samebits", "gate",     "--engine-profile", profile, "--db", db_,
        "--references-dir",     references_};
    for (const std::string& a : Selection()) argv.push_back(a);
    if (!configs.empty()) argv.insert(argv.end(), {"--config", configs});
    return RunCommand(argv);
  }

  const harness::CellResult* Cell(const harness::RunResult& run, const std::string& config) {
    return FindCell(run, config);
  }
  // A cell of a temporary run would dangle: keep the run in a variable.
  const harness::CellResult* Cell(harness::RunResult&& run, const std::string& config) = delete;

  // How many stand-in servers wrote a pid file, and how many of those are
  // still running (a process whose command line still names the server).
  std::pair<int, int> StandinsStartedAndLeft() const { return StandinServersStartedAndLeft(pids_); }

  TempDir dir_{"served-engine"};
  fs::path pids_ = dir_.path() / "pids";
  std::string db_ = (dir_.path() / "runs.db").string();
  std::string references_ = (dir_.path() / "references").string();
  int profiles_ = 0;
};

TEST_F(ServedEngine, TheWellBehavedServerPassesEveryCellAndItsControlIsKnown) {
  // A run of the default matrix, a reference made of it, and a gate (a run
  // of its own) against that reference: the same hashes from other
  // stand-in processes on other ports.
  const std::string profile = Profile({});
  std::vector<std::string> run_argv = {
      BinDir() + "/samebits", "run", "--engine-profile", profile, "--db", db_};
  for (const std::string& a : Selection()) run_argv.push_back(a);
  const CommandResult first = RunCommand(run_argv);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const CommandResult generate =
      RunCommand({BinDir() + "/samebits", "reference", "generate", "--run", "latest",
                  "--engine-profile", profile, "--db", db_, "--references-dir", references_});
  ASSERT_EQ(generate.exit_code, 0) << generate.output;
  const CommandResult r = Gate(profile);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(StoredCode(db_, "llama"), "PASS") << r.output;
  // The same model through the other front door returns the same digits.
  EXPECT_EQ(StoredCode(db_, "openai"), "PASS") << r.output;
  EXPECT_EQ(StoredCode(db_, "llama-r8"), "PASS") << r.output;
  EXPECT_EQ(StoredCode(db_, "llama-load4"), "PASS") << r.output;
  EXPECT_EQ(StoredCode(db_, "llama-samplingon"), "PASS") << r.output;
  // Answers read as server-sent events give the bits of whole answers.
  EXPECT_EQ(StoredCode(db_, "llama-streamon"), "PASS") << r.output;
  // The planted logit bias differs, as declared: the probe can see.
  EXPECT_EQ(StoredCode(db_, "llama-biason"), "KNOWN") << r.output;
  const harness::RunResult run = LatestRun(db_);
  const harness::CellResult* repeats = Cell(run, "llama-r8");
  ASSERT_NE(repeats, nullptr);
  ASSERT_TRUE(repeats->repeats.has_value());
  EXPECT_EQ(repeats->repeats->count, 8);
  EXPECT_EQ(repeats->repeats->distinct, 1);
  const harness::CellResult* baseline = Cell(run, "llama");
  ASSERT_NE(baseline, nullptr);
  EXPECT_EQ(baseline->steps.size(), 7u);
  // What the hashes cover and which server computed them come back from
  // the store as the bridge's hello said them ...
  ASSERT_TRUE(baseline->readback.has_value());
  EXPECT_EQ(baseline->readback->kind, "topk");
  EXPECT_EQ(baseline->readback->k, 20);
  const Json server = Json::parse(baseline->server);
  EXPECT_EQ(server["model"]["id"], "toy") << baseline->server;
  EXPECT_EQ(server["props"]["build_info"], "b1-standin") << baseline->server;
  EXPECT_EQ(server["props"]["n_ctx"], 256) << baseline->server;
  // (only the OpenAI dialect's answers carry a system_fingerprint)
  EXPECT_EQ(Json::parse(Cell(run, "openai")->server)["system_fingerprint"],
            Json::array({"samebits-standin-1"}));
  // ... and the gate's report says them above its grid.
  const CommandResult report =
      RunCommand({BinDir() + "/samebits", "report", "latest", "--db", db_, "--format", "md"});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_THAT(report.output, HasSubstr("Read back: 7 of 7 cells compare only the chosen token "
                                       "and the top 20"))
      << report.output;
  EXPECT_THAT(report.output, HasSubstr("Server: http://127.0.0.1:")) << report.output;
  const auto [started, left] = StandinsStartedAndLeft();
  EXPECT_EQ(started, 14) << "one stand-in server per cell, 7 cells run twice";
  EXPECT_EQ(left, 0);
}

TEST_F(ServedEngine, RepeatsThatDifferFailWithTheirDistinctCount) {
  // (No reference is made here, so the exit code is 1 whatever the cells
  // say: the stored codes are what this checks.)
  const CommandResult r = Gate(Profile({"--fault=drift-on-repeat"}), "llama,llama-r8");
  EXPECT_EQ(StoredCode(db_, "llama"), "PASS") << r.output;
  EXPECT_EQ(StoredCode(db_, "llama-r8"), "FAIL") << r.output;
  EXPECT_THAT(r.output, HasSubstr("8 repeats in one process gave 2 distinct outputs: repeat 2 "
                                  "first differs from repeat 1 at step 0"));
  EXPECT_EQ(StandinsStartedAndLeft().second, 0);
}

TEST_F(ServedEngine, AnswersThatDifferUnderLoadFailTheLoadCell) {
  const CommandResult r = Gate(Profile({"--fault=drift-under-load"}), "llama,llama-r8,llama-load4");
  EXPECT_EQ(StoredCode(db_, "llama"), "PASS") << r.output;
  EXPECT_EQ(StoredCode(db_, "llama-r8"), "PASS") << r.output;  // one request at a time
  EXPECT_EQ(StoredCode(db_, "llama-load4"), "FAIL") << r.output;
  EXPECT_EQ(StandinsStartedAndLeft().second, 0);
}

// Sampling at a temperature above 0 must keep seeds meaningful: a server
// that freezes sampling, and one whose seed does not reproduce its sample,
// each fail their sampling cell with what went wrong, while the greedy
// cells pass.
TEST_F(ServedEngine, FrozenSamplingAndAnIgnoredSeedFailTheSamplingCell) {
  const CommandResult frozen = Gate(Profile({"--fault=frozen-sampling"}), "llama,llama-samplingon");
  EXPECT_EQ(StoredCode(db_, "llama"), "PASS") << frozen.output;
  EXPECT_EQ(StoredCode(db_, "llama-samplingon"), "FAIL") << frozen.output;
  EXPECT_THAT(frozen.output, HasSubstr("4 seeds gave one sample at temperature 1 (16 tokens "
                                       "each): sampling is frozen"));
  const CommandResult ignored = Gate(Profile({"--fault=seed-ignored"}), "llama,llama-samplingon");
  EXPECT_EQ(StoredCode(db_, "llama-samplingon"), "FAIL") << ignored.output;
  EXPECT_THAT(ignored.output, HasSubstr("seed 1 of 4 gave two different samples at temperature "
                                        "1: the same seed must give the same sample"));
  // What the check found is stored with the cell.
  const harness::RunResult run = LatestRun(db_);
  const harness::CellResult* cell = Cell(run, "llama-samplingon");
  ASSERT_NE(cell, nullptr);
  ASSERT_TRUE(cell->sampling.has_value());
  EXPECT_EQ(cell->sampling->seeds, 4);
  EXPECT_EQ(cell->sampling->unstable_seed, 1);
  EXPECT_EQ(StandinsStartedAndLeft().second, 0);
}

// A stream cut before its last event is an error in both dialects: the
// OpenAI API's last event is `data: [DONE]`, llama-server's one whose stop
// is true.
TEST_F(ServedEngine, AStreamCutBeforeItsLastEventIsAnError) {
  const CommandResult r =
      Gate(Profile({"--fault=stream-cut"}), "llama,llama-streamon,openai-streamon");
  EXPECT_EQ(StoredCode(db_, "llama"), "PASS") << r.output;  // not streamed
  for (const auto& [config, expected] : std::vector<std::pair<std::string, std::string>>{
           {"llama-streamon",
            "/completion: the event stream ended before an event with stop: "
            "true"},
           {"openai-streamon", "/v1/completions: the event stream ended without data: [DONE]"}}) {
    EXPECT_EQ(StoredCode(db_, config), "UNRESOLVED") << r.output;
    const harness::RunResult run = LatestRun(db_);
    const harness::CellResult* cell = Cell(run, config);
    ASSERT_NE(cell, nullptr);
    EXPECT_THAT(cell->message, HasSubstr(expected));
  }
  EXPECT_EQ(StandinsStartedAndLeft().second, 0);
}

struct Misbehaviour {
  std::vector<std::string> standin_args;
  std::vector<std::string> bridge_args;
  const char* expected;  // in the cell's message, after the URL
};

TEST_F(ServedEngine, EachMisbehaviourIsAnErrorNamingTheUrlAndTheRequest) {
  const std::vector<Misbehaviour> cases = {
      {{"--fault=sleep", "--sleep-s=20"},
       {"--timeout", "2"},
       "/completion within the request timeout of 2 s"},
      {{"--fault=drop"}, {}, "/completion closed the connection without a complete answer"},
      {{"--fault=malformed"}, {}, "/completion answered malformed JSON"},
      {{"--fault=http500"}, {}, "/completion answered HTTP 500"},
      {{"--fault=nan"}, {}, "/completion returned NaN as 1 of its log-probabilities"},
      {{"--fault=few"}, {}, "/completion returned 10 log-probabilities, asked for the top 20"},
      {{"--fault=missing"},
       {},
       "'completion_probabilities' is missing or empty (asked n_probs 20)"},
  };
  for (const Misbehaviour& c : cases) {
    SCOPED_TRACE(c.standin_args[0]);
    const CommandResult r = Gate(Profile(c.standin_args, c.bridge_args), "llama");
    EXPECT_EQ(StoredCode(db_, "llama"), "UNRESOLVED") << r.output;
    const harness::RunResult run = LatestRun(db_);
    const harness::CellResult* cell = Cell(run, "llama");
    ASSERT_NE(cell, nullptr);
    EXPECT_THAT(cell->message, HasSubstr("http://127.0.0.1:"));
    EXPECT_THAT(cell->message, HasSubstr(c.expected));
    EXPECT_THAT(cell->message, HasSubstr("asked: POST http://127.0.0.1:"));
    EXPECT_THAT(r.output, Not(HasSubstr("Traceback")));
  }
  const auto [started, left] = StandinsStartedAndLeft();
  EXPECT_EQ(started, static_cast<int>(cases.size()));
  EXPECT_EQ(left, 0);
}

// The per-cell deadline: a server slower than the harness's --timeout (and
// than no request timeout of the bridge's) is killed with the bridge.
TEST_F(ServedEngine, ACellPastTheHarnessTimeoutIsKilledWithItsServer) {
  std::vector<std::string> argv = {BinDir() + "/samebits",
                                   "gate",
                                   "--engine-profile",
                                   Profile({"--fault=sleep", "--sleep-s=60"}),
                                   "--db",
                                   db_,
                                   "--references-dir",
                                   references_,
                                   "--config",
                                   "llama",
                                   "--timeout",
                                   "3"};
  for (const std::string& a : Selection()) argv.push_back(a);
  const CommandResult r = RunCommand(argv);
  EXPECT_EQ(StoredCode(db_, "llama"), "TIMEOUT") << r.output;
  const auto [started, left] = StandinsStartedAndLeft();
  EXPECT_EQ(started, 1);
  EXPECT_EQ(left, 0);
}

// -inf, and null (what llama-server's JSON library writes for -inf and
// NaN alike), is a log-probability the bridge hashes and counts in `inf`.
TEST_F(ServedEngine, AMinusInfinityOrNullLogProbIsCountedNotAnError) {
  for (const std::string fault : {"ninf", "null"}) {
    SCOPED_TRACE(fault);
    const CommandResult r = Gate(Profile({"--fault=" + fault}), "llama,openai");
    EXPECT_EQ(StoredCode(db_, "llama"), "PASS") << r.output;
    EXPECT_EQ(StoredCode(db_, "openai"), "PASS") << r.output;
    const harness::RunResult run = LatestRun(db_);
    const harness::CellResult* cell = Cell(run, "llama");
    ASSERT_NE(cell, nullptr);
    ASSERT_FALSE(cell->steps.empty());
    for (const harness::StepRecord& s : cell->steps) EXPECT_EQ(s.inf_count, 1);
  }
}

TEST_F(ServedEngine, AServerThatIsNotUpOrLacksTheModelIsAClearError) {
  const int port = ClosedPort();
  ASSERT_GT(port, 0);
  Json j = Json::parse(ReadText(Source("engines/openai-http-standin.json")));
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  j["command"] = {Source("adapters/openai-http/openai_http_bridge.py"), "run", "--url", url};
  const std::string profile = (dir_.path() / "down.json").string();
  std::ofstream(profile) << j.dump(2);
  const CommandResult down = Gate(profile, "llama");
  const harness::RunResult run = LatestRun(db_);
  const harness::CellResult* cell = Cell(run, "llama");
  ASSERT_NE(cell, nullptr);
  EXPECT_THAT(cell->message, HasSubstr("cannot connect to " + url +
                                       " (connection refused: is the server up?); asked: GET " +
                                       url + "/v1/models"));

  std::vector<std::string> argv = {BinDir() + "/samebits",
                                   "gate",
                                   "--engine-profile",
                                   Profile({}),
                                   "--db",
                                   db_,
                                   "--config",
                                   "llama",
                                   "--scenario",
                                   Source("adapters/openai-http/tokens.json"),
                                   "--checkpoint",
                                   "served:other-model"};
  // Bad input (exit 2 from the bridge): the harness refuses the selection.
  const CommandResult other = RunCommand(argv);
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_THAT(other.output, HasSubstr("does not serve the model 'other-model' (it serves: toy)"));
  EXPECT_THAT(other.output, HasSubstr("nothing was run or stored"));
  EXPECT_EQ(StandinsStartedAndLeft().second, 0);
}

TEST_F(ServedEngine, TheCardNamesEachServedAxisAndItsProbePower) {
  std::vector<std::string> argv = {BinDir() + "/samebits", "card", "--engine-profile", Profile({})};
  for (const std::string& a : Selection()) argv.push_back(a);
  const CommandResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("| api | openai | openai | identical |"));
  EXPECT_THAT(r.output, HasSubstr("| load | 4 | llama-load4 | identical |"));
  EXPECT_THAT(r.output, HasSubstr("| stream | on | llama-streamon | identical |"));
  EXPECT_THAT(r.output, HasSubstr("8 repeats in one process: 1 distinct output"));
  EXPECT_THAT(r.output, HasSubstr("| sampling | on | llama-samplingon | identical; 4 seeds at "
                                  "temperature 1, 16 tokens: 4 distinct samples, each seed's the "
                                  "same twice |"));
  EXPECT_THAT(r.output, HasSubstr("probe power: the control llama-biason differs from the "
                                  "baseline in 1 of 1 tables"));
  // The server's build (GET /props), not the bridge's.
  EXPECT_THAT(r.output, HasSubstr("Build: openai-http 1, revision b1-standin"));
  // It claims no more than the bridge read back: the top 20, not whole rows.
  EXPECT_THAT(r.output, HasSubstr("compares the chosen token and the top 20 (token, "
                                  "log-probability) pairs of each step, as returned (not whole "
                                  "logit rows"));
  EXPECT_THAT(r.output, Not(HasSubstr("compares every step's logits")));
  EXPECT_THAT(r.output, HasSubstr("= identical to the baseline in all the engine read back;"));
  EXPECT_THAT(r.output, Not(HasSubstr("every step's bits")));
  EXPECT_EQ(StandinsStartedAndLeft().second, 0);
}

// --top-k 0 reads back the chosen tokens alone: the two front doors still
// agree, and the planted bias, which changes the chosen token, still shows.
TEST_F(ServedEngine, ATokensOnlyReadBackStillSeesThePlantedDifference) {
  std::vector<std::string> argv = {
      BinDir() + "/samebits", "card", "--engine-profile", Profile({}), "--baseline", "llama-k0"};
  for (const std::string& a : Selection()) argv.push_back(a);
  const CommandResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("| api | openai | openai-k0 | identical |"));
  EXPECT_THAT(r.output, HasSubstr("| bias | on | llama-k0-biason | KNOWN: differs from step 0"));
  EXPECT_THAT(r.output, HasSubstr("compares the chosen token of each step (not whole"));
  EXPECT_EQ(StandinsStartedAndLeft().second, 0);
}

}  // namespace
}  // namespace samebits::standin
