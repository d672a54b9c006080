// Faults under many writers, on both backends (store_backends.h): eight
// writer processes save fifty runs each into one store while the test
// kills writers with SIGKILL at random moments (and restarts the
// PostgreSQL server once, in the middle), starting each killed writer
// again where it was acknowledged. Afterwards no acknowledged run is
// lost, no run is stored twice and no run is stored in part.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "harness/store/store.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/store_backends.h"

namespace samebits::store {
namespace {

using harness::RunResult;
using harness::testing::MakeCell;

constexpr int kWriters = 8;
constexpr int kRunsEach = 50;
constexpr int kCells = 3;
constexpr int kStepsPerCell = 4;

// A run of kCells cells of kStepsPerCell steps each, named by `command`.
RunResult WriterRun(const std::string& command) {
  RunResult run;
  run.started_at = "2026-12-02T03:00:00Z";
  run.command = command;
  run.machine.arch = "x86_64";
  run.machine.cpu = "test cpu";
  for (int c = 0; c < kCells; ++c) {
    run.cells.push_back(
        MakeCell("synthetic:tiny", "classic", "cpu-t" + std::to_string(c + 1), 7, kStepsPerCell));
  }
  return run;
}

// One writer incarnation: saves runs `first`.. of writer `w` (commands
// "w W i I r R"), appending "W R\n" to the acknowledgement file after each
// save returned. Never returns.
[[noreturn]] void Writer(const std::string& db, const std::string& acks, int w, int incarnation,
                         int first) {
  int code = 0;
  try {
    Store store(db);
    std::minstd_rand random(static_cast<unsigned>(::getpid()));
    // A little time inside each transaction, so that kills land there too.
    store.after_cell_hook = [&](int) { ::usleep(random() % 2000); };
    const int fd = ::open(acks.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
    for (int r = first; r < kRunsEach; ++r) {
      std::ostringstream command;
      command << "w " << w << " i " << incarnation << " r " << r;
      store.SaveRun(WriterRun(command.str()));
      const std::string ack = std::to_string(w) + " " + std::to_string(r) + "\n";
      if (::write(fd, ack.data(), ack.size()) != static_cast<ssize_t>(ack.size())) code = 3;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "writer %d/%d: %s\n", w, incarnation, e.what());
    code = 1;
  }
  ::_exit(code);
}

// Returns, per writer, the runs acknowledged so far.
std::map<int, std::set<int>> ReadAcks(const std::string& acks) {
  std::map<int, std::set<int>> out;
  std::ifstream in(acks);
  int w = 0, r = 0;
  while (in >> w >> r) out[w].insert(r);
  return out;
}

class StoreFaults : public testing::StoreBackendTest {};
SAMEBITS_ON_BOTH_STORE_BACKENDS(StoreFaults);

TEST_P(StoreFaults, KilledWritersAndARestartedServerLoseDuplicateAndHalveNothing) {
  const char* restart = postgres() ? std::getenv("SAMEBITS_TEST_PG_RESTART") : nullptr;
  if (postgres() && restart == nullptr)
    GTEST_SKIP() << "SAMEBITS_TEST_PG_RESTART is not set (ci/with-postgres.sh sets it)";
  Store(db()).SaveRun(WriterRun("before"));  // the schema exists before the race
  const std::string acks = dir_.File("acks");
  std::map<pid_t, int> writer_of;  // running writer -> its number
  std::vector<int> incarnations(kWriters, 0);
  const auto start = [&](int w) {
    const std::set<int> done = ReadAcks(acks)[w];
    const int first = done.empty() ? 0 : *done.rbegin() + 1;
    if (first >= kRunsEach) return;
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) Writer(db(), acks, w, ++incarnations[w], first);
    ++incarnations[w];
    writer_of[pid] = w;
  };
  for (int w = 0; w < kWriters; ++w) start(w);
  std::minstd_rand random(20261202);
  int kills = 0, failures = 0;
  bool restarted = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (!writer_of.empty()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the writers did not finish";
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 40));
    if (kills < 24 && random() % 4 == 0 && !writer_of.empty()) {
      auto victim = writer_of.begin();
      std::advance(victim, static_cast<long>(random() % writer_of.size()));
      ::kill(victim->first, SIGKILL);
      ++kills;
    }
    size_t acked = 0;
    for (const auto& [w, runs] : ReadAcks(acks)) acked += runs.size();
    if (restart != nullptr && !restarted && acked >= kWriters * kRunsEach / 2) {
      restarted = true;
      EXPECT_EQ(std::system(restart), 0) << restart;
    }
    // Reaps whoever ended, and starts again where it was acknowledged
    // each writer that was killed or gave up.
    for (;;) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      const int w = writer_of[pid];
      writer_of.erase(pid);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
      if (WIFEXITED(status)) ++failures;
      start(w);
    }
  }
  EXPECT_GE(kills, 8) << "too few kills to be a test of them";
  if (restart != nullptr) {
    EXPECT_TRUE(restarted);
  }
  // Writers that gave up (a commit whose answer the restart cut off, a
  // writer started while the server was down) were started again; what
  // counts is what the store holds.
  std::printf("%d kills, %d writers gave up and were started again\n", kills, failures);

  Store store(db(), Access::kRead);
  Connection& c = store.connection();
  // Every stored run is whole: its cells and every cell's steps.
  Statement whole = c.Prepare(
      "SELECT r.command, r.cell_count, (SELECT count(*) FROM cells k WHERE k.run_id = r.id), "
      "(SELECT count(*) FROM steps s JOIN cells k ON k.id = s.cell_id WHERE k.run_id = r.id) "
      "FROM runs r WHERE r.command != 'before'");
  std::map<int, std::set<int>> stored;
  std::set<std::string> commands;
  int runs = 0;
  while (whole.Step()) {
    ++runs;
    const std::string command = whole.Text(0);
    EXPECT_TRUE(commands.insert(command).second) << "stored twice: " << command;
    EXPECT_EQ(whole.Int(1), kCells) << command;
    EXPECT_EQ(whole.Int(2), kCells) << command << " is stored in part";
    EXPECT_EQ(whole.Int(3), kCells * kStepsPerCell) << command << " is stored in part";
    std::istringstream words(command);
    std::string w_, i_, r_;
    int w = 0, incarnation = 0, r = 0;
    words >> w_ >> w >> i_ >> incarnation >> r_ >> r;
    stored[w].insert(r);
  }
  // Every acknowledged run is there; every writer got to its last run.
  const std::map<int, std::set<int>> acked = ReadAcks(acks);
  for (int w = 0; w < kWriters; ++w) {
    ASSERT_EQ(acked.count(w), 1u) << "writer " << w << " saved nothing";
    for (int r : acked.at(w))
      EXPECT_EQ(stored[w].count(r), 1u) << "lost: writer " << w << " run " << r;
    EXPECT_EQ(*acked.at(w).rbegin(), kRunsEach - 1) << "writer " << w;
    for (int r = 0; r < kRunsEach; ++r)
      EXPECT_EQ(stored[w].count(r), 1u) << "writer " << w << " run " << r << " never stored";
  }
  EXPECT_GE(runs, kWriters * kRunsEach);
  // Identity rows stay single however many writers raced to add them.
  Statement machines = c.Prepare("SELECT count(*) FROM machines");
  ASSERT_TRUE(machines.Step());
  EXPECT_EQ(machines.Int(0), 1);
}

}  // namespace
}  // namespace samebits::store
