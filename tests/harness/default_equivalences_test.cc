// The equivalence family of the default scenarios (scenarios/chunk-*.json,
// declared in scenarios/equivalences.json) end to end: the real engine
// passes the gate on it, and an engine that differs from it at ONE position
// of ONE scenario (a wrapper around the real engine that changes that row's
// hash, as a chunking bug confined to single-token extends would) fails it
// with the scenarios-differ diagnosis naming both scenarios and the
// position. The wrapper changes every configuration alike, so only the
// equivalence (and the references) can see it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

class DefaultEquivalences : public ::testing::Test {
 protected:
  TempDir tmp_{"default_equivalences"};

  // Returns a wrapper that runs the real engine; with `break_position` >= 0
  // it changes the first hex digit of xxh3_64 on that position's step record
  // of chunk-extend-1x6 (and of no other scenario).
  std::string Wrapper(int break_position) {
    const std::string path = (tmp_.path() / "engine.sh").string();
    std::ofstream out(path);
    out << "#!/bin/sh\n";
    if (break_position >= 0) {
      const std::string at = "/\"position\":" + std::to_string(break_position) + ",/";
      out << "case \"$*\" in *chunk-extend-1x6.json*)\n"
          << "  " << ShellQuote(BinDir() + "/samebits-engine") << " \"$@\" | /bin/sed -e '" << at
          << "s/\"xxh3_64\":\"0/\"xxh3_64\":\"Z/' -e '" << at
          << "s/\"xxh3_64\":\"[1-9a-f]/\"xxh3_64\":\"0/' -e '" << at
          << "s/\"xxh3_64\":\"Z/\"xxh3_64\":\"1/'\n"
          << "  exit 0;;\nesac\n";
    }
    out << "exec " << ShellQuote(BinDir() + "/samebits-engine") << " \"$@\"\n";
    out.close();
    ::chmod(path.c_str(), 0755);
    return path;
  }

  CommandResult Gate(const std::string& engine) {
    return RunCommand({BinDir() + "/samebits", "gate", "--engine", engine, "--checkpoint",
                       "synthetic:tiny", "--scenario",
                       "chunk-extend-6,chunk-extend-1x6,chunk-prefill-12", "--config", "cpu-t1",
                       "--db", (tmp_.path() / "gate.db").string()});
  }
};

TEST_F(DefaultEquivalences, TheRealEngineAgreesAcrossTheFamily) {
  const CommandResult r = Gate(Wrapper(-1));
  EXPECT_EQ(r.exit_code, 0) << r.command << "\n" << r.output;
  EXPECT_EQ(r.output.find("declared equivalent"), std::string::npos) << r.output;
}

// Negative control: one row of one scenario changed.
TEST_F(DefaultEquivalences, OneChangedRowOfOneScenarioFailsNamingThePair) {
  const CommandResult r = Gate(Wrapper(9));
  EXPECT_EQ(r.exit_code, 1) << r.command << "\n" << r.output;
  EXPECT_NE(r.output.find("Scenarios declared equivalent give different bits: chunk-extend-6 and "
                          "chunk-extend-1x6 first differ at position 9"),
            std::string::npos)
      << r.output;
  // The third scenario is compared with the changed one too.
  EXPECT_NE(r.output.find("chunk-extend-1x6 and chunk-prefill-12"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace samebits::standin
