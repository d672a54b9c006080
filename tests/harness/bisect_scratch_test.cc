// `samebits bisect` on scratch repositories made here: a tiny CMake project
// whose "engine" is a shell script speaking engine/protocol/PROTOCOL.md,
// with numbers baked in at build time from numbers.cmake. Each history has
// commits that change nothing, one that changes the "reduction order" (or
// breaks only the cpu-t2 configuration), and commits that do not build
// (numbers.cmake with a syntax error) before and after it. The test runs
// what a new user would: reference generate at the first commit, the gate at
// HEAD (which fails and prints a bisect command), then that command as
// printed. Bisect must name the culprit, never a commit that does not build,
// and name the first diverging op the culprit's traces show.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "harness/store/bisect_records.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::harness {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::SamebitsProgram;
using testing::TempDir;
using testing::WriteFile;

using Shell = testing::ShellResult;

// Returns what `command` did, run by /bin/sh in `dir` (stderr with stdout).
Shell Sh(const std::string& dir, const std::string& command) {
  return testing::RunShellLine("cd '" + dir + "' && " + command);
}

// The scratch engine. `order` stands for a reduction order (it moves the
// layer-1 `ffn_down` output and so every logit after it); `t2_bug` moves the
// same op only with --kernels cpu --threads 2.
constexpr const char* kEngine = R"sh(#!/bin/sh
order=@ORDER@
t2_bug=@T2_BUG@
ckpt=""; kernels=cpu; threads=1; isa=auto; math=portable; trace=0
if [ "$1" != run ]; then echo '{"type":"error","message":"usage: run ..."}'; exit 2; fi
shift
while [ $# -gt 0 ]; do
  case "$1" in
    --checkpoint) ckpt=$2; shift 2;;
    --kernels) kernels=$2; shift 2;;
    --threads) threads=$2; shift 2;;
    --isa) isa=$2; shift 2;;
    --math) math=$2; shift 2;;
    --scenario|--gemv-chunk-bytes|--dump-logits) shift 2;;
    --trace) trace=1; shift;;
    *) echo "{\"type\":\"error\",\"message\":\"unknown option $1\"}"; exit 2;;
  esac
done
if [ "$isa" = auto ]; then isa=scalar; fi
bug=0
if [ "$kernels" = cpu ] && [ "$threads" = 2 ]; then bug=$t2_bug; fi
echo '{"type":"hello","protocol":1,"engine":{"name":"scratch-engine","version":"1"},"build":{"revision":"@REVISION@","dirty":false,"compiler":"sh","flags":""},"platform":{"arch":"'"$(uname -m)"'","isa_features":[],"os":"Linux","kernel":"","libc":"none","cpu":"unknown"},"math":{"profile":"'"$math"'","library":"samebits-portable","version":"1","fingerprint":"00000000000000aa"},"config":{"checkpoint":"'"$ckpt"'","scenario":"s","kernels":"'"$kernels"'","threads":'"$threads"',"isa":"'"$isa"'","gemv_chunk_bytes":0,"math":"'"$math"'"},"checkpoint":{"spec":"'"$ckpt"'","weights_xxh3":"00000000000000bb","vocab_size":8}}'
i=0
while [ $i -lt 4 ]; do
  kind=prefill; if [ $i -ge 2 ]; then kind=decode; fi
  ffn=$(( order * 1000 + bug * 100 + i ))
  logits=$(( ffn * 7 + 3 ))
  printf '{"type":"step","index":%d,"kind":"%s","position":%d,"input_token":%d,"token":%d,"fnv1a64":"%016x","xxh3_64":"%016x","argmax":%d,"nan":0,"inf":0}\n' $i $kind $i $i $(( logits % 8 )) $(( logits + 1 )) $logits $(( logits % 8 ))
  if [ $trace = 1 ]; then
    printf '{"type":"trace","position":%d,"layer":0,"op":"attn_norm","xxh3_64":"%016x"}\n' $i $(( i + 5 ))
    printf '{"type":"trace","position":%d,"layer":1,"op":"ffn_down","xxh3_64":"%016x"}\n' $i $ffn
    printf '{"type":"trace","position":%d,"layer":-1,"op":"logits","xxh3_64":"%016x"}\n' $i $logits
  fi
  i=$(( i + 1 ))
done
echo '{"type":"done","steps":4,"elapsed_ms":0.5}'
)sh";

constexpr const char* kCMakeLists = R"cmake(cmake_minimum_required(VERSION 3.16)
project(scratch NONE)
include(${CMAKE_SOURCE_DIR}/numbers.cmake)
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  OUTPUT_VARIABLE REVISION OUTPUT_STRIP_TRAILING_WHITESPACE)
configure_file(engine.sh.in ${CMAKE_BINARY_DIR}/bin/samebits-engine @ONLY)
add_custom_target(samebits-engine ALL)
)cmake";

// What a commit of the scratch history does.
enum class Change {
  kNoise,
  kBreakBuild,
  kFixBuild,
  kReductionOrder,
  kBreakThreads2,
  kFixBuildInAnotherOrder,  // fixes the build and changes the order at once
};

class ScratchRepository {
 public:
  explicit ScratchRepository(const TempDir& tmp) : tmp_(tmp), repo_(tmp.File("repo")) {
    fs::create_directories(repo_);
    WriteFile(tmp.File("scenarios/story.json"), "{}\n");
    Run("git init -q . && git config user.email t@example.com && git config user.name Test");
    WriteFile(repo_ + "/CMakeLists.txt", kCMakeLists);
    WriteFile(repo_ + "/engine.sh.in", kEngine);
    // configure_file keeps the input's permissions (and git its x bit).
    fs::permissions(repo_ + "/engine.sh.in", fs::perms::owner_exec, fs::perm_options::add);
    WriteFile(repo_ + "/.gitignore", "build/\n");
    WriteNumbers();
    Commit("an engine whose numbers agree");
  }

  const std::string& repo() const { return repo_; }
  const std::string& commit(size_t i) const { return commits_.at(i); }

  // Commits `change`; returns its id.
  std::string Apply(Change change) {
    switch (change) {
      case Change::kNoise:
        WriteFile(repo_ + "/NOTES", "note " + std::to_string(commits_.size()) + "\n");
        return Commit("notes " + std::to_string(commits_.size()));
      case Change::kBreakBuild:
        broken_ = true;
        WriteNumbers();
        return Commit("half a refactoring (does not build)");
      case Change::kFixBuild:
        broken_ = false;
        WriteNumbers();
        return Commit("the rest of the refactoring");
      case Change::kReductionOrder:
        order_ = 2;
        WriteNumbers();
        return Commit("sum the lanes in another order");
      case Change::kFixBuildInAnotherOrder:
        broken_ = false;
        order_ = 2;
        WriteNumbers();
        return Commit("the rest of the refactoring, summing in another order");
      case Change::kBreakThreads2:
        t2_bug_ = 1;
        WriteNumbers();
        return Commit("split the reduction across threads");
    }
    return "";
  }

  // Builds the checked-out revision in the repository itself.
  void Build() {
    Run("cmake -S . -B build >/dev/null && cmake --build build --target samebits-engine "
        ">/dev/null");
  }

  // The --engine flag naming the build in the repository itself.
  std::string EngineFlag() const { return " --engine " + repo_ + "/build/bin/samebits-engine"; }

  // Builds the checked-out revision and writes the references from it, as
  // a user does at a revision whose numbers are right.
  void BuildAndGenerateReferences() {
    Build();
    const Shell refs =
        Sh(repo_, SamebitsProgram() + " reference generate -q" + EngineFlag() + Flags());
    ASSERT_EQ(refs.exit_code, 0) << refs.output;
  }

  // The flags every samebits command of the test shares.
  std::string Flags() const {
    return " --checkpoint synthetic:tiny --scenarios-dir " + tmp_.File("scenarios") +
           " --config reference,cpu-t1,cpu-t2 --references-dir " + tmp_.File("references") +
           " --db " + tmp_.File("store/samebits.db");
  }

 private:
  void Run(const std::string& command) {
    const Shell r = Sh(repo_, command);
    ASSERT_EQ(r.exit_code, 0) << command << "\n" << r.output;
  }
  void WriteNumbers() {
    WriteFile(repo_ + "/numbers.cmake", "set(ORDER " + std::to_string(order_) + ")\nset(T2_BUG " +
                                            std::to_string(t2_bug_) + ")\n" +
                                            (broken_ ? "set(BROKEN\n" : ""));
  }
  std::string Commit(const std::string& message) {
    Run("git add -A && git commit -q -m '" + message + "'");
    commits_.push_back(Sh(repo_, "git rev-parse HEAD").output.substr(0, 40));
    return commits_.back();
  }

  const TempDir& tmp_;
  std::string repo_;
  std::vector<std::string> commits_;
  int order_ = 1, t2_bug_ = 0;
  bool broken_ = false;
};

// Returns the `samebits bisect` command the gate printed, with the program's
// absolute path (the gate prints it relative to the samebits project).
std::string PrintedBisectCommand(const std::string& gate_output) {
  std::smatch m;
  const std::regex line("(\\S*samebits) (bisect[^\\n]*)");
  if (!std::regex_search(gate_output, m, line)) return "";
  return SamebitsProgram() + " " + m[2].str();
}

struct Case {
  const char* name;
  std::vector<Change> history;  // after the first (good) commit
  size_t culprit;               // index into the commits (0: the first commit)
  // The configuration that first differs: the gate's divergences narrow the
  // selection to the baseline configuration (`reference`) when all agree
  // but not with the references, and to the pair when only one breaks.
  const char* config;
  // Whether git's choice of midpoints (fixed by the history's shape) lands
  // on a commit that does not build, so the skip mapping is exercised.
  bool visits_broken_build;
};

class BisectScratch : public ::testing::TestWithParam<Case> {};

TEST_P(BisectScratch, NamesTheCulpritAndItsFirstDivergingOpNeverABrokenBuild) {
  const Case& c = GetParam();
  TempDir tmp;
  ScratchRepository scratch(tmp);
  ASSERT_NO_FATAL_FAILURE(scratch.BuildAndGenerateReferences());
  const std::string samebits = SamebitsProgram();
  const std::string engine = scratch.EngineFlag();

  for (Change change : c.history) scratch.Apply(change);
  scratch.Build();
  const Shell gate = Sh(scratch.repo(), samebits + " gate -q" + engine + scratch.Flags());
  ASSERT_EQ(gate.exit_code, 1) << gate.output;
  const std::string bisect = PrintedBisectCommand(gate.output);
  ASSERT_FALSE(bisect.empty()) << "the gate printed no bisect command:\n" << gate.output;
  // The printed command keeps the user's store and references.
  EXPECT_NE(bisect.find("--db " + tmp.File("store/samebits.db")), std::string::npos) << bisect;
  EXPECT_NE(bisect.find("--references-dir " + tmp.File("references")), std::string::npos) << bisect;

  const Shell result = Sh(scratch.repo(), bisect);
  ASSERT_EQ(result.exit_code, 0) << bisect << "\n" << result.output;
  const std::string culprit = scratch.commit(c.culprit);
  EXPECT_NE(result.output.find("The first bad commit: " + culprit), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("changed files: numbers.cmake"), std::string::npos) << result.output;
  EXPECT_NE(
      result.output.find(std::string(c.config) + ": first differs at step 0 (prefill, position 0)"),
      std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("first diverging trace: position 0, layer 1, op ffn_down"),
            std::string::npos)
      << result.output;

  // Every step is stored: the revisions that do not build are skips
  // without a run, every other step has its run.
  store::Store store(tmp.File("store/samebits.db"));
  const std::vector<store::BisectStepRecord> steps = store::LoadBisectSteps(store, 1);
  ASSERT_GE(steps.size(), 4u);
  EXPECT_EQ(steps.front().role, "good-end");
  EXPECT_EQ(steps.front().verdict, "good");
  EXPECT_EQ(steps[1].role, "bad-end");
  EXPECT_EQ(steps[1].verdict, "bad");
  int skips = 0;
  for (const store::BisectStepRecord& s : steps) {
    skips += s.verdict == "skip" ? 1 : 0;
    const bool broken = s.note.find("does not build") != std::string::npos;
    EXPECT_EQ(s.run_id == 0, broken) << s.revision << " " << s.note;
    if (broken) {
      EXPECT_EQ(s.verdict, "skip");
    }
    // Each step's time is stored by phase: a build (0 when cached), and a
    // run and verdict wherever it built.
    EXPECT_GE(s.build_ms, 0) << s.revision;
    EXPECT_EQ(s.run_ms >= 0, !broken) << s.revision << " " << s.run_ms;
    EXPECT_EQ(s.judge_ms >= 0, !broken) << s.revision << " " << s.judge_ms;
    if (s.role == "step" && s.verdict == "bad") {
      // A commit judged bad is the culprit or comes after it.
      EXPECT_EQ(Sh(scratch.repo(), "git merge-base --is-ancestor " + culprit + " " + s.revision)
                    .exit_code,
                0)
          << s.revision;
    }
  }
  EXPECT_EQ(skips > 0, c.visits_broken_build) << result.output;
  EXPECT_EQ(steps[steps.size() - 2].role, "parent-trace");
  EXPECT_EQ(steps.back().role, "culprit-trace");
  EXPECT_EQ(steps.back().revision, culprit);
}

using C = Change;
INSTANTIATE_TEST_SUITE_P(
    Histories, BisectScratch,
    ::testing::Values(Case{"OrderBetweenBrokenBuilds",
                           {C::kNoise, C::kBreakBuild, C::kFixBuild, C::kReductionOrder,
                            C::kBreakBuild, C::kFixBuild, C::kNoise},
                           4,
                           "reference",
                           true},
                      Case{"OrderRightAfterTheGoodCommit",
                           {C::kReductionOrder, C::kNoise, C::kNoise},
                           1,
                           "reference",
                           false},
                      Case{"OrderAtHeadAfterABrokenBuild",
                           {C::kNoise, C::kNoise, C::kBreakBuild, C::kFixBuild, C::kNoise,
                            C::kReductionOrder},
                           6,
                           "reference",
                           true},
                      Case{"OnlyTwoThreadsBreak",
                           {C::kNoise, C::kBreakBuild, C::kFixBuild, C::kBreakThreads2, C::kNoise},
                           4,
                           "cpu-t2",
                           true}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// A history whose only change is a build break never names a culprit: the
// bad end agrees, so there is nothing to bisect (exit 2), and a bisect
// whose good end does not agree is refused too.
TEST(BisectScratch, RefusesEndsThatAreNotGoodAndBad) {
  TempDir tmp;
  ScratchRepository scratch(tmp);
  ASSERT_NO_FATAL_FAILURE(scratch.BuildAndGenerateReferences());
  const std::string samebits = SamebitsProgram();
  scratch.Apply(Change::kBreakBuild);
  scratch.Apply(Change::kFixBuild);
  const Shell agree = Sh(scratch.repo(), samebits + " bisect" + scratch.Flags());
  EXPECT_EQ(agree.exit_code, 2) << agree.output;
  EXPECT_NE(agree.output.find("is not bad"), std::string::npos) << agree.output;
  EXPECT_EQ(agree.output.find("The first bad commit"), std::string::npos) << agree.output;

  scratch.Apply(Change::kReductionOrder);
  const Shell swapped = Sh(scratch.repo(), samebits + " bisect --good HEAD --bad " +
                                               scratch.commit(0) + scratch.Flags());
  EXPECT_EQ(swapped.exit_code, 2) << swapped.output;
  EXPECT_NE(swapped.output.find("is not good"), std::string::npos) << swapped.output;
}

// When the commit before the culprit does not build, no one can tell which
// of the two changed the numbers: bisect says so (exit 1) and lists both,
// rather than blaming either.
TEST(BisectScratch, ACulpritHiddenBehindABrokenBuildIsNotBlamedOnEither) {
  TempDir tmp;
  ScratchRepository scratch(tmp);
  ASSERT_NO_FATAL_FAILURE(scratch.BuildAndGenerateReferences());
  scratch.Apply(Change::kNoise);
  const std::string broken = scratch.Apply(Change::kBreakBuild);
  const std::string culprit = scratch.Apply(Change::kFixBuildInAnotherOrder);
  scratch.Apply(Change::kNoise);
  const Shell r = Sh(scratch.repo(), SamebitsProgram() + " bisect" + scratch.Flags());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find("The first bad commit:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  " + broken.substr(0, 12)), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  " + culprit.substr(0, 12)), std::string::npos) << r.output;
}

// `samebits bench` takes revisions too, built as bisect builds them: the
// commit that changes the order is flagged as changing the bits, and a
// commit that changes nothing is identical.
TEST(BisectScratch, BenchBuildsRevisionsAndFlagsTheOneThatChangesBits) {
  TempDir tmp;
  ScratchRepository scratch(tmp);
  const std::string good = scratch.commit(0);
  const std::string noise = scratch.Apply(Change::kNoise);
  const std::string order = scratch.Apply(Change::kReductionOrder);
  const std::string bench = SamebitsProgram() + " bench --checkpoint synthetic:tiny --scenario " +
                            tmp.File("scenarios/story.json") +
                            " --config cpu-t1 --rounds 2 --force -q --db " +
                            tmp.File("store/samebits.db") + " ";
  const Shell same = Sh(scratch.repo(), bench + good + " " + noise);
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("identity: every run of A and B printed the same outputs"),
            std::string::npos)
      << same.output;
  const Shell changed = Sh(scratch.repo(), bench + good + " " + order);
  EXPECT_EQ(changed.exit_code, 1) << changed.output;
  EXPECT_NE(changed.output.find("B changes the bits"), std::string::npos) << changed.output;
}

// SIGINT or SIGTERM while a bisect builds a revision: the build is killed
// (and not remembered as "did not build"), the bisect's git worktree is
// removed (neither in `git worktree list` nor on disk), its record says
// interrupted, and the program ends by the signal.
TEST(BisectScratch, AnInterruptedBisectLeavesNoWorktreeAndSaysSo) {
  TempDir tmp;
  ScratchRepository scratch(tmp);
  ASSERT_NO_FATAL_FAILURE(scratch.BuildAndGenerateReferences());
  const std::string good = scratch.commit(0);
  // The commits between the ends carry SLOW, which makes their build hang.
  WriteFile(scratch.repo() + "/SLOW", "the build of this revision takes long\n");
  ASSERT_EQ(Sh(scratch.repo(), "git add SLOW && git commit -q -m slow").exit_code, 0);
  scratch.Apply(Change::kReductionOrder);
  ASSERT_EQ(Sh(scratch.repo(), "git rm -q SLOW && git commit -q -m fast").exit_code, 0);
  const std::string build =
      "cmake -S . -B build >/dev/null && cmake --build build --target samebits-engine "
      ">/dev/null && if [ -f SLOW ]; then touch '" +
      tmp.File("slow-build-started") + "'; sleep 120; fi";
  const std::string cache = tmp.File("store/builds");
  for (const int sig : {SIGINT, SIGTERM}) {
    fs::remove(tmp.File("slow-build-started"));
    const std::string command = SamebitsProgram() + " bisect --good " + good + " --build \"" +
                                build + "\"" + scratch.Flags() + " -q";
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);  // as a shell's job: the signal goes to the program alone
      ::chdir(scratch.repo().c_str());
      ::freopen("/dev/null", "w", stdout);
      ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 1200 && !fs::exists(tmp.File("slow-build-started")); ++i) ::usleep(100000);
    ASSERT_TRUE(fs::exists(tmp.File("slow-build-started"))) << "the slow build never started";
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "status " << status;
    const Shell worktrees = Sh(scratch.repo(), "git worktree list --porcelain");
    EXPECT_EQ(worktrees.output.find("bisect-"), std::string::npos) << worktrees.output;
    for (const auto& entry : fs::directory_iterator(cache)) {
      const std::string name = entry.path().filename().string();
      EXPECT_NE(name.rfind("bisect-", 0), 0u) << name << " left in " << cache;
      if (entry.path().extension() == ".build") {
        EXPECT_EQ(ReadFile(entry.path().string()).find("result failed"), std::string::npos)
            << "a killed build was remembered as failed: " << entry.path();
      }
    }
    const Shell status_row =
        Sh(tmp.path(),
           "sqlite3 store/samebits.db 'SELECT status FROM bisects ORDER BY id DESC "
           "LIMIT 1'");
    EXPECT_EQ(status_row.output, "interrupted\n") << "after signal " << sig;
  }
}

}  // namespace
}  // namespace samebits::harness
