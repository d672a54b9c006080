// Refusing a checkpoint before any cell runs (runner/known_checkpoints.h):
// a file that is not there or cannot be read, and a synthetic checkpoint the
// engine's `capabilities` record does not list, are named with what is
// known; another engine's own scheme, and an engine that does not say, are
// left to the engine. samebits-engine's record lists exactly the synthetic
// checkpoints its `list` command prints.
#include "harness/runner/known_checkpoints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/runner/child.h"
#include "harness/runner/run_error.h"
#include "harness/runner/unavailable.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::runner {
namespace {

namespace fs = std::filesystem;
using harness::testing::BinDir;
using harness::testing::TempDir;
using ::testing::HasSubstr;

protocol::Capabilities Knowing(std::vector<std::string> names, std::vector<std::string> types) {
  protocol::Capabilities c;
  c.synthetic = protocol::SyntheticCheckpoints{std::move(names), std::move(types)};
  return c;
}

TEST(KnownCheckpoints, ASyntheticNameTheEngineDoesNotListIsNamedWithTheListed) {
  const protocol::Capabilities c = Knowing({"tiny", "small"}, {"f32", "q8_0"});
  EXPECT_EQ(CheckpointProblem("synthetic:tiny", &c), "");
  EXPECT_EQ(CheckpointProblem("synthetic:small-f32", &c), "");
  EXPECT_EQ(CheckpointProblem("synthetic:tiny-q8_0", &c), "");
  for (const std::string bad : {"synthetic:nosuch", "synthetic:tiny-f64",
                                "synthetic:", "synthetic:-f32", "synthetic:nosuch-f32"}) {
    const std::string problem = CheckpointProblem(bad, &c);
    EXPECT_THAT(problem, HasSubstr("'" + bad + "'")) << bad;
    EXPECT_THAT(problem, HasSubstr("synthetic:tiny, synthetic:small")) << problem;
    EXPECT_THAT(problem, HasSubstr("f32|q8_0")) << problem;
  }
}

TEST(KnownCheckpoints, AnEngineThatDoesNotSayIsNotSecondGuessed) {
  const protocol::Capabilities silent;  // no `synthetic` field: an older engine, an adapter
  EXPECT_EQ(CheckpointProblem("synthetic:nosuch", &silent), "");
  EXPECT_EQ(CheckpointProblem("synthetic:nosuch", nullptr), "");
  // Another engine's own scheme is that engine's to refuse.
  const protocol::Capabilities c = Knowing({"tiny"}, {});
  EXPECT_EQ(CheckpointProblem("hf:org/model", &c), "");
}

TEST(KnownCheckpoints, AFileThatIsNotThereOrUnreadableIsNamedWhateverTheEngine) {
  TempDir temp;
  const fs::path dir(temp.path());
  const std::string file = (dir / "model.gguf").string();
  std::ofstream(file) << "GGUF";
  const protocol::Capabilities c = Knowing({"tiny"}, {});
  for (const std::string& ok :
       {file, "gguf:" + file, "llama2c:" + file, "safetensors:" + dir.string()}) {
    EXPECT_EQ(CheckpointProblem(ok, &c), "") << ok;
    EXPECT_EQ(CheckpointProblem(ok, nullptr), "") << ok;
  }
  const std::string missing = (dir / "missing.gguf").string();
  for (const std::string& bad :
       {missing, "gguf:" + missing, "llama2c:" + missing, "safetensors:" + missing}) {
    const std::string problem = CheckpointProblem(bad, nullptr);
    EXPECT_THAT(problem, HasSubstr(missing)) << bad;
    EXPECT_THAT(problem, HasSubstr("no such file")) << bad;
  }
  EXPECT_THAT(CheckpointProblem("gguf:", nullptr), HasSubstr("names no file"));
  EXPECT_THAT(CheckpointProblem("", nullptr), HasSubstr("names no file"));
  // Unreadable (root reads everything: then there is nothing to check).
  if (::geteuid() != 0) {
    ::chmod(file.c_str(), 0);
    EXPECT_THAT(CheckpointProblem("gguf:" + file, nullptr), HasSubstr("cannot read " + file));
    ::chmod(file.c_str(), 0644);
  }
}

// samebits-engine answers for itself: its probe lists the synthetic
// checkpoints `samebits-engine list --names` prints, and the refusal
// built on it names the checkpoint and lists them.
TEST(KnownCheckpoints, SamebitsEngineListsItsSyntheticCheckpoints) {
  const std::string engine = BinDir() + "/samebits-engine";
  std::string why;
  const std::optional<protocol::Capabilities> c = ProbeEngine(engine, {"capabilities"}, &why);
  ASSERT_TRUE(c.has_value()) << why;
  ASSERT_TRUE(c->synthetic.has_value());
  ChildSpec list;
  list.program = engine;
  list.args = {"list", "--names"};
  list.env = ChildEnvironment({});
  const ChildOutcome listed = RunChild(list);
  ASSERT_EQ(listed.exit_code, 0) << listed.stderr_tail;
  std::vector<std::string> specs;
  std::istringstream lines(listed.stdout_text);
  for (std::string line; std::getline(lines, line);) specs.push_back(line);
  std::vector<std::string> answered;
  for (const std::string& n : c->synthetic->names) answered.push_back("synthetic:" + n);
  EXPECT_EQ(answered, specs);
  EXPECT_THAT(c->synthetic->types, ::testing::IsSupersetOf({"f32", "f16", "bf16", "q8_0"}));

  try {
    RefuseUnknownCheckpoints({"synthetic:tiny", "synthetic:nosuch"}, {{engine, {"capabilities"}}});
    ADD_FAILURE() << "synthetic:nosuch was not refused";
  } catch (const RunError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'synthetic:nosuch'"));
    EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("'synthetic:tiny'")));
    EXPECT_THAT(e.what(), HasSubstr(specs.front()));
  }
  // Without a probe the engine is not asked; a probe that fails says nothing.
  EXPECT_NO_THROW(RefuseUnknownCheckpoints({"synthetic:nosuch"}, {{engine, {}}}));
  EXPECT_NO_THROW(RefuseUnknownCheckpoints({"synthetic:nosuch"}, {{engine, {"no-such-command"}}}));
}

}  // namespace
}  // namespace samebits::runner
