// The `samebits` program end to end, driving the fake engine
// (fake_engine_main.cc): exit codes, the reference workflow, diagnosis
// text, stored runs, and four samebits processes writing one database.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/runner/child.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::harness {
namespace {

using runner::ChildOutcome;
using testing::FakeEngine;
using testing::ReadFile;
using testing::SamebitsProgram;
using testing::TempDir;
using testing::WriteFile;

// Returns the outcome of `samebits ARGV...` in a controlled environment.
ChildOutcome RunSamebits(const std::vector<std::string>& argv) {
  runner::ChildSpec spec;
  spec.program = SamebitsProgram();
  spec.args = argv;
  spec.env = runner::ChildEnvironment({});
  spec.timeout_seconds = 120;
  return runner::RunChild(spec);
}

// A sandbox: scenarios, references and a database in a temporary folder.
class Sandbox {
 public:
  Sandbox() {
    WriteFile(dir_.File("scenarios/classic.json"), "{}\n");
    WriteFile(dir_.File("scenarios/long.json"), "{}\n");
    // An empty references folder: a --references-dir that does not exist
    // is refused (exit 2).
    std::filesystem::create_directories(dir_.File("references"));
  }
  // Runs samebits with the sandbox's folders and the fake engine.
  ChildOutcome Run(const std::string& command, std::vector<std::string> args,
                   const std::string& checkpoint = "fake:ok") const {
    std::vector<std::string> argv = {command};
    if (command == "reference") {
      argv.push_back(args.front());
      args.erase(args.begin());
    }
    const bool matrix =
        command == "run" || command == "gate" || (command == "reference" && argv[1] == "generate");
    if (matrix) {
      for (const std::string& a :
           {std::string("--engine"), FakeEngine(), std::string("--scenarios-dir"),
            dir_.File("scenarios"), std::string("--checkpoint"), checkpoint,
            std::string("--threads"), std::string("1,3"), std::string("-j"), std::string("2"),
            std::string("--timeout"), std::string("20")}) {
        argv.push_back(a);
      }
    }
    if (matrix || command == "runs" || command == "show") {
      argv.push_back("--db");
      argv.push_back(db());
    }
    if (matrix || command == "reference") {
      argv.push_back("--references-dir");
      argv.push_back(dir_.File("references"));
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return RunSamebits(argv);
  }
  // Runs `samebits COMMAND` with the fake engine, the sandbox's folders and
  // database, one checkpoint and scenario, and then `args`, each option
  // given once (a second value of a single-value option is itself an error).
  // `command` may be two words ("reference generate").
  ChildOutcome RunOnce(const std::string& command, const std::vector<std::string>& args) const {
    std::vector<std::string> argv;
    for (size_t at = 0; at <= command.size();) {
      const size_t space = std::min(command.find(' ', at), command.size());
      argv.push_back(command.substr(at, space - at));
      at = space + 1;
    }
    const std::vector<std::string> common = {
        "-q",         "--engine", FakeEngine(),      "--checkpoint",         "fake:ok",
        "--scenario", "classic",  "--scenarios-dir", dir_.File("scenarios"), "--db",
        db()};
    argv.insert(argv.end(), common.begin(), common.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return RunSamebits(argv);
  }
  std::string db() const { return dir_.File("db/samebits.db"); }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
};

int Exit(const ChildOutcome& out) {
  return out.signal != 0 ? 128 + out.signal : out.exit_code;
}

TEST(Cli, HelpListsEverySubcommand) {
  Sandbox box;
  const ChildOutcome out = box.Run("--help", {});
  EXPECT_EQ(Exit(out), 0);
  for (const char* name : {"run", "gate", "reference", "runs", "show"}) {
    EXPECT_NE(out.stdout_text.find(name), std::string::npos) << name;
  }
}

TEST(Cli, BadArgumentsExitTwo) {
  Sandbox box;
  EXPECT_EQ(Exit(box.Run("run", {"--config", "cpu-t2-fast"})), 2);
  EXPECT_EQ(Exit(box.Run("run", {"--scenario", "nonexistent"})), 2);
  EXPECT_EQ(Exit(box.Run("gate", {"--no-such-flag"})), 2);
  EXPECT_EQ(Exit(box.Run("gate", {"--engine", "/nonexistent/engine"})), 2);
}

TEST(Cli, HelpExplainsTheExitCodesWithExamples) {
  Sandbox box;
  for (const char* command : {"--help", "gate"}) {
    const ChildOutcome out =
        std::string(command) == "gate" ? box.Run("gate", {"--help"}) : box.Run(command, {});
    EXPECT_EQ(Exit(out), 0) << command;
    const std::string& text = out.stdout_text;
    for (const char* line : {"Exit codes:\n  0  ", "\n  1  ", "\n  2  "}) {
      EXPECT_NE(text.find(line), std::string::npos) << command << ": " << line << "\n" << text;
    }
    EXPECT_NE(text.find("Examples:\n  samebits "), std::string::npos) << command << "\n" << text;
  }
}

TEST(Cli, AGateWhoseSelectionRunsNothingExitsTwoAndStoresNothing) {
  Sandbox box;
  const ChildOutcome nomatch = box.Run("gate", {"-q", "--scenario", "nomatch"});
  EXPECT_EQ(Exit(nomatch), 2);
  EXPECT_NE(nomatch.stderr_tail.find("no scenario named 'nomatch'"), std::string::npos)
      << nomatch.stderr_tail;
  // The engine refuses an unknown checkpoint (error record, exit 2) in
  // every cell: nothing ran, so the command could not be carried out.
  const ChildOutcome unknown = box.Run("gate", {"-q", "--scenario", "classic"}, "fake:nonexistent");
  EXPECT_EQ(Exit(unknown), 2) << unknown.stdout_text << unknown.stderr_tail;
  EXPECT_NE(unknown.stderr_tail.find("the engine refused every cell of the selection"),
            std::string::npos)
      << unknown.stderr_tail;
  EXPECT_NE(unknown.stderr_tail.find("no such synthetic checkpoint"), std::string::npos)
      << unknown.stderr_tail;
  EXPECT_EQ(Exit(box.Run("run", {"-q", "--scenario", "classic"}, "fake:nonexistent")), 2);
  EXPECT_EQ(
      Exit(box.Run("reference", {"generate", "-q", "--scenario", "classic"}, "fake:nonexistent")),
      2);
  EXPECT_TRUE(ReadFile(box.dir().File("references/portable.txt")).empty());
  const ChildOutcome runs = box.Run("runs", {});
  EXPECT_EQ(runs.stdout_text.find("fake:nonexistent"), std::string::npos) << runs.stdout_text;
  // A good checkpoint beside a refused one does not make the selection
  // runnable.
  EXPECT_EQ(Exit(box.Run("gate", {"-q", "--scenario", "classic"}, "fake:ok,fake:nonexistent")), 2);
}

// What the engine cannot run is the engine's to say. A program given by
// path (here the fake engine) is not asked before the run: every cell is
// listed, and those of the ISAs its made-up machine lacks come back
// UNSUPPORTED from the engine itself, with its reason.
TEST(Cli, ListShowsTheMatrixAndTheEngineAnswersForWhatItCannotRun) {
  Sandbox box;
  const ChildOutcome out = box.Run("run", {"--list", "--scenario", "classic"});
  EXPECT_EQ(Exit(out), 0);
  EXPECT_NE(out.stdout_text.find("fake:ok classic reference\n"), std::string::npos)
      << out.stdout_text;
  EXPECT_NE(out.stdout_text.find("fake:ok classic cpu-t3-chunk8k\n"), std::string::npos);
  EXPECT_NE(out.stdout_text.find("fake:ok classic cpu-neon\n"), std::string::npos);
  EXPECT_EQ(out.stdout_text.find("left out"), std::string::npos) << out.stdout_text;
  const ChildOutcome ran =
      box.Run("run", {"-q", "--scenario", "classic", "--config", "cpu-avx2,cpu-neon"});
  EXPECT_EQ(Exit(ran), 0) << ran.stdout_text << ran.stderr_tail;
  EXPECT_NE(ran.stdout_text.find("UNSUPPORTED : 1"), std::string::npos) << ran.stdout_text;
  EXPECT_NE(ran.stdout_text.find("the fake engine's made-up x86_64 machine has no neon"),
            std::string::npos)
      << ran.stdout_text;
}

TEST(Cli, TheReferenceWorkflow) {
  Sandbox box;
  // No references yet: the gate fails and says how to make them.
  ChildOutcome out = box.Run("gate", {"-q"});
  EXPECT_EQ(Exit(out), 1) << out.stdout_text << out.stderr_tail;
  EXPECT_NE(out.stdout_text.find("samebits reference generate"), std::string::npos)
      << out.stdout_text;
  // Generate, then the gate passes.
  out = box.Run("reference", {"generate", "-q"});
  EXPECT_EQ(Exit(out), 0) << out.stdout_text << out.stderr_tail;
  const std::string refs = ReadFile(box.dir().File("references/portable.txt"));
  EXPECT_NE(refs.find("math-library samebits-portable 1 00000000000000aa\n"), std::string::npos)
      << refs;
  EXPECT_NE(refs.find("fake:ok classic 4 decode 14 "), std::string::npos) << refs;
  out = box.Run("gate", {"-q", "--report-md", box.dir().File("reports/latest.md"), "--report-html",
                         box.dir().File("reports/latest.html")});
  EXPECT_EQ(Exit(out), 0) << out.stdout_text << out.stderr_tail;
  EXPECT_NE(out.stdout_text.find("PASS"), std::string::npos);
  EXPECT_NE(out.stdout_text.find("UNSUPPORTED"), std::string::npos) << out.stdout_text;
  EXPECT_FALSE(ReadFile(box.dir().File("reports/latest.md")).empty());
  EXPECT_FALSE(ReadFile(box.dir().File("reports/latest.html")).empty());
  // Regenerating unchanged numbers leaves the file as it was.
  out = box.Run("reference", {"generate", "-q"});
  EXPECT_NE(out.stdout_text.find("unchanged"), std::string::npos) << out.stdout_text;
  EXPECT_EQ(ReadFile(box.dir().File("references/portable.txt")), refs);
  // `reference show` prints it.
  out = box.Run("reference", {"show", "--math", "portable", "--quant-dot", "exact"});
  EXPECT_EQ(Exit(out), 0);
  EXPECT_EQ(out.stdout_text, refs);
  // The stored runs are listed and shown.
  out = box.Run("runs", {});
  EXPECT_EQ(Exit(out), 0);
  EXPECT_NE(out.stdout_text.find("PASS"), std::string::npos) << out.stdout_text;
  out = box.Run("show", {"latest", "--steps"});
  EXPECT_EQ(Exit(out), 0);
  EXPECT_NE(out.stdout_text.find("fake:ok classic cpu-t3"), std::string::npos) << out.stdout_text;
  EXPECT_NE(out.stdout_text.find("xxh3_64"), std::string::npos);
  // A stored run can be gated again.
  EXPECT_EQ(Exit(box.Run("gate", {"--run", "latest"})), 0);
}

TEST(Cli, ReferencesAreNeverWrittenFromADisagreeingRun) {
  Sandbox box;
  const ChildOutcome out = box.Run("reference", {"generate", "-q"}, "fake:wrong-t3");
  EXPECT_EQ(Exit(out), 1);
  EXPECT_NE(out.stderr_tail.find("refusing"), std::string::npos) << out.stderr_tail;
  EXPECT_NE(out.stderr_tail.find("cpu-t3"), std::string::npos) << out.stderr_tail;
  EXPECT_TRUE(ReadFile(box.dir().File("references/portable.txt")).empty());
}

TEST(Cli, TheGateNamesTheBrokenConfigurationAndWithTraceTheLayer) {
  Sandbox box;
  ASSERT_EQ(Exit(box.Run("reference", {"generate", "-q"}, "fake:wrong-t3")), 1);
  const ChildOutcome out =
      box.Run("gate", {"-q", "--scenario", "classic", "--trace"}, "fake:wrong-t3");
  EXPECT_EQ(Exit(out), 1);
  const std::string& text = out.stdout_text;
  EXPECT_NE(text.find("The identity is broken in this build"), std::string::npos) << text;
  EXPECT_NE(text.find("reference and cpu-t3 first differ at step 2 (decode, position 12)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("layer 1, op ffn_out"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL: fake:wrong-t3 classic cpu-t3:"), std::string::npos) << text;
  EXPECT_EQ(text.find("FAIL: fake:wrong-t3 classic cpu-t1:"), std::string::npos) << text;
}

TEST(Cli, AnotherMathLibraryIsDiagnosedAsSuch) {
  Sandbox box;
  ASSERT_EQ(Exit(box.Run("reference", {"generate", "-q", "--math", "libm", "--config",
                                       "reference-libm,cpu-t1-libm"})),
            0);
  // The same checkpoint name, but this environment's libm is another one.
  std::string refs = ReadFile(box.dir().File("references/libm-x86_64.txt"));
  ASSERT_FALSE(refs.empty());
  // Make the file speak for the checkpoint fake:libm-other, whose engine
  // reports another libm (and other hashes) under --math libm.
  size_t at = 0;
  while ((at = refs.find("fake:ok", at)) != std::string::npos)
    refs.replace(at, 7, "fake:libm-other");
  WriteFile(box.dir().File("references/libm-x86_64.txt"), refs);
  const ChildOutcome judged =
      box.Run("gate", {"-q", "--math", "libm", "--config", "reference-libm,cpu-t1-libm"},
              "fake:libm-other");
  EXPECT_EQ(Exit(judged), 1);
  EXPECT_NE(judged.stdout_text.find("this environment's math library rounds differently"),
            std::string::npos)
      << judged.stdout_text;
  EXPECT_NE(judged.stdout_text.find("otherlibm 9.9 (fingerprint 1111111111111111)"),
            std::string::npos);
  EXPECT_NE(judged.stdout_text.find("glibc 2.36 (fingerprint 00000000000000bb)"),
            std::string::npos);
}

// `--quant-dot exact,int8` runs every configuration under both profiles,
// writes each its own references (portable.txt, portable-int8.txt) and
// judges each against its own: the fake engine's int8 hashes differ from
// its exact ones, as a quantized checkpoint's do, and the gate passes.
TEST(Cli, TheInt8ProfileHasReferencesOfItsOwnAndIsNeverComparedWithExact) {
  Sandbox box;
  const std::vector<std::string> both = {"-q", "--quant-dot", "exact,int8", "--config",
                                         "reference,cpu-t1"};
  std::vector<std::string> generate = {"generate"};
  generate.insert(generate.end(), both.begin(), both.end());
  ChildOutcome out = box.Run("reference", generate);
  ASSERT_EQ(Exit(out), 0) << out.stdout_text << out.stderr_tail;
  const std::string exact = ReadFile(box.dir().File("references/portable.txt"));
  const std::string int8 = ReadFile(box.dir().File("references/portable-int8.txt"));
  EXPECT_NE(exact.find("\ngroup portable\n"), std::string::npos) << exact;
  EXPECT_NE(int8.find("\ngroup portable-int8\n"), std::string::npos) << int8;
  const std::string first_exact = exact.substr(exact.find("fake:ok classic 0 "));
  const std::string first_int8 = int8.substr(int8.find("fake:ok classic 0 "));
  EXPECT_NE(first_exact.substr(0, first_exact.find('\n')),
            first_int8.substr(0, first_int8.find('\n')));
  out = box.Run("gate", both);
  EXPECT_EQ(Exit(out), 0) << out.stdout_text << out.stderr_tail;
  EXPECT_NE(out.stdout_text.find("PASS        : 8"), std::string::npos) << out.stdout_text;
  // The int8 profile alone is judged against its own file, and `show`
  // names each cell's profile.
  out = box.Run("gate", {"-q", "--quant-dot", "int8", "--config", "cpu-t3-int8"});
  EXPECT_EQ(Exit(out), 0) << out.stdout_text << out.stderr_tail;
  out = box.Run("show", {"latest"});
  EXPECT_NE(out.stdout_text.find(
                "cpu-t3-int8 (kernels cpu, threads 3, isa auto -> scalar, math portable, "
                "quant-dot int8)"),
            std::string::npos)
      << out.stdout_text;
  // `reference show` prints each profile's group.
  out = box.Run("reference", {"show", "--math", "portable", "--quant-dot", "int8"});
  EXPECT_EQ(Exit(out), 0);
  EXPECT_EQ(out.stdout_text, int8);
  out = box.Run("reference", {"show"});
  EXPECT_EQ(Exit(out), 0);
  EXPECT_NE(out.stdout_text.find(exact), std::string::npos) << out.stdout_text;
  EXPECT_NE(out.stdout_text.find(int8), std::string::npos) << out.stdout_text;
  EXPECT_NE(out.stdout_text.find("libm-int8-x86_64.txt: none (make it: samebits reference "
                                 "generate --math libm --quant-dot int8)"),
            std::string::npos)
      << out.stdout_text;
  // Negative control: the int8 cells judged against the exact file differ.
  std::filesystem::copy_file(box.dir().File("references/portable.txt"),
                             box.dir().File("references/portable-int8.txt"),
                             std::filesystem::copy_options::overwrite_existing);
  std::string relabelled = ReadFile(box.dir().File("references/portable-int8.txt"));
  relabelled.replace(relabelled.find("\ngroup portable\n"), 16, "\ngroup portable-int8\n");
  WriteFile(box.dir().File("references/portable-int8.txt"), relabelled);
  out = box.Run("gate", both);
  EXPECT_EQ(Exit(out), 1) << out.stdout_text;
  EXPECT_NE(out.stdout_text.find("references/portable-int8.txt"), std::string::npos)
      << out.stdout_text;
  EXPECT_NE(out.stdout_text.find("PASS        : 4"), std::string::npos) << out.stdout_text;
  EXPECT_NE(out.stdout_text.find("FAIL: 2 cells of cpu-t1-int8 "), std::string::npos)
      << out.stdout_text;
  EXPECT_EQ(out.stdout_text.find("FAIL: 2 cells of cpu-t1 "), std::string::npos) << out.stdout_text;
  EXPECT_NE(out.stdout_text.find("reference generate --quant-dot int8"), std::string::npos)
      << out.stdout_text;
  // The bisect it suggests runs the same profiles.
  EXPECT_NE(out.stdout_text.find(" bisect --engine "), std::string::npos) << out.stdout_text;
  EXPECT_NE(out.stdout_text.find(" --quant-dot exact,int8 "), std::string::npos) << out.stdout_text;
}

// An unknown dot-product profile is refused before anything runs (exit 2),
// naming the ones there are; an engine that ran another profile than asked
// (one older than --quant-dot, which ignores it) fails its cells loudly.
TEST(Cli, AnUnknownQuantDotProfileOrAnEngineThatIgnoresItIsRefused) {
  Sandbox box;
  for (const char* command : {"run", "gate"}) {
    const ChildOutcome out = box.Run(command, {"-q", "--quant-dot", "exact,int4"});
    EXPECT_EQ(Exit(out), 2) << command << out.stdout_text << out.stderr_tail;
    EXPECT_NE(out.stderr_tail.find("--quant-dot: unknown profile 'int4' (exact or int8)"),
              std::string::npos)
        << command << ": " << out.stderr_tail;
  }
  const ChildOutcome ignored = box.Run(
      "run", {"-q", "--quant-dot", "int8", "--config", "reference-int8", "--scenario", "classic"},
      "fake:no-quant-dot");
  EXPECT_EQ(Exit(ignored), 1) << ignored.stdout_text << ignored.stderr_tail;
  EXPECT_NE(ignored.stdout_text.find("UNRESOLVED"), std::string::npos) << ignored.stdout_text;
  EXPECT_NE(ignored.stdout_text.find("quant_dot exact (asked int8)"), std::string::npos)
      << ignored.stdout_text;
  // Negative control: the same engine's exact cell is what was asked.
  EXPECT_EQ(Exit(box.Run("run", {"-q", "--config", "reference", "--scenario", "classic"},
                         "fake:no-quant-dot")),
            0);
}

// Every numeric option is checked when the command line is parsed: a value
// out of range is refused with a message naming the option, exit 2, and
// nothing runs or is stored. (Before, `--timeout nan` switched the deadline
// off, `--timeout inf` killed every child at once, `-j 0` and `-j -3` meant
// "the number of cores", and `runs -n 0` said "no runs yet".)
TEST(Cli, NumericOptionsOutOfRangeAreRefusedAtParseTime) {
  Sandbox box;
  const std::vector<std::pair<std::string, std::vector<std::string>>> refused = {
      {"--timeout", {"--timeout", "nan"}},
      {"--timeout", {"--timeout", "inf"}},
      {"--timeout", {"--timeout", "-inf"}},
      {"--timeout", {"--timeout", "0"}},
      {"--timeout", {"--timeout", "-5"}},
      {"--timeout", {"--timeout", "1e300"}},
      {"--timeout", {"--timeout", "5s"}},
      {"--jobs", {"-j", "0"}},
      {"--jobs", {"-j", "-3"}},
      {"--jobs", {"-j", "100000"}},
      {"--threads", {"--threads", "0"}},
      {"--threads", {"--threads", "2,-1"}},
  };
  const std::string refs = box.dir().File("references");
  for (const char* command : {"run", "gate"}) {
    for (const auto& [option, args] : refused) {
      std::vector<std::string> argv = {"--config", "reference", "--references-dir", refs};
      argv.insert(argv.end(), args.begin(), args.end());
      const ChildOutcome out = box.RunOnce(command, argv);
      EXPECT_EQ(Exit(out), 2) << command << " " << args[0] << " " << args[1] << "\n"
                              << out.stdout_text << out.stderr_tail;
      EXPECT_NE(out.stderr_tail.find(option + ": '" +
                                     args.back().substr(args.back().find(',') + 1) + "'"),
                std::string::npos)
          << command << " " << args[1] << ": " << out.stderr_tail;
    }
  }
  // Nothing was stored: not even the store was created.
  EXPECT_NE(box.Run("runs", {}).stderr_tail.find("no such store"), std::string::npos);
  // The same options with values in range are accepted (negative control).
  const ChildOutcome accepted =
      box.RunOnce("run", {"--config", "reference,cpu-t2", "--references-dir", refs, "--timeout",
                          "0.5e2", "-j", "1", "--threads", "2"});
  EXPECT_EQ(Exit(accepted), 0) << accepted.stderr_tail;
  for (const char* n : {"0", "-1", "many"}) {
    const ChildOutcome out = box.Run("runs", {"-n", n});
    EXPECT_EQ(Exit(out), 2) << n << ": " << out.stdout_text;
    EXPECT_NE(out.stderr_tail.find("--limit"), std::string::npos) << out.stderr_tail;
    EXPECT_EQ(out.stdout_text.find("no runs yet"), std::string::npos) << out.stdout_text;
  }
  EXPECT_EQ(Exit(box.Run("runs", {"-n", "1"})), 0);
}

// A references folder that does not exist is a run that cannot be made
// (exit 2), not a failed check (exit 1); `reference generate` creates it.
TEST(Cli, AReferencesDirThatDoesNotExistExitsTwo) {
  Sandbox box;
  const std::string missing = box.dir().File("no-such-references");
  for (const char* command : {"run", "gate"}) {
    const ChildOutcome out =
        box.RunOnce(command, {"--config", "reference", "--references-dir", missing});
    EXPECT_EQ(Exit(out), 2) << command << "\n" << out.stdout_text << out.stderr_tail;
    EXPECT_NE(out.stderr_tail.find("no such folder: " + missing), std::string::npos)
        << out.stderr_tail;
  }
  EXPECT_EQ(Exit(box.Run("reference", {"show", "--references-dir", missing})), 2);
  // Nothing was stored: not even the store was created.
  EXPECT_NE(box.Run("runs", {}).stderr_tail.find("no such store"), std::string::npos);
  const ChildOutcome made =
      box.RunOnce("reference generate", {"--config", "reference", "--references-dir", missing});
  EXPECT_EQ(Exit(made), 0) << made.stderr_tail;
  EXPECT_FALSE(ReadFile(missing + "/portable.txt").empty());
}

// A gate in which every cell was UNSUPPORTED checked nothing: it exits 2,
// and the run is stored as UNCHECKED, not PASS (one rule, RunVerdict).
TEST(Cli, ARunThatCheckedNothingIsStoredAsUnchecked) {
  Sandbox box;
  // The configurations of the ISAs the fake engine's made-up machine lacks.
  const ChildOutcome nothing = box.Run("gate", {"-q", "--config", "cpu-neon,cpu-avx512"});
  EXPECT_EQ(Exit(nothing), 2) << nothing.stdout_text << nothing.stderr_tail;
  EXPECT_NE(nothing.stdout_text.find("Nothing was checked"), std::string::npos)
      << nothing.stdout_text;
  const ChildOutcome runs = box.Run("runs", {"-n", "1"});
  EXPECT_NE(runs.stdout_text.find(" UNCHECKED "), std::string::npos) << runs.stdout_text;
  EXPECT_EQ(runs.stdout_text.find(" PASS "), std::string::npos) << runs.stdout_text;
  // Gating the stored run again gives the same verdict.
  EXPECT_EQ(Exit(box.Run("gate", {"-q", "--run", "latest"})), 2);
}

TEST(Cli, ACorruptDatabaseIsRefusedAndLeftUntouched) {
  Sandbox box;
  const std::string junk = "not a database at all\n";
  WriteFile(box.db(), junk);
  const ChildOutcome out = box.Run("run", {"-q", "--config", "reference"});
  EXPECT_EQ(Exit(out), 2);
  EXPECT_NE(out.stderr_tail.find("not an SQLite database"), std::string::npos) << out.stderr_tail;
  EXPECT_EQ(ReadFile(box.db()), junk);
  EXPECT_EQ(Exit(box.Run("runs", {})), 2);
}

TEST(Cli, FourSamebitsProcessesWriteOneDatabase) {
  Sandbox box;
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::vector<ChildOutcome> outs(4);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      outs[i] = box.Run("run", {"-q", "--config", "reference,cpu-t1,cpu-t3"});
    });
  }
  for (std::thread& t : threads) t.join();
  for (const ChildOutcome& out : outs) EXPECT_EQ(Exit(out), 0) << out.stderr_tail;
  const ChildOutcome out = box.Run("runs", {});
  int lines = 0;
  for (size_t at = 0; (at = out.stdout_text.find("PASS 6", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 4) << out.stdout_text;
}

}  // namespace
}  // namespace samebits::harness

namespace samebits::harness {
namespace {

// The default matrix is samebits-engine's profile's: a samebits with no
// engines/samebits.json under its root (a program copied out of the source
// tree, run elsewhere) refuses to run, naming the file, rather than run
// some other list; a broken one is refused with its key.
TEST(Cli, TheDefaultMatrixComesFromTheProfileUnderTheRoot) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("bin"));
  std::filesystem::copy_file(SamebitsProgram(), dir.File("bin/samebits"));
  const std::string list = "cd '" + dir.path() + "' && bin/samebits run --list";
  const testing::ShellResult missing = testing::RunShellLine(list);
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("engines/samebits.json: the default matrix"), std::string::npos)
      << missing.output;
  std::string profile = ReadFile(std::string(SAMEBITS_SOURCE_DIR) + "/engines/samebits.json");
  const std::string each = "cpu-t{each:threads}";
  ASSERT_NE(profile.find(each), std::string::npos);
  profile.replace(profile.find(each), each.size(), "cpu-t{each:thread}");
  WriteFile(dir.File("engines/samebits.json"), profile);
  const testing::ShellResult broken = testing::RunShellLine(list);
  EXPECT_EQ(broken.exit_code, 2) << broken.output;
  EXPECT_NE(broken.output.find("engines/samebits.json: matrix.configurations[1]: expected "
                               "placeholders among {each:threads}"),
            std::string::npos)
      << broken.output;
}

// Returns the outcome of the real engine's `samebits gate -q` on one
// checkpoint's classic scenario, judged against the committed references,
// with `args` (the configurations, the profiles) after; nothing when there
// is no engine.
std::optional<ChildOutcome> GateRealEngine(const std::string& checkpoint,
                                           const std::vector<std::string>& args,
                                           const TempDir& dir) {
  const std::string engine = testing::BinDir() + "/samebits-engine";
  if (::access(engine.c_str(), X_OK) != 0) return std::nullopt;
  runner::ChildSpec spec;
  spec.program = SamebitsProgram();
  spec.args = {"gate",
               "-q",
               "--engine",
               engine,
               "--checkpoint",
               checkpoint,
               "--scenario",
               "classic",
               "--db",
               dir.File("db"),
               "--scenarios-dir",
               std::string(SAMEBITS_SOURCE_DIR) + "/scenarios",
               "--references-dir",
               std::string(SAMEBITS_SOURCE_DIR) + "/references"};
  spec.args.insert(spec.args.end(), args.begin(), args.end());
  spec.env = runner::ChildEnvironment({});
  spec.timeout_seconds = 120;
  return runner::RunChild(spec);
}

// The real engine on the cheapest cells of the default matrix agrees with
// itself and with the committed references (the full matrix is ci/main.sh).
TEST(CliRealEngine, TinyClassicPassesTheCommittedReferences) {
  TempDir dir;
  const std::optional<ChildOutcome> out =
      GateRealEngine("synthetic:tiny", {"--config", "reference,cpu-t1,cpu-t3,cpu-t3-chunk8k"}, dir);
  if (!out) GTEST_SKIP() << "no engine in " << testing::BinDir();
  EXPECT_EQ(Exit(*out), 0) << out->stdout_text << out->stderr_tail;
  EXPECT_NE(out->stdout_text.find("PASS        : 4"), std::string::npos) << out->stdout_text;
}

// The real engine's int8 profile on a quantized checkpoint, whose bits
// differ from the exact profile's: each profile agrees with itself and with
// its own committed references (portable.txt, portable-int8.txt).
TEST(CliRealEngine, TinyQ4ClassicPassesBothProfilesCommittedReferences) {
  TempDir dir;
  const std::optional<ChildOutcome> out = GateRealEngine(
      "synthetic:tiny-q4_0", {"--quant-dot", "exact,int8", "--config", "reference,cpu-t3"}, dir);
  if (!out) GTEST_SKIP() << "no engine in " << testing::BinDir();
  EXPECT_EQ(Exit(*out), 0) << out->stdout_text << out->stderr_tail;
  EXPECT_NE(out->stdout_text.find("PASS        : 4"), std::string::npos) << out->stdout_text;
}

}  // namespace
}  // namespace samebits::harness
