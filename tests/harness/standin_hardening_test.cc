// Fault injection through the real `samebits` program for the hardening
// cases: an engine that leaves a process holding its pipes, reports written
// over the store, foreign and read-only stores, and `diff` on incomplete
// runs. Each test drives the stand-in engine (tests/standins) or a shell
// script wrapped around it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/store/store.h"
#include "tests/harness/standin_helpers.h"
#include "tests/support/data_folder.h"

namespace samebits::standin {
namespace {

using harness::ResultCode;
namespace fs = std::filesystem;

class StandinHardening : public ::testing::Test {
 protected:
  StandinHardening() : dir_("standin_hardening") {}

  void SetUp() override {
    scenario_ = WriteScenario(dir_.path());
    db_ = (dir_.path() / "runs.db").string();
    // --references-dir must name a folder that exists (checked at parse time).
    fs::create_directories(dir_.path() / "references");
  }

  // Returns a shell script under the test folder that runs `prologue`, then
  // execs the well-behaved stand-in with the script's arguments.
  std::string WrappedEngine(const std::string& name, const std::string& prologue) {
    const fs::path script = dir_.path() / name;
    std::ofstream(script) << "#!/bin/sh\n"
                          << prologue << "\nexec " << ShellQuote(FaultyEngine(dir_.path(), "ok"))
                          << " \"$@\"\n";
    fs::permissions(script, fs::perms::owner_all);
    return script.string();
  }

  // Returns the result of `samebits <words> --engine <engine> ...` over one
  // stand-in cell.
  CommandResult Samebits(std::vector<std::string> words, const std::string& engine,
                         const std::string& timeout = "20",
                         const std::string& configs = "reference") {
    std::vector<std::string> argv = {BinDir() + "/samebits"};
    argv.insert(argv.end(), words.begin(), words.end());
    for (const std::string& a :
         {std::string("--engine"), engine, std::string("--checkpoint"),
          std::string("synthetic:tiny"), std::string("--scenario"), scenario_,
          std::string("--config"), configs, std::string("--timeout"), timeout, std::string("--db"),
          db_, std::string("--references-dir"), (dir_.path() / "references").string()}) {
      argv.push_back(a);
    }
    argv.push_back("-q");
    return RunCommand(argv);
  }

  harness::RunResult Latest() { return LatestRun(db_); }

  TempDir dir_;
  std::string scenario_, db_;
};

// Returns the ids in "(pid N)" mentions of `message`.
std::vector<pid_t> MentionedPids(const std::string& message) {
  std::vector<pid_t> out;
  const std::regex pid_re("\\(pid ([0-9]+)\\)");
  for (std::sregex_iterator it(message.begin(), message.end(), pid_re), end; it != end; ++it) {
    out.push_back(static_cast<pid_t>(std::stol((*it)[1])));
  }
  return out;
}

// An engine that leaves a process in a new session holding its stdout and
// stderr once kept `run` and `gate` waiting forever. Now the cell ends when
// the engine does, the process is killed, and the result names it.
TEST_F(StandinHardening, AProcessLeftInANewSessionIsKilledAndNamed) {
  const std::string engine = WrappedEngine("leaves-sleep.sh", "setsid sleep 999 &");
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = Samebits({"run"}, engine, "5");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0) << r.output;  // the cell ended with the engine, not at the deadline
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const harness::RunResult run = Latest();
  ASSERT_EQ(run.cells.size(), 1u);
  const harness::CellResult& cell = run.cells[0];
  EXPECT_EQ(cell.code, ResultCode::kUnresolved) << cell.message;
  // Named by its command: `sleep`, or the wrapper's forked shell or
  // `setsid` when the collector caught it before its exec (a race under load).
  bool named = false;
  for (const char* name : {"sleep", "leaves-sleep.sh", "setsid"}) {
    named = named || cell.message.find(std::string("left running after it ended (killed): ") +
                                       name + " (pid ") != std::string::npos;
  }
  EXPECT_TRUE(named) << cell.message;
  const std::vector<pid_t> pids = MentionedPids(cell.message);
  ASSERT_EQ(pids.size(), 1u) << cell.message;
  EXPECT_NE(::kill(pids[0], 0), 0) << "pid " << pids[0] << " still runs";
}

// The same process behind an engine that itself hangs: the gate ends at the
// deadline (plus the grace), with a TIMEOUT naming the process.
TEST_F(StandinHardening, AHangingEngineWithALeftoverEndsAtTheDeadline) {
  const std::string engine =
      WrappedEngine("hangs.sh", "setsid sleep 999 &\nexec " +
                                    ShellQuote(FaultyEngine(dir_.path(), "hang")) + " \"$@\"");
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = Samebits({"gate"}, engine, "2");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0) << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const harness::RunResult run = Latest();
  ASSERT_EQ(run.cells.size(), 1u);
  EXPECT_EQ(run.cells[0].code, ResultCode::kTimeout) << run.cells[0].message;
  EXPECT_NE(run.cells[0].message.find("sleep (pid "), std::string::npos) << run.cells[0].message;
  for (pid_t pid : MentionedPids(run.cells[0].message)) EXPECT_NE(::kill(pid, 0), 0) << pid;
}

// Negative control: the same wrapper without a leftover passes.
TEST_F(StandinHardening, AWrapperThatLeavesNothingPasses) {
  const std::string engine = WrappedEngine("clean.sh", "true");
  const CommandResult r = Samebits({"run"}, engine);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Latest().cells.at(0).code, ResultCode::kPass) << Latest().cells.at(0).message;
}

// Returns the number of runs in the store at `db`, or -1 when it cannot be
// read as one.
int RunCount(const std::string& db) {
  try {
    store::Store store(db);
    return static_cast<int>(store.ListRuns(1000).size());
  } catch (const std::exception&) {
    return -1;
  }
}

// `gate --report-md v.db` and `report -o v.db` used to overwrite the store
// and exit 0. Every spelling of the store or its side files is refused, and
// the gate refuses before it runs anything.
TEST_F(StandinHardening, AReportIsNeverWrittenOverTheStore) {
  const std::string ok = FaultyEngine(dir_.path(), "ok");
  ASSERT_EQ(Samebits({"run"}, ok).exit_code, 0);
  ASSERT_EQ(RunCount(db_), 1);
  const fs::path link = dir_.path() / "innocent.md";
  fs::create_symlink(db_, link);
  const fs::path dangling = dir_.path() / "dangling.md";
  fs::create_symlink(db_ + "-journal", dangling);
  const fs::path sub = dir_.path() / "sub";
  fs::create_directories(sub);
  const std::vector<std::string> spellings = {
      db_,           db_ + "-wal",      db_ + "-shm",
      link.string(), dangling.string(), (sub / ".." / "runs.db").string()};
  for (const std::string& target : spellings) {
    const CommandResult gate = Samebits({"gate", "--report-md", target}, ok);
    EXPECT_EQ(gate.exit_code, 2) << target << "\n" << gate.output;
    EXPECT_NE(gate.output.find("refusing to write --report-md to"), std::string::npos)
        << gate.output;
    const CommandResult report =
        RunCommand({BinDir() + "/samebits", "report", "latest", "-o", target, "--db", db_});
    EXPECT_EQ(report.exit_code, 2) << target << "\n" << report.output;
    EXPECT_NE(report.output.find("it is the run store"), std::string::npos) << report.output;
  }
  EXPECT_EQ(RunCount(db_), 1);  // still whole, and no gate ran
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_FALSE(fs::exists(db_ + "-journal"));
  // Negative control: a report next to the store is written.
  const std::string fine = (dir_.path() / "runs.db.md").string();
  EXPECT_EQ(
      RunCommand({BinDir() + "/samebits", "report", "latest", "-o", fine, "--db", db_}).exit_code,
      0);
  EXPECT_GT(fs::file_size(fine), 0u);
}

// Another program's SQLite database (rollback journal, one table) was
// switched to WAL even by the read-only commands that then refused it.
// Every command now refuses it without changing a byte or adding a file.
TEST_F(StandinHardening, AForeignSqliteFileIsRefusedUnchangedByEveryCommand) {
  const fs::path other = dir_.path() / "photos.db";
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE photos (id INTEGER); INSERT INTO photos VALUES (7);",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  const std::string before = FileBytes(other);
  const std::string sb = BinDir() + "/samebits";
  const std::vector<std::vector<std::string>> commands = {
      {sb, "runs", "--db", other.string()},
      {sb, "show", "latest", "--db", other.string()},
      {sb, "report", "latest", "--db", other.string()},
      {sb, "diff", "1", "1", "--db", other.string()},
  };
  for (const auto& argv : commands) {
    const CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 2) << r.command << "\n" << r.output;
    EXPECT_NE(r.output.find("not a samebits one"), std::string::npos) << r.output;
    EXPECT_EQ(FileBytes(other), before) << r.command;
  }
  db_ = other.string();
  const CommandResult run = Samebits({"run"}, FaultyEngine(dir_.path(), "ok"));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_EQ(FileBytes(other), before) << "run";
  EXPECT_FALSE(fs::exists(other.string() + "-wal"));
  EXPECT_FALSE(fs::exists(other.string() + "-shm"));
}

// Returns a shell prefix that runs a command as an unprivileged user when
// this process is root (root writes read-only files anyway), or "".
std::string Unprivileged() {
  return ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups" : "";
}

// A store one may read but not write could not be read: `runs`, `show` and
// `report` failed with "attempt to write a readonly database". Both a
// read-only file in a writable folder and a read-only folder are read; a
// run is refused before any cell runs.
TEST_F(StandinHardening, AReadOnlyStoreCanBeReadButNotRunInto) {
  if (::geteuid() == 0 && std::system("setpriv --help >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "root without setpriv: cannot make a store read-only";
  }
  const std::string ok = FaultyEngine(dir_.path(), "ok");
  ASSERT_EQ(Samebits({"run"}, ok).exit_code, 0);
  ASSERT_EQ(Samebits({"run"}, ok).exit_code, 0);
  fs::permissions(dir_.path(), fs::perms::all);  // others may enter (setpriv)
  ::chmod(db_.c_str(), 0444);
  const std::string sb = BinDir() + "/samebits";
  const std::string md = (dir_.path() / "out.md").string();
  for (const bool folder_read_only : {false, true}) {
    if (folder_read_only) ::chmod(dir_.path().c_str(), 0555);
    const std::vector<std::vector<std::string>> commands = {
        {sb, "runs", "--db", db_},
        {sb, "show", "latest", "--db", db_},
        {sb, "report", "latest", "--db", db_},
        {sb, "diff", "1", "2", "--db", db_},
    };
    for (const auto& argv : commands) {
      const CommandResult r = RunCommand(argv, Unprivileged());
      EXPECT_EQ(r.exit_code, 0) << r.command << "\n" << r.output;
      EXPECT_EQ(r.output.find("readonly"), std::string::npos) << r.output;
    }
    const std::vector<std::string> run = {
        sb,           "run",     "--engine", ok,          "--checkpoint", "synthetic:tiny",
        "--scenario", scenario_, "--config", "reference", "--db",         db_,
        "-q"};
    const CommandResult refused = RunCommand(run, Unprivileged());
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_NE(refused.output.find("is read-only here"), std::string::npos) << refused.output;
    EXPECT_EQ(refused.output.find("reference"), std::string::npos)
        << "a cell ran before the refusal:\n"
        << refused.output;
  }
  ::chmod(dir_.path().c_str(), 0755);
  EXPECT_EQ(RunCount(db_), 2);
}

// `diff` called a PASS run and a run whose child never sent `done`
// identical, because every step both sent agreed. The result codes count.
TEST_F(StandinHardening, DiffSeesARunWhoseChildNeverSentDone) {
  ASSERT_EQ(Samebits({"run"}, FaultyEngine(dir_.path(), "ok")).exit_code, 0);
  ASSERT_EQ(Samebits({"run"}, FaultyEngine(dir_.path(), "no-done")).exit_code, 1);
  const std::string sb = BinDir() + "/samebits";
  const CommandResult d = RunCommand({sb, "diff", "1", "2", "--db", db_});
  EXPECT_EQ(d.exit_code, 1) << d.output;
  EXPECT_NE(d.output.find("0 cells identical, 1 differ"), std::string::npos) << d.output;
  EXPECT_NE(d.output.find("result PASS vs UNRESOLVED"), std::string::npos) << d.output;
  // Negative control: a run against itself is identical.
  EXPECT_EQ(RunCommand({sb, "diff", "2", "2", "--db", db_}).exit_code, 0);
}

// When only fnv1a64 differed, the gate printed the two equal xxh3_64 values.
// It prints the hash that differs.
TEST_F(StandinHardening, TheGateNamesTheHashThatDiffers) {
  const std::string configs = "reference,cpu-t3";
  ASSERT_EQ(
      Samebits({"reference", "generate"}, FaultyEngine(dir_.path(), "ok"), "20", configs).exit_code,
      0);
  const CommandResult r =
      Samebits({"gate"}, FaultyEngine(dir_.path(), "wrong-fnv-at-3-threads"), "20", configs);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("logits fnv1a64 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(xxh3_64 equal)"), std::string::npos) << r.output;
  const std::regex equal_pair("xxh3_64 ([0-9a-f]{16}) vs \\1");
  EXPECT_FALSE(std::regex_search(r.output, equal_pair)) << r.output;
}

// A child's escape sequences, C1 controls and invalid UTF-8 reached the
// terminal raw (so an engine could clear the screen or print a fake
// summary). `run`, `gate` and `show` print them escaped.
TEST_F(StandinHardening, ChildBytesReachTheTerminalEscaped) {
  const std::string engine = FaultyEngine(dir_.path(), "terminal-escapes");
  const std::string sb = BinDir() + "/samebits";
  const std::vector<CommandResult> outputs = {Samebits({"run"}, engine), Samebits({"gate"}, engine),
                                              RunCommand({sb, "show", "latest", "--db", db_}),
                                              RunCommand({sb, "runs", "--db", db_})};
  for (const CommandResult& r : outputs) {
    for (const unsigned char bad : {0x1b, 0x07, 0x9b, 0xff, 0xfe, static_cast<int>('\r')}) {
      EXPECT_EQ(r.output.find(static_cast<char>(bad)), std::string::npos)
          << r.command << ": byte " << static_cast<int>(bad) << " in\n"
          << r.output;
    }
    EXPECT_EQ(r.output.find("\nRun 1: 1 cells, PASS 1"), std::string::npos) << r.output;
  }
  EXPECT_NE(outputs[0].output.find("\\e[2J\\e[H\\xc2\\x9b31m\\xff\\xfe stand-in\\rRun 1: all PASS"),
            std::string::npos)
      << outputs[0].output;
  EXPECT_NE(outputs[2].output.find("\\e]0;owned\\x07\\e[2Jerror\\nRun 1: 1 cells, PASS 1"),
            std::string::npos)
      << outputs[2].output;
}

// Returns the regular files under `dir` (recursively).
std::vector<std::string> FilesUnder(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file()) out.push_back(it->path().string());
  }
  return out;
}

// A child that dies half-way through its logit dump (a crash here; a full
// disk alike) left the partial dump behind, and the run's dump folder
// outlived the run. Both are removed; a whole dump stays.
TEST_F(StandinHardening, APartialLogitDumpIsNotLeftBehind) {
  const fs::path dumps = dir_.path() / "dumps";
  EXPECT_EQ(Samebits({"run", "--dump-logits"}, FaultyEngine(dir_.path(), "crash")).exit_code, 1);
  EXPECT_TRUE(FilesUnder(dumps).empty()) << FilesUnder(dumps).front();
  std::error_code ec;
  EXPECT_TRUE(fs::is_empty(dumps, ec) || !fs::exists(dumps)) << "a dump folder is left";
  // Negative control: a child that finishes keeps its dump.
  EXPECT_EQ(Samebits({"run", "--dump-logits"}, FaultyEngine(dir_.path(), "ok")).exit_code, 0);
  EXPECT_EQ(FilesUnder(dumps).size(), 1u);
}

// A relative --checkpoint equal to one of the default suite's specs was
// resolved against the project root, any other against the working folder:
// from another folder a user got PASS for a file they did not name. One
// rule now: relative to the working folder. The real engine runs here, so
// that a file that is not there is refused.
TEST_F(StandinHardening, ARelativeCheckpointNamesTheWorkingFoldersFile) {
  const fs::path root = SAMEBITS_SOURCE_DIR;
  // Lexical, as the harness resolves a relative path (a symlinked shared
  // folder keeps its own name).
  const fs::path real = (root / "../shared/checkpoints/stories260K.gguf").lexically_normal();
  SAMEBITS_SKIP_WITHOUT_DATA(real.string());
  const std::string spec = "gguf:../shared/checkpoints/stories260K.gguf";
  auto run_from = [&](const fs::path& folder, const std::string& checkpoint) {
    return RunCommand({BinDir() + "/samebits", "run", "--checkpoint", checkpoint, "--config",
                       "reference", "--db", db_, "-q"},
                      "cd " + ShellQuote(folder.string()) + " &&");
  };
  const fs::path elsewhere = dir_.path() / "work";
  fs::create_directories(elsewhere);
  const CommandResult missing = run_from(elsewhere, spec);
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find((dir_.path() / "shared/checkpoints/stories260K.gguf").string()),
            std::string::npos)
      << missing.output;
  EXPECT_EQ(RunCount(db_), 0);
  // From the root the words name the suite's file; from the build folder
  // its own relative path to that file does too, under the same key (the
  // references' keys).
  const CommandResult at_root = run_from(root, spec);
  EXPECT_EQ(at_root.exit_code, 0) << at_root.output;
  const fs::path build = SAMEBITS_BINARY_DIR;
  const CommandResult from_build =
      run_from(build, "gguf:" + real.lexically_relative(build).string());
  EXPECT_EQ(from_build.exit_code, 0) << from_build.output;
  for (const int64_t id : {1, 2}) {
    store::Store store(db_);
    const harness::RunResult run = store.LoadRun(id);
    ASSERT_FALSE(run.cells.empty());
    for (const harness::CellResult& c : run.cells) {
      EXPECT_EQ(c.checkpoint, spec);
      EXPECT_EQ(c.engine_checkpoint, "gguf:" + real.string());
      EXPECT_EQ(c.weights_xxh3.size(), 16u);
    }
  }
}

// A damaged store (cut short, or with a page of garbage) used to be found
// only at the save, after the whole matrix ran. `run` and `gate` refuse it
// first (PRAGMA quick_check), exit 2 naming the file, and leave it as it was.
TEST_F(StandinHardening, ADamagedStoreIsRefusedBeforeAnyCellRuns) {
  const std::string ok = FaultyEngine(dir_.path(), "ok");
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Samebits({"run"}, ok).exit_code, 0);
  ASSERT_FALSE(fs::exists(db_ + "-wal") && fs::file_size(db_ + "-wal") > 0)
      << "the last writer left its journal: the damage below would miss the pages";
  const std::string whole = FileBytes(db_);
  const size_t page = 4096;
  ASSERT_GE(whole.size(), 4 * page) << "too small a store to damage one page of";
  const fs::path marker = dir_.path() / "a-cell-ran";
  const std::string engine = WrappedEngine("marking.sh", "touch " + ShellQuote(marker.string()));
  std::string garbage = whole;
  for (size_t k = 2 * page; k < 3 * page; ++k) garbage[k] = static_cast<char>((k * 131) ^ 0x5a);
  const std::vector<std::pair<std::string, std::string>> damages = {
      {"cut short", whole.substr(0, whole.size() - whole.size() / 2 / page * page)},
      {"a page of garbage", garbage},
  };
  for (const auto& [what, bytes] : damages) {
    std::ofstream(db_, std::ios::binary | std::ios::trunc) << bytes;
    for (const char* command : {"run", "gate"}) {
      const auto start = std::chrono::steady_clock::now();
      const CommandResult r = Samebits({command}, engine);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_EQ(r.exit_code, 2) << what << ", " << command << "\n" << r.output;
      EXPECT_NE(r.output.find(db_), std::string::npos) << r.output;
      EXPECT_FALSE(fs::exists(marker)) << what << ", " << command << ": a cell ran first";
      EXPECT_LT(seconds, 30) << what << ", " << command;  // generous: sanitizers, a busy machine
      EXPECT_EQ(FileBytes(db_), bytes) << what << ", " << command << ": the store was changed";
    }
  }
  // Negative control: the whole store is taken, and the engine runs.
  std::ofstream(db_, std::ios::binary | std::ios::trunc) << whole;
  const CommandResult r = Samebits({"run"}, engine);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(marker));
  EXPECT_EQ(RunCount(db_), 4);
}

// Results are keyed by the scenario's name: a run of another folder's
// `classic` was compared against this one's. Each cell now stores its
// scenario file's hash; `diff` flags two different files under one name,
// and one run refuses to hold both.
TEST_F(StandinHardening, TwoScenariosUnderOneNameAreTold) {
  const std::string ok = FaultyEngine(dir_.path(), "ok");
  const fs::path a = dir_.path() / "a", b = dir_.path() / "b";
  fs::create_directories(a);
  fs::create_directories(b);
  const std::string text = FileBytes(scenario_);
  std::ofstream(a / "classic.json") << text;
  std::ofstream(b / "classic.json") << text << "\n";  // other bytes, one name
  const std::string sb = BinDir() + "/samebits";
  auto run_with = [&](const std::vector<std::string>& scenarios) {
    std::vector<std::string> argv = {sb,
                                     "run",
                                     "--engine",
                                     ok,
                                     "--checkpoint",
                                     "synthetic:tiny",
                                     "--config",
                                     "reference",
                                     "--db",
                                     db_,
                                     "--references-dir",
                                     (dir_.path() / "references").string(),
                                     "-q"};
    for (const std::string& s : scenarios) {
      argv.push_back("--scenario");
      argv.push_back(s);
    }
    return RunCommand(argv);
  };
  ASSERT_EQ(run_with({(a / "classic.json").string()}).exit_code, 0);
  ASSERT_EQ(run_with({(a / "classic.json").string()}).exit_code, 0);
  ASSERT_EQ(run_with({(b / "classic.json").string()}).exit_code, 0);
  EXPECT_EQ(Latest().cells.at(0).scenario_xxh3.size(), 16u);
  // Negative control: the same file twice is identical.
  const CommandResult same = RunCommand({sb, "diff", "1", "2", "--db", db_});
  EXPECT_EQ(same.exit_code, 0) << same.output;
  const CommandResult d = RunCommand({sb, "diff", "1", "3", "--db", db_});
  EXPECT_EQ(d.exit_code, 1) << d.output;
  EXPECT_NE(d.output.find("is not the same file on both sides: content xxh3"), std::string::npos)
      << d.output;
  const CommandResult both =
      run_with({(a / "classic.json").string(), (b / "classic.json").string()});
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("scenarios are named 'classic'"), std::string::npos) << both.output;
  EXPECT_EQ(RunCount(db_), 3);
}

}  // namespace
}  // namespace samebits::standin
