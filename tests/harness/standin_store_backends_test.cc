// Every command that takes a store, end to end through the real `samebits`
// and the stand-in engine, on both backends (store_backends.h): run, runs,
// show, report, diff, compare, export and import; and two importers of one
// bundle racing into one store keep it once.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/analysis/shard.h"
#include "harness/store/shard_records.h"
#include "harness/store/store.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/standin_helpers.h"
#include "tests/harness/store_backends.h"

namespace samebits::standin {
namespace {

class StandinStoreBackends : public store::testing::StoreBackendTest {
 protected:
  // Returns the result of `samebits <words>`.
  CommandResult Samebits(std::vector<std::string> words) {
    words.insert(words.begin(), BinDir() + "/samebits");
    return RunCommand(words);
  }

  // Runs a small matrix of the stand-in under `fault` into `db`: portable
  // and libm math (the stand-in's libm bits follow its architecture).
  CommandResult RunMatrix(const std::string& fault, const std::string& db,
                          const std::vector<std::string>& extra = {}) {
    const std::string references = dir_.File("references");
    std::filesystem::create_directories(references);  // no references: not judged here
    std::vector<std::string> words = {"run",
                                      "--engine",
                                      FaultyEngine(dir_.path(), fault),
                                      "--checkpoint",
                                      "synthetic:tiny",
                                      "--scenario",
                                      WriteScenario(dir_.path()),
                                      "--math",
                                      "portable,libm",
                                      "--config",
                                      "cpu-t1,cpu-t2,cpu-t1-libm",
                                      "--timeout",
                                      "20",
                                      "-j",
                                      "2",
                                      "--db",
                                      db,
                                      "--references-dir",
                                      references,
                                      "-q"};
    words.insert(words.end(), extra.begin(), extra.end());
    return Samebits(words);
  }
};
SAMEBITS_ON_BOTH_STORE_BACKENDS(StandinStoreBackends);

TEST_P(StandinStoreBackends, EveryCommandReadsAndWritesTheStore) {
  const CommandResult x86 = RunMatrix("ok", db());
  ASSERT_EQ(x86.exit_code, 0) << x86.command << "\n" << x86.output;
  const CommandResult arm = RunMatrix("arch-aarch64", db());
  ASSERT_EQ(arm.exit_code, 0) << arm.command << "\n" << arm.output;

  const CommandResult runs = Samebits({"runs", "--db", db()});
  EXPECT_EQ(runs.exit_code, 0) << runs.output;
  EXPECT_NE(runs.output.find("PASS"), std::string::npos) << runs.output;
  const CommandResult show = Samebits({"show", "latest", "--steps", "--db", db()});
  EXPECT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("cpu-t2"), std::string::npos) << show.output;
  const CommandResult report = Samebits(
      {"report", "latest", "--format", "json", "-o", dir_.File("report.json"), "--db", db()});
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_FALSE(harness::testing::ReadFile(dir_.File("report.json")).empty());
  const CommandResult diff = Samebits({"diff", "1", "latest", "--db", db()});
  EXPECT_TRUE(diff.exit_code == 0 || diff.exit_code == 1) << diff.output;

  // The two runs' ids on this store (a server's ids need not be 1 and 2).
  std::vector<std::string> run_ids;
  for (const store::RunSummary& r : store::Store(db(), store::Access::kRead).ListRuns(10))
    run_ids.push_back(std::to_string(r.id));
  ASSERT_EQ(run_ids.size(), 2u);

  const CommandResult cmp = Samebits({"compare", run_ids[1], run_ids[0], "--db", db()});
  EXPECT_EQ(cmp.exit_code, 1) << cmp.output;
  EXPECT_NE(cmp.output.find("the architecture differs"), std::string::npos) << cmp.output;

  const std::string bundle = dir_.File("both.json");
  const CommandResult out =
      Samebits({"export", run_ids[1], run_ids[0], "-o", bundle, "--db", db()});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const CommandResult again = Samebits({"import", bundle, "--db", db()});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("imported 0 runs; 2 already present"), std::string::npos)
      << again.output;
}

// Runs are selected by machine: `runs --machine` lists one machine's runs,
// `compare machine:A machine:B` compares each machine's newest run with the
// verdict comparing the two runs by id gives, and a name without runs is
// exit 2 naming the machines there are.
TEST_P(StandinStoreBackends, RunsAreSelectedAndComparedByMachine) {
  ASSERT_EQ(RunMatrix("ok", db(), {"--machine-name", "ci-x86"}).exit_code, 0);
  ASSERT_EQ(RunMatrix("ok", db(), {"--machine-name", "ci-x86"}).exit_code, 0);
  ASSERT_EQ(RunMatrix("arch-aarch64", db(), {"--machine-name", "ci-arm"}).exit_code, 0);
  std::vector<std::string> ids;  // newest first
  for (const store::RunSummary& r : store::Store(db(), store::Access::kRead).ListRuns(10))
    ids.push_back(std::to_string(r.id));
  ASSERT_EQ(ids.size(), 3u);

  const CommandResult x86 = Samebits({"runs", "--machine", "ci-x86", "--db", db()});
  EXPECT_EQ(x86.exit_code, 0) << x86.output;
  EXPECT_NE(x86.output.find("ci-x86"), std::string::npos) << x86.output;
  EXPECT_EQ(x86.output.find("ci-arm"), std::string::npos) << x86.output;
  const CommandResult show = Samebits({"show", ids[0], "--db", db()});
  EXPECT_NE(show.output.find("Machine: ci-arm (aarch64"), std::string::npos) << show.output;

  const CommandResult by_id = Samebits({"compare", ids[1], ids[0], "--db", db()});
  const CommandResult by_machine = Samebits({"compare", "machine:ci-x86", "machine:ci-arm", "--db",
                                             db(), "--report-json", dir_.File("machines.json")});
  EXPECT_EQ(by_machine.exit_code, 1) << by_machine.output;
  EXPECT_EQ(by_machine.exit_code, by_id.exit_code);
  EXPECT_NE(by_machine.output.find("the architecture differs"), std::string::npos)
      << by_machine.output;
  EXPECT_NE(by_machine.output.find("machine ci-x86 (run " + ids[1] + ")"), std::string::npos)
      << by_machine.output;
  EXPECT_FALSE(harness::testing::ReadFile(dir_.File("machines.json")).empty());

  const CommandResult missing =
      Samebits({"compare", "machine:ci-x86", "machine:nope", "--db", db()});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("no run of machine 'nope' in the store (its machines: ci-arm, "
                                "ci-x86;"),
            std::string::npos)
      << missing.output;
  const CommandResult listed = Samebits({"runs", "--machine", "nope", "--db", db()});
  EXPECT_EQ(listed.exit_code, 2) << listed.output;
  EXPECT_EQ(Samebits({"runs", "--machine", "a b", "--db", db()}).exit_code, 2);
  const CommandResult bad_name = RunMatrix("ok", db(), {"--machine-name", "has space"});
  EXPECT_EQ(bad_name.exit_code, 2) << bad_name.output;
  EXPECT_NE(bad_name.output.find("may hold only letters, digits"), std::string::npos)
      << bad_name.output;
}

// Returns the smallest shard count from 2 up at which every shard holds a
// configuration and the libm ones fall into shard 1 and another (shard.h:
// the split is fixed by the cells' keys); 0 when none up to 8 does.
int CountThatSplitsLibm(const std::string& scenario, const std::vector<std::string>& configs) {
  for (int n = 2; n <= 8; ++n) {
    std::set<int> libm, all;
    for (const std::string& c : configs) {
      const int k = harness::ShardOfCell("synthetic:tiny", scenario, c, n);
      all.insert(k);
      if (c.find("libm") != std::string::npos) libm.insert(k);
    }
    if (libm.size() > 1 && libm.count(1) == 1 && static_cast<int>(all.size()) == n) return n;
  }
  return 0;
}

// A gate sharded over two machines: each stores its share under the
// group; the verdict waits for every shard (naming the missing ones),
// takes a retried shard's newest run, judges the union once against the
// references, and names the machine whose libm differs, with the cause.
TEST_P(StandinStoreBackends, ShardedGateAndVerdict) {
  const std::string references = dir_.File("references");
  const std::string scenario_file = WriteScenario(dir_.path());
  const std::string scenario = std::filesystem::path(scenario_file).stem().string();
  const std::vector<std::string> configs = {"reference",   "cpu-t1",         "cpu-t2",
                                            "cpu-t3",      "reference-libm", "cpu-t1-libm",
                                            "cpu-t2-libm", "cpu-t3-libm"};
  const int n = CountThatSplitsLibm(scenario, configs);
  ASSERT_GT(n, 0) << "no shard count up to 8 splits the libm cells";
  std::string config_list;
  for (const std::string& c : configs) config_list += (config_list.empty() ? "" : ",") + c;
  const auto matrix = [&](const std::string& command, const std::string& fault,
                          std::vector<std::string> extra) {
    std::vector<std::string> words = {command};
    if (command == "reference") words.push_back("generate");
    for (const std::string& w :
         {std::string("--engine"), FaultyEngine(dir_.path(), fault), std::string("--checkpoint"),
          std::string("synthetic:tiny"), std::string("--scenario"), scenario_file,
          std::string("--math"), std::string("portable,libm"), std::string("--config"), config_list,
          std::string("--timeout"), std::string("20"), std::string("-j"), std::string("2"),
          std::string("--db"), db(), std::string("--references-dir"), references,
          std::string("-q")})
      words.push_back(w);
    words.insert(words.end(), extra.begin(), extra.end());
    return Samebits(words);
  };
  std::filesystem::create_directories(references);
  const CommandResult refs = matrix("reference", "ok", {});
  ASSERT_EQ(refs.exit_code, 0) << refs.output;
  const std::string of_n = "/" + std::to_string(n);
  // Shard 1 on machine a; the others on machine b, whose libm agrees.
  const auto shard = [&](int k, const std::string& machine, const std::string& group,
                         const std::string& fault) {
    return matrix(
        "gate", fault,
        {"--shard", std::to_string(k) + of_n, "--group", group, "--machine-name", machine});
  };
  const CommandResult first = shard(1, "a", "g1", "ok");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("Shard 1" + of_n + " of group g1"), std::string::npos)
      << first.output;

  CommandResult verdict =
      Samebits({"verdict", "--group", "g1", "--db", db(), "--references-dir", references});
  EXPECT_EQ(verdict.exit_code, 2) << verdict.output;
  EXPECT_NE(verdict.output.find("group 'g1': shard"), std::string::npos) << verdict.output;
  EXPECT_NE(verdict.output.find(std::to_string(n) + of_n), std::string::npos) << verdict.output;
  EXPECT_NE(verdict.output.find("not in the store yet"), std::string::npos) << verdict.output;

  for (int k = 2; k <= n; ++k) ASSERT_EQ(shard(k, "b", "g1", "ok").exit_code, 0);
  // Shard 2 retried: stored twice, the newest counts.
  ASSERT_EQ(shard(2, "b", "g1", "ok").exit_code, 0);
  verdict = Samebits({"verdict", "--group", "g1", "--expect-shards", std::to_string(n), "--db",
                      db(), "--references-dir", references, "--report-md", dir_.File("v.md"),
                      "--report-json", dir_.File("v.json")});
  EXPECT_EQ(verdict.exit_code, 0) << verdict.output;
  EXPECT_NE(verdict.output.find("Shard 2" + of_n + " was stored 2 times"), std::string::npos)
      << verdict.output;
  EXPECT_NE(verdict.output.find("Machine b compared with a, group by group"), std::string::npos)
      << verdict.output;
  const std::string md = harness::testing::ReadFile(dir_.File("v.md"));
  EXPECT_NE(md.find("was stored 2 times"), std::string::npos) << md;
  EXPECT_FALSE(harness::testing::ReadFile(dir_.File("v.json")).empty());
  // Every selected cell was run by exactly one shard (the newest copy of each).
  std::vector<std::string> shard_runs;  // the run ids of g1's newest shards
  {
    store::Store store(db(), store::Access::kRead);
    std::map<int, int64_t> newest;  // oldest first: the last copy of each K wins
    for (const harness::StoredShard& s : store::ShardsOf(store, "g1")) newest[s.index] = s.run_id;
    ASSERT_EQ(static_cast<int>(newest.size()), n);
    std::multiset<std::string> ran;
    for (const auto& [k, id] : newest) {
      for (const harness::CellResult& c : store.LoadRun(id).cells) ran.insert(c.config.name);
      shard_runs.push_back(std::to_string(id));
    }
    EXPECT_EQ(ran, std::multiset<std::string>(configs.begin(), configs.end()));
  }
  // `show` names a run's shard.
  const CommandResult shown = Samebits({"show", shard_runs[0], "--db", db()});
  EXPECT_NE(shown.output.find("Shard: 1" + of_n + " of group g1"), std::string::npos)
      << shown.output;
  // The shards travel in a bundle (version 5): imported into a store of
  // their own, they are the whole group there and pass its verdict.
  std::vector<std::string> export_args = {"export", "-o", dir_.File("shards.json"), "--db", db()};
  export_args.insert(export_args.end(), shard_runs.begin(), shard_runs.end());
  const CommandResult exported = Samebits(export_args);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const std::string other = dir_.File("other.db");
  const CommandResult imported = Samebits({"import", dir_.File("shards.json"), "--db", other});
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  const CommandResult elsewhere =
      Samebits({"verdict", "--group", "g1", "--expect-shards", std::to_string(n), "--db", other,
                "--references-dir", references});
  EXPECT_EQ(elsewhere.exit_code, 0) << elsewhere.output;

  // Machine b's libm differs: the union fails and b is named with the cause.
  ASSERT_EQ(shard(1, "a", "g2", "ok").exit_code, 0);
  for (int k = 2; k <= n; ++k) shard(k, "b", "g2", "libm-changed");
  verdict = Samebits({"verdict", "--group", "g2", "--db", db(), "--references-dir", references});
  EXPECT_EQ(verdict.exit_code, 1) << verdict.output;
  EXPECT_NE(verdict.output.find("Machine b compared with a"), std::string::npos) << verdict.output;
  EXPECT_NE(verdict.output.find("the math library differs"), std::string::npos) << verdict.output;

  // Bad input is exit 2 with a message.
  const CommandResult unknown = Samebits({"verdict", "--group", "nope", "--db", db()});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("no shard of group 'nope' is in the store (its newest groups: "
                                "g2, g1)"),
            std::string::npos)
      << unknown.output;
  const CommandResult wrong_n = Samebits(
      {"verdict", "--group", "g1", "--expect-shards", std::to_string(n + 1), "--db", db()});
  EXPECT_EQ(wrong_n.exit_code, 2) << wrong_n.output;
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--shard", "0/2", "--group", "g"},
        std::vector<std::string>{"--shard", "3/2", "--group", "g"},
        std::vector<std::string>{"--shard", "x", "--group", "g"},
        std::vector<std::string>{"--shard", "1/2"}, std::vector<std::string>{"--group", "g"},
        std::vector<std::string>{"--shard", "1/2", "--group", "a b"}}) {
    const CommandResult out = matrix("gate", "ok", bad);
    EXPECT_EQ(out.exit_code, 2) << out.output;
  }
}

// Two machines importing one bundle at the same moment store its runs
// once: the second importer waits for the first and finds them there.
TEST_P(StandinStoreBackends, TwoImportersOfOneBundleStoreItOnce) {
  const std::string source = dir_.File("source.db");
  ASSERT_EQ(RunMatrix("ok", source).exit_code, 0);
  ASSERT_EQ(RunMatrix("arch-aarch64", source).exit_code, 0);
  const std::string bundle = dir_.File("runs.json");
  ASSERT_EQ(Samebits({"export", "1", "2", "-o", bundle, "--db", source}).exit_code, 0);
  // The schema first, so that the race is over the runs.
  { const store::Store created(db()); }
  const std::string sb = ShellQuote(BinDir() + "/samebits");
  const std::string import = sb + " import " + ShellQuote(bundle) + " --db " + ShellQuote(db());
  const CommandResult race =
      RunCommand({"sh", "-c", "(" + import + " & " + import + " & " + import + " & wait) 2>&1"});
  size_t imported = 0;
  for (size_t at = 0; (at = race.output.find("imported 2 runs", at)) != std::string::npos; ++at)
    ++imported;
  size_t present = 0;
  for (size_t at = 0;
       (at = race.output.find("imported 0 runs; 2 already present", at)) != std::string::npos; ++at)
    ++present;
  EXPECT_EQ(imported, 1u) << race.output;
  EXPECT_EQ(present, 2u) << race.output;
  EXPECT_EQ(store::Store(db(), store::Access::kRead).ListRuns(10).size(), 2u);
  const CommandResult again = Samebits({"import", bundle, "--db", db()});
  EXPECT_NE(again.output.find("imported 0 runs; 2 already present"), std::string::npos)
      << again.output;
}

}  // namespace
}  // namespace samebits::standin
