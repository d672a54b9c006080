// Whole-model identity across the switches that are read once per process:
// each configuration runs `samebits-engine run` in a CHILD process (kernel
// path, threads 1-4, 8 KiB GEMV chunks, every available ISA), on each
// synthetic checkpoint and scenario, and every step's hashes must equal the
// reference child's. A negative control runs a child whose cpu pass sums
// attention in a forbidden order (SAMEBITS_TEST_ONLY_BREAK_IDENTITY=1) and
// requires the comparison to see the difference, so this test can fail.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"

namespace samebits {
namespace {

const std::string kEngine = std::string(SAMEBITS_BINARY_DIR) + "/bin/samebits-engine";
const std::string kScenarios = std::string(SAMEBITS_SOURCE_DIR) + "/scenarios/";

// One `step` record, as compared: everything but the run-specific fields.
struct Step {
  int index = 0;
  std::string kind;
  int position = 0;
  int token = 0;
  std::string fnv1a64, xxh3_64;

  bool operator==(const Step&) const = default;
};

struct ChildRun {
  int exit_code = -1;
  bool done = false;
  std::vector<Step> steps;
  std::string stderr_text;
};

// Runs the engine with `args` (and `env` before it) in a child process and
// parses its JSON Lines.
ChildRun RunChild(const std::string& env, const std::string& args) {
  char err_path[] = "/tmp/samebits_identity_XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd >= 0) close(fd);
  const std::string command = "env -u SAMEBITS_TEST_ONLY_BREAK_IDENTITY -u SAMEBITS_THREADS " +
                              env + " " + kEngine + " run " + args + " 2>" + err_path;
  ChildRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    run.stderr_text = "popen failed for: " + command;
    return run;
  }
  std::string out;
  char buffer[65536];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, got);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::stringstream err_text;
  err_text << err.rdbuf();
  run.stderr_text = command + "\n" + err_text.str();
  std::remove(err_path);

  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      run.stderr_text += "\nnot JSON on stdout: " + line;
      run.done = false;
      return run;
    }
    const std::string type = j.value("type", "");
    if (type == "step") {
      run.steps.push_back(Step{j.value("index", -1), j.value("kind", ""), j.value("position", -1),
                               j.value("token", -1), j.value("fnv1a64", ""),
                               j.value("xxh3_64", "")});
    } else if (type == "done") {
      run.done = true;
    }
  }
  return run;
}

// Returns the first step where `b` differs from `a`, or -1 when they agree.
int FirstDifference(const std::vector<Step>& a, const std::vector<Step>& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (!(a[i] == b[i])) return static_cast<int>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<int>(n);
}

struct Config {
  std::string label;
  std::string args;
};

// Returns the cpu configurations compared with the reference child.
std::vector<Config> CpuConfigs() {
  std::vector<Config> out;
  for (int threads = 1; threads <= 4; ++threads) {
    out.push_back({"cpu, " + std::to_string(threads) + " threads",
                   "--kernels cpu --threads " + std::to_string(threads)});
  }
  out.push_back(
      {"cpu, 3 threads, 8 KiB GEMV chunks", "--kernels cpu --threads 3 --gemv-chunk-bytes 8192"});
  for (kernels::Isa isa : kernels::AvailableIsas()) {
    const std::string name = kernels::IsaName(isa);
    out.push_back({"cpu, 2 threads, isa " + name, "--kernels cpu --threads 2 --isa " + name});
  }
  return out;
}

// Runs the reference and every cpu configuration on one checkpoint and
// scenario, and requires identical steps.
void CheckIdentity(const std::string& checkpoint, const std::string& scenario) {
  const std::string common =
      "--checkpoint " + checkpoint + " --scenario " + kScenarios + scenario + ".json";
  const ChildRun want = RunChild("", common + " --kernels reference");
  ASSERT_EQ(want.exit_code, 0) << want.stderr_text;
  ASSERT_TRUE(want.done) << want.stderr_text;
  ASSERT_FALSE(want.steps.empty()) << want.stderr_text;
  for (const Config& c : CpuConfigs()) {
    SCOPED_TRACE(checkpoint + ", " + scenario + ": " + c.label);
    const ChildRun got = RunChild("", common + " " + c.args);
    ASSERT_EQ(got.exit_code, 0) << got.stderr_text;
    ASSERT_TRUE(got.done) << got.stderr_text;
    const int at = FirstDifference(want.steps, got.steps);
    EXPECT_EQ(at, -1) << "first differing step " << at << " of " << want.steps.size();
  }
}

TEST(Identity, EngineProgramIsBuilt) {
  ASSERT_EQ(access(kEngine.c_str(), X_OK), 0) << kEngine << " is missing: build samebits-engine";
}

TEST(Identity, TinyEveryScenario) {
  for (const char* scenario : {"classic", "sampled", "window"}) {
    CheckIdentity("synthetic:tiny", scenario);
  }
}

TEST(Identity, MediumEveryScenario) {
  for (const char* scenario : {"classic", "sampled", "window"}) {
    CheckIdentity("synthetic:medium", scenario);
  }
}

// The bench model's widths in two layers. Its reference child takes a few
// seconds per scenario, so it runs the classic scenario only.
TEST(Identity, WideClassic) {
  CheckIdentity("synthetic:wide", "classic");
}

// The negative control: the same comparison must catch an order change.
TEST(Identity, NegativeControlBrokenOrderIsCaught) {
  const std::string common = "--checkpoint synthetic:tiny --scenario " + kScenarios + "window.json";
  const ChildRun want = RunChild("", common + " --kernels reference");
  ASSERT_EQ(want.exit_code, 0) << want.stderr_text;
  const ChildRun broken =
      RunChild("SAMEBITS_TEST_ONLY_BREAK_IDENTITY=1", common + " --kernels cpu --threads 2");
  ASSERT_EQ(broken.exit_code, 0) << broken.stderr_text;
  ASSERT_TRUE(broken.done) << broken.stderr_text;
  EXPECT_NE(FirstDifference(want.steps, broken.steps), -1)
      << "the order-breaking child matched the reference: the identity comparison cannot fail";
  EXPECT_NE(broken.stderr_text.find("SAMEBITS_TEST_ONLY_BREAK_IDENTITY"), std::string::npos)
      << "the child did not report the test-only switch";
}

}  // namespace
}  // namespace samebits
