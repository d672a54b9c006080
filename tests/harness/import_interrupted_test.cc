// An import interrupted at any moment (SIGINT, SIGTERM, kill -9) leaves
// nothing behind once the database is next imported into: every dump file
// under dumps/ belongs to a stored cell, and every stored cell's dump file
// exists. Tried with each signal at many moments of a real import of a few
// hundred runs with dumps, not at one place.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness/exchange/bundle.h"
#include "harness/exchange/bundle_dumps.h"
#include "harness/store/store.h"
#include "tests/harness/dump_test_util.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::exchange {
namespace {

namespace fs = std::filesystem;
using harness::RunResult;
using harness::testing::TempDir;

// Writes a bundle of `count` runs, each with a cell whose dump rows travel,
// to `path`; `tag` keeps the runs of two bundles apart.
void WriteDumpBundle(const std::string& path, int count, const std::string& tag,
                     const std::string& scratch) {
  std::vector<RunResult> runs;
  for (int i = 0; i < count; ++i) {
    RunResult run;
    run.started_at = "2026-12-01T12:00:00Z";
    run.command = tag + " " + std::to_string(i);
    run.machine = {"x86_64", "Some CPU", "Linux", "6.1", "glibc 2.36", {"avx2"}};
    const std::string dump = scratch + "/" + tag + std::to_string(i) + ".f32";
    run.cells.push_back(
        harness::testing::DumpedCell("cpu-t1", harness::testing::DumpValues(i), dump));
    AttachDumps(run, "", 1 << 20);
    fs::remove(dump);
    runs.push_back(std::move(run));
  }
  WriteBundle(runs, path);
}

// Starts `samebits import BUNDLE --db DB`; returns its process id.
pid_t StartImport(const std::string& bundle, const std::string& db) {
  const std::string program = harness::testing::SamebitsProgram();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::freopen("/dev/null", "w", stdout);
    ::freopen("/dev/null", "w", stderr);
    ::execl(program.c_str(), program.c_str(), "import", bundle.c_str(), "--db", db.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

using Shell = harness::testing::ShellResult;

// Returns what /bin/sh made of `command` (stderr with stdout).
Shell RunShell(const std::string& command) {
  return harness::testing::RunShellLine(command);
}

// Returns the regular files below `dir` but import's owner marks.
std::set<std::string> DumpFiles(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().filename() != ".samebits-import-owner")
      out.insert(fs::weakly_canonical(e.path()).string());
  }
  return out;
}

TEST(ImportInterrupted, NothingIsLeftBehindWhateverTheMomentAndSignal) {
  TempDir tmp;
  const std::string big = tmp.File("big.json"), small = tmp.File("small.json");
  WriteDumpBundle(big, 300, "big", tmp.path());
  WriteDumpBundle(small, 1, "small", tmp.path());
  // How long a whole import takes here, to spread the interruptions over it.
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  ::waitpid(StartImport(big, tmp.File("timing/s.db")), &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const double whole =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int left_behind = 0, attempts = 0;
  for (const int sig : {SIGINT, SIGTERM, SIGKILL}) {
    for (const double fraction : {0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95}) {
      const fs::path dir = tmp.path() + "/run" + std::to_string(attempts++);
      fs::create_directories(dir);
      const std::string db = (dir / "s.db").string();
      const pid_t pid = StartImport(big, db);
      std::this_thread::sleep_for(std::chrono::duration<double>(whole * fraction));
      ::kill(pid, sig);
      ::waitpid(pid, &status, 0);
      const bool interrupted = WIFSIGNALED(status);
      const size_t files_after_kill = DumpFiles(dir / "dumps").size();
      // The next import into the database sweeps what the interrupted one left.
      const Shell next = RunShell("'" + harness::testing::SamebitsProgram() + "' import '" + small +
                                  "' --db '" + db + "'");
      ASSERT_EQ(next.exit_code, 0) << next.output;
      if (interrupted && next.output.find("removed") != std::string::npos) ++left_behind;
      std::set<std::string> referenced;
      store::Store store(db, store::Access::kRead);
      for (const store::RunSummary& r : store.ListRuns(1000)) {
        for (const harness::CellResult& c : store.LoadRun(r.id).cells) {
          if (c.dump_path.empty()) continue;
          EXPECT_TRUE(fs::exists(c.dump_path)) << c.dump_path << " of run " << r.id;
          referenced.insert(fs::weakly_canonical(c.dump_path).string());
        }
      }
      EXPECT_EQ(DumpFiles(dir / "dumps"), referenced)
          << "signal " << sig << " at " << fraction << " of the import (" << files_after_kill
          << " files after the kill)";
    }
  }
  // The window was hit: some interruption left files that the sweep removed.
  EXPECT_GT(left_behind, 0) << "no interruption fell inside an import of " << whole << " s";
}

// Two databases in one folder share its dumps/ folder: each imports the
// same bundle into dump files of its own, and neither's sweep removes the
// other's, even after an interrupted import.
TEST(ImportInterrupted, DatabasesSharingAFolderKeepTheirOwnDumps) {
  TempDir tmp;
  const std::string bundle = tmp.File("b.json");
  WriteDumpBundle(bundle, 3, "shared", tmp.path());
  const std::string program = harness::testing::SamebitsProgram();
  for (const char* db : {"a.db", "b.db", "a.db"}) {
    const Shell r =
        RunShell("'" + program + "' import '" + bundle + "' --db '" + tmp.File(db) + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  for (const char* db : {"a.db", "b.db"}) {
    store::Store store(tmp.File(db), store::Access::kRead);
    int cells = 0;
    for (const store::RunSummary& r : store.ListRuns(10)) {
      for (const harness::CellResult& c : store.LoadRun(r.id).cells) {
        ASSERT_FALSE(c.dump_path.empty());
        EXPECT_TRUE(fs::exists(c.dump_path)) << db << ": " << c.dump_path;
        ++cells;
      }
    }
    EXPECT_EQ(cells, 3) << db;
  }
  EXPECT_EQ(DumpFiles(tmp.path() + "/dumps").size(), 6u);
}

}  // namespace
}  // namespace samebits::exchange
