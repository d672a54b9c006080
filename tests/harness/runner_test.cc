// The runner on misbehaving children (harness/runner): each failure mode
// gets its own result code, none counts as a pass, and a hung child's whole
// process group dies at the timeout. The children are the fake engine
// (fake_engine_main.cc) and small system programs.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "harness/runner/cell_runner.h"
#include "harness/runner/child.h"
#include "harness/runner/scheduler.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/own_profile.h"

namespace samebits::runner {
namespace {

using harness::CellResult;
using harness::ResultCode;
using harness::testing::FakeEngine;

Cell FakeCell(const std::string& mode, int threads = 2) {
  Cell cell;
  cell.checkpoint = "fake:" + mode;
  cell.scenario = "classic";
  cell.scenario_file = "/nonexistent/classic.json";
  cell.config.name = "cpu-t" + std::to_string(threads);
  cell.config.threads = threads;
  return cell;
}

CellResult RunFake(const std::string& mode, double timeout = 20) {
  RunnerOptions options;
  options.own_profile = samebits::harness::testing::OwnProfile().get();
  options.engine = FakeEngine();
  options.timeout_seconds = timeout;
  return RunCell(FakeCell(mode), options);
}

// Returns whether `pid` is gone (or a zombie awaiting its new parent).
bool ProcessGone(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z')
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(Runner, AWellBehavedChildPasses) {
  const CellResult r = RunFake("ok");
  EXPECT_EQ(r.code, ResultCode::kPass) << r.message;
  EXPECT_EQ(r.steps.size(), 5u);
  ASSERT_TRUE(r.math.has_value());
  EXPECT_EQ(r.math->name, "samebits-portable");
  ASSERT_TRUE(r.build.has_value());
  EXPECT_EQ(r.build->engine, "fake-engine");
  EXPECT_EQ(r.weights_xxh3, "00000000deadbeef");
  EXPECT_EQ(r.exit_code, 0);
}

// samebits-engine's cells are held to its profile's echo as well as to
// the fields of their Configuration: a promise the fields know nothing of
// (here one no engine keeps) makes the cell UNRESOLVED, so an axis added to
// engines/samebits.json is checked without a line of the harness.
TEST(Runner, AnOwnEngineCellIsHeldToItsProfilesEcho) {
  std::string text = harness::testing::ReadFile(harness::testing::OwnProfilePath());
  const std::string echo = "\"hello\": [";
  const size_t at = text.find(echo);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + echo.size(), R"({"key": "config.promised", "value": "{threads}"},)");
  const EngineProfile promising = ParseEngineProfile(text, harness::testing::OwnProfilePath());
  RunnerOptions options;
  options.own_profile = &promising;
  options.engine = FakeEngine();
  const CellResult r = RunCell(FakeCell("ok"), options);
  EXPECT_EQ(r.code, ResultCode::kUnresolved);
  EXPECT_NE(r.message.find("does not echo its configuration"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("config.promised is missing, expected 2"), std::string::npos)
      << r.message;
  // The profile as it is: the same child passes (AWellBehavedChildPasses).
  EXPECT_EQ(RunFake("ok").code, ResultCode::kPass);
}

TEST(Runner, ACrashIsUnresolvedWithTheSignal) {
  const CellResult r = RunFake("crash");
  EXPECT_EQ(r.code, ResultCode::kUnresolved);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_NE(r.message.find("signal 11"), std::string::npos) << r.message;
}

TEST(Runner, AHangIsATimeoutAndItsProcessGroupDies) {
  const auto start = std::chrono::steady_clock::now();
  const CellResult r = RunFake("hang-group", 1.0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.code, ResultCode::kTimeout) << r.message;
  EXPECT_LT(seconds, 10.0);
  // The fake printed its grandchild's pid; the grandchild held the pipes
  // open, so the runner could only return because the group was killed.
  const size_t at = r.stderr_tail.find("grandchild ");
  ASSERT_NE(at, std::string::npos) << r.stderr_tail;
  const pid_t grandchild =
      static_cast<pid_t>(std::strtol(r.stderr_tail.c_str() + at + 11, nullptr, 10));
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(ProcessGone(grandchild));
}

TEST(Runner, GarbageOnStdoutIsUnresolved) {
  const CellResult r = RunFake("garbage");
  EXPECT_EQ(r.code, ResultCode::kUnresolved);
  EXPECT_FALSE(r.message.empty());
}

TEST(Runner, AMissingDoneIsUnresolvedEvenWithExitZero) {
  const CellResult r = RunFake("no-done");
  EXPECT_EQ(r.code, ResultCode::kUnresolved);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.message.find("done"), std::string::npos) << r.message;
  EXPECT_EQ(r.steps.size(), 5u);  // what it did say is kept
}

TEST(Runner, ANonZeroExitIsUnresolvedEvenWithDone) {
  const CellResult r = RunFake("exit3");
  EXPECT_EQ(r.code, ResultCode::kUnresolved);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.message.find("code 3"), std::string::npos) << r.message;
}

TEST(Runner, AnEngineThatSaysUnsupportedIsUnsupported) {
  const CellResult r = RunFake("unsupported");
  EXPECT_EQ(r.code, ResultCode::kUnsupported) << r.message;
  EXPECT_EQ(r.message,
            "the engine cannot run this here: ISA neon is not available on this machine");
}

// UNSUPPORTED is the engine's to say with its record; an error's text is
// never read for it.
TEST(Runner, AnErrorThatMentionsUnsupportedIsStillAnError) {
  const CellResult r = RunFake("error-says-unsupported");
  EXPECT_EQ(r.code, ResultCode::kUnresolved) << r.message;
  EXPECT_NE(r.message.find("isa neon is not supported"), std::string::npos) << r.message;
}

TEST(Runner, AnEngineThatRunsAnotherConfigurationIsUnresolved) {
  const CellResult r = RunFake("lie");
  EXPECT_EQ(r.code, ResultCode::kUnresolved);
  EXPECT_NE(r.message.find("threads 1 (asked 2)"), std::string::npos) << r.message;
}

TEST(Runner, AChattyChildDoesNotDeadlockAndKeepsOnlyTheTail) {
  const CellResult r = RunFake("chatty");
  EXPECT_EQ(r.code, ResultCode::kPass) << r.message;
  size_t lines = 0;
  for (char c : r.stderr_tail) lines += c == '\n';
  EXPECT_EQ(lines, 20u);
}

TEST(Runner, AProgramThatCannotStartIsUnresolved) {
  RunnerOptions options;
  options.own_profile = samebits::harness::testing::OwnProfile().get();
  options.engine = "/nonexistent/engine";
  const CellResult r = RunCell(FakeCell("ok"), options);
  EXPECT_EQ(r.code, ResultCode::kUnresolved);
  EXPECT_NE(r.message.find("/nonexistent/engine"), std::string::npos) << r.message;
}

TEST(Runner, AnUnsupportedCellRunsNoChild) {
  Cell cell = FakeCell("ok");
  cell.supported = false;
  cell.unsupported_reason = "this machine lacks neon";
  RunnerOptions options;
  options.own_profile = samebits::harness::testing::OwnProfile().get();
  options.engine = "/nonexistent/engine";  // would be UNRESOLVED if started
  const CellResult r = RunCell(cell, options);
  EXPECT_EQ(r.code, ResultCode::kUnsupported);
  EXPECT_EQ(r.message, "this machine lacks neon");
}

TEST(Child, TheEnvironmentIsControlled) {
  ::setenv("SAMEBITS_THREADS", "99", 1);
  ::setenv("SAMEBITS_SECRET_KNOB", "1", 1);
  ChildSpec spec;
  spec.program = "/usr/bin/env";
  spec.env = ChildEnvironment({{"SAMEBITS_THREADS", "3"}});
  const ChildOutcome out = RunChild(spec);
  ::unsetenv("SAMEBITS_THREADS");
  ::unsetenv("SAMEBITS_SECRET_KNOB");
  ASSERT_TRUE(out.started) << out.start_error;
  EXPECT_NE(out.stdout_text.find("SAMEBITS_THREADS=3\n"), std::string::npos) << out.stdout_text;
  EXPECT_EQ(out.stdout_text.find("SAMEBITS_SECRET_KNOB"), std::string::npos);
  EXPECT_NE(out.stdout_text.find("LC_ALL=C\n"), std::string::npos);
  if (std::getenv("PATH") != nullptr) {
    EXPECT_NE(out.stdout_text.find("PATH="), std::string::npos);
  }
}

TEST(Child, ArgumentsAreNeverInterpretedByAShell) {
  ChildSpec spec;
  spec.program = "/bin/echo";
  spec.args = {"$HOME", "a;b", "`x`"};
  spec.env = ChildEnvironment({});
  const ChildOutcome out = RunChild(spec);
  EXPECT_EQ(out.stdout_text, "$HOME a;b `x`\n");
}

// A process left in a new session holding the child's stdout used to keep
// RunChild reading forever; it is killed when the child ends, and named.
TEST(Child, AProcessLeftBehindIsKilledAndNamedAndTheReadEnds) {
  ChildSpec spec;
  spec.program = "/bin/sh";
  spec.args = {"-c", "setsid sleep 999 & echo started"};
  spec.env = ChildEnvironment({});
  spec.timeout_seconds = 30;
  const ChildOutcome out = RunChild(spec);
  ASSERT_TRUE(out.started) << out.start_error;
  EXPECT_FALSE(out.timed_out);
  EXPECT_LT(out.elapsed_ms, 10000);
  EXPECT_EQ(out.stdout_text, "started\n");
  ASSERT_EQ(out.left_running.size(), 1u);
  // Named by its command: `sleep`, or the forked shell (`sh`, `setsid`) when
  // the collector caught it before its exec, a race a loaded machine shows.
  const std::string& left = out.left_running[0];
  const size_t open = left.find(" (pid ");
  ASSERT_NE(open, std::string::npos) << left;
  const std::string name = left.substr(0, open);
  EXPECT_TRUE(name == "sleep" || name == "sh" || name == "setsid") << left;
  const pid_t pid = static_cast<pid_t>(std::stol(left.substr(open + 6)));
  EXPECT_NE(::kill(pid, 0), 0) << "pid " << pid << " still runs";
}

// The deadline bounds the reads too: a child whose grandchild (in its own
// session, so not in the child's group) holds stdout and sleeps, while the
// child itself hangs.
TEST(Child, TheDeadlineBoundsEveryWait) {
  ChildSpec spec;
  spec.program = "/bin/sh";
  spec.args = {"-c", "setsid sleep 999 & sleep 999"};
  spec.env = ChildEnvironment({});
  spec.timeout_seconds = 0.5;
  const ChildOutcome out = RunChild(spec);
  EXPECT_TRUE(out.timed_out);
  EXPECT_LT(out.elapsed_ms, 4000);
  EXPECT_EQ(out.signal, SIGKILL);
  EXPECT_FALSE(out.left_running.empty());
}

TEST(Child, AProgramThatCannotStartSaysWhy) {
  ChildSpec spec;
  spec.program = "/nonexistent/engine";
  spec.env = ChildEnvironment({});
  const ChildOutcome out = RunChild(spec);
  EXPECT_FALSE(out.started);
  EXPECT_NE(out.start_error.find("No such file"), std::string::npos) << out.start_error;
}

TEST(Scheduler, RunsEveryCellOnceInOrderWithParallelJobs) {
  std::vector<Cell> cells;
  for (int i = 0; i < 12; ++i) {
    Cell c;
    c.checkpoint = "c" + std::to_string(i);
    cells.push_back(c);
  }
  std::atomic<int> calls{0};
  std::atomic<int> running{0};
  std::atomic<int> peak{0};
  const auto results = RunCells(cells, 3, nullptr, [&](const Cell& c) {
    const int now = ++running;
    int seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --running;
    ++calls;
    if (c.checkpoint == "c5") throw std::runtime_error("boom");
    CellResult r;
    r.checkpoint = c.checkpoint;
    r.code = ResultCode::kPass;
    return r;
  });
  EXPECT_EQ(calls.load(), 12);
  EXPECT_LE(peak.load(), 3);
  ASSERT_EQ(results.size(), 12u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(results[i].checkpoint, "c" + std::to_string(i));
  EXPECT_EQ(results[5].code, ResultCode::kUnresolved);
  EXPECT_NE(results[5].message.find("boom"), std::string::npos);
}

}  // namespace
}  // namespace samebits::runner
