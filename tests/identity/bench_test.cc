// `samebits-engine bench` in a child process, on a tiny checkpoint: it
// reports its figures and an identity line per comparison, exits 0 when the
// configurations agree, and exits 1 with "identical: no" when one of them
// computes in a forbidden order (the test-only switch), so its own check is
// shown able to fail. With --batch-list it reports batched decoding, and a
// split reduction in batched calls (the other test-only switch) fails it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace samebits {
namespace {

const std::string kBenchEngine = std::string(SAMEBITS_BINARY_DIR) + "/bin/samebits-engine";

struct Output {
  int exit_code = -1;
  std::string text;
};

const std::string kTablesArgs =
    "--context 9 --prompt 10 --decode-steps 3 --repeats 2 --reference-repeats 2 --threads-list 1,2 "
    "--profile";

// Runs the bench on synthetic:tiny with `args` and `env` set, its bandwidth
// probe `probe_mib` MiB (0: none), and returns its exit code and stdout.
Output RunBench(const std::string& env, const std::string& args = kTablesArgs, int probe_mib = 0) {
  const std::string command =
      "env -u SAMEBITS_TEST_ONLY_BREAK_IDENTITY -u SAMEBITS_TEST_ONLY_BREAK_BATCH_INVARIANCE "
      "-u SAMEBITS_PROFILE " +
      env + " " + kBenchEngine + " bench --checkpoint synthetic:tiny --bandwidth-mib " +
      std::to_string(probe_mib) + " " + args + " 2>/dev/null";
  Output out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.text.append(buffer, got);
  const int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// Returns how many times `needle` occurs in `text`.
int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(Bench, ReportsFiguresAndIdentity) {
  const Output out = RunBench("");
  ASSERT_EQ(out.exit_code, 0) << out.text;
  for (const char* part :
       {"preflight:", "decode at context 9", "prefill of 10 tokens", "reference", "cpu 1 thread",
        "cpu 2 threads", "ratios of medians", "weights streamed per token",
        "profile (cpu 2 threads", "(after 1 untimed warm-up step)"}) {
    EXPECT_NE(out.text.find(part), std::string::npos) << part << "\n" << out.text;
  }
  // Three runs-against-runs lines and two comparisons with the reference.
  EXPECT_EQ(Count(out.text, "identical: yes"), 3 + 2 * 2) << out.text;
  EXPECT_EQ(Count(out.text, "identical: no"), 0) << out.text;
}

// With the probe on, each cpu configuration's decode runs are set against
// the probe's pass right after each of them, one line each; without it,
// no such table.
TEST(Bench, SetsEachDecodeRunAgainstTheProbeRightAfterIt) {
  const std::string args = kTablesArgs + " --no-reference";
  const Output with = RunBench("", args, 1);
  ASSERT_EQ(with.exit_code, 0) << with.text;
  EXPECT_NE(with.text.find("memory read bandwidth (probe, 1 MiB buffer"), std::string::npos)
      << with.text;
  const size_t table = with.text.find("decode GB/s over the probe's pass right after each run");
  ASSERT_NE(table, std::string::npos) << with.text;
  const std::string rest = with.text.substr(table);
  for (const char* label : {"\n  cpu 1 thread ", "\n  cpu 2 threads "}) {
    const size_t at = rest.find(label);
    ASSERT_NE(at, std::string::npos) << label << "\n" << with.text;
    const std::string line = rest.substr(at + 1, rest.find('\n', at + 1) - at - 1);
    EXPECT_EQ(Count(line, "%"), 3) << line;  // median, min, max
  }
  const Output without = RunBench("", args, 0);
  ASSERT_EQ(without.exit_code, 0) << without.text;
  EXPECT_EQ(without.text.find("over the probe's pass"), std::string::npos) << without.text;
}

TEST(Bench, NegativeControlBrokenOrderFailsTheBench) {
  const Output out = RunBench("SAMEBITS_TEST_ONLY_BREAK_IDENTITY=1");
  EXPECT_EQ(out.exit_code, 1) << out.text;
  EXPECT_GE(Count(out.text, "identical: no"), 1) << out.text;
}

// --warmup-steps: 0 runs none (and says nothing of it); a count that does
// not fit after the context is refused before anything runs.
TEST(Bench, WarmupStepsCanBeNoneAndMustFit) {
  const Output none = RunBench("", kTablesArgs + " --warmup-steps 0 --no-reference");
  ASSERT_EQ(none.exit_code, 0) << none.text;
  EXPECT_EQ(none.text.find("warm-up"), std::string::npos) << none.text;
  EXPECT_NE(none.text.find("decode at context 9: 3 steps per cpu run, 2 runs"), std::string::npos)
      << none.text;
  const Output too_many = RunBench("", kTablesArgs + " --warmup-steps 1000000");
  EXPECT_EQ(too_many.exit_code, 2) << too_many.text;
  EXPECT_EQ(too_many.text.find("decode at context"), std::string::npos) << too_many.text;
}

const std::string kBatchArgs =
    "--batch-list 1,4,8 --threads-list 2 --context 9 --decode-steps 3 --repeats 2";

TEST(Bench, BatchListReportsEveryBatchSizeAndIdentity) {
  const Output out = RunBench("", kBatchArgs);
  ASSERT_EQ(out.exit_code, 0) << out.text;
  for (const char* part : {"batched decode (cpu 2 threads", "tokens/s", "weights MB/step", "GB/s",
                           "identical at every batch size"}) {
    EXPECT_NE(out.text.find(part), std::string::npos) << part << "\n" << out.text;
  }
}

TEST(Bench, NegativeControlSplitReductionFailsTheBatchBench) {
  const Output out = RunBench("SAMEBITS_TEST_ONLY_BREAK_BATCH_INVARIANCE=1", kBatchArgs);
  EXPECT_EQ(out.exit_code, 1) << out.text;
  EXPECT_NE(out.text.find("DIFFER at batch 4"), std::string::npos) << out.text;
}

}  // namespace
}  // namespace samebits
