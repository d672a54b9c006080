// Export, import and compare end to end, with the real `samebits` and the
// stand-in engine standing for two machines: one that behaves, one that
// says it is aarch64 (its libm profile's bits differ), and one whose
// portable math changed.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/harness/harness_test_util.h"
#include "tests/harness/standin_matrix.h"

namespace samebits::standin {
namespace {

class StandinExchange : public ::testing::Test {
 protected:
  StandinExchange() : m_("standin_exchange") {
    std::filesystem::create_directories(m_.Path("references"));  // no references: not judged here
  }

  StandinMatrix m_;
};

TEST_F(StandinExchange, TwoMachinesCompareImportAndReport) {
  m_.RunAndExport("ok", "x86.db", "x86.json");
  m_.RunAndExport("arch-aarch64", "arm.db", "arm.json");

  const CommandResult cmp =
      m_.Samebits({"compare", m_.Path("x86.json"), m_.Path("arm.json"), "--report-md",
                   m_.Path("cmp.md"), "--report-json", m_.Path("cmp.json")});
  EXPECT_EQ(cmp.exit_code, 1) << cmp.output;
  EXPECT_NE(cmp.output.find("most likely because the architecture differs (architecture: 2)"),
            std::string::npos)
      << cmp.output;
  EXPECT_NE(cmp.output.find("Architectures: x86_64"), std::string::npos) << cmp.output;
  const std::string md = harness::testing::ReadFile(m_.Path("cmp.md"));
  EXPECT_NE(md.find("the architecture differs"), std::string::npos) << md;
  const nlohmann::json report =
      nlohmann::json::parse(harness::testing::ReadFile(m_.Path("cmp.json")));
  EXPECT_FALSE(report.empty());

  // The same comparison through the databases (their latest runs).
  const CommandResult by_db = m_.Samebits({"compare", m_.Path("x86.db"), m_.Path("arm.db")});
  EXPECT_EQ(by_db.exit_code, 1) << by_db.output;
  // A run compared with its own bundle agrees.
  const CommandResult same = m_.Samebits({"compare", m_.Path("x86.db"), m_.Path("x86.json")});
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("All 4 compared cells agree bit for bit"), std::string::npos)
      << same.output;

  // Import both into a third store, twice: the second adds nothing.
  const std::string both = m_.Path("both.db");
  const CommandResult first =
      m_.Samebits({"import", m_.Path("x86.json"), m_.Path("arm.json"), "--db", both});
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("imported 2 runs (1, 2); 0 already present"), std::string::npos)
      << first.output;
  const CommandResult again =
      m_.Samebits({"import", m_.Path("x86.json"), m_.Path("arm.json"), "--db", both});
  EXPECT_NE(again.output.find("imported 0 runs; 2 already present"), std::string::npos)
      << again.output;
  const CommandResult ids = m_.Samebits({"compare", "1", "2", "--db", both});
  EXPECT_EQ(ids.exit_code, 1) << ids.output;
}

TEST_F(StandinExchange, ACodeChangeIsTheCode) {
  m_.RunAndExport("ok", "a.db", "a.json");
  m_.RunAndExport("portable-changed", "b.db", "b.json");
  const CommandResult cmp = m_.Samebits({"compare", m_.Path("a.json"), m_.Path("b.json")});
  EXPECT_EQ(cmp.exit_code, 1) << cmp.output;
  EXPECT_NE(cmp.output.find("most likely because the code differs (code: 2)"), std::string::npos)
      << cmp.output;
}

// Raw logit dumps travel: with their rows the comparison of two bundles
// says how many ulp apart the first differing step's logits are; with
// statistics only (--max-dump-bytes 0) it gives the argmaxes; import writes
// the rows back as dump files, once.
TEST_F(StandinExchange, DumpsTravelAndCompareSaysHowFarApartTheLogitsAre) {
  for (const auto& [fault, db] : {std::pair{"ok", "x86.db"}, {"arch-aarch64", "arm.db"}}) {
    const CommandResult run = m_.Matrix({"run", "--dump-logits"}, fault, db);
    ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.command << "\n" << run.output;
  }
  const CommandResult x86 =
      m_.Samebits({"export", "-o", m_.Path("x86.json"), "--db", m_.Path("x86.db")});
  ASSERT_EQ(x86.exit_code, 0) << x86.output;
  EXPECT_NE(x86.output.find("(logit dumps: 4 with rows, 0 statistics only)"), std::string::npos)
      << x86.output;
  const CommandResult arm = m_.Samebits(
      {"export", "-o", m_.Path("arm.json"), "--db", m_.Path("arm.db"), "--max-dump-bytes", "0"});
  ASSERT_EQ(arm.exit_code, 0) << arm.output;
  EXPECT_NE(arm.output.find("(logit dumps: 0 with rows, 4 statistics only)"), std::string::npos)
      << arm.output;
  ASSERT_EQ(
      m_.Samebits({"export", "-o", m_.Path("arm-rows.json"), "--db", m_.Path("arm.db")}).exit_code,
      0);

  const CommandResult rows = m_.Samebits(
      {"compare", m_.Path("x86.json"), m_.Path("arm-rows.json"), "--report-md", m_.Path("cmp.md")});
  EXPECT_EQ(rows.exit_code, 1) << rows.output;
  EXPECT_NE(rows.output.find("; logits: max "), std::string::npos) << rows.output;
  EXPECT_NE(rows.output.find(" of 32 values differ"), std::string::npos) << rows.output;
  EXPECT_NE(harness::testing::ReadFile(m_.Path("cmp.md")).find(" of 32 values differ"),
            std::string::npos);
  const CommandResult stats = m_.Samebits({"compare", m_.Path("x86.json"), m_.Path("arm.json")});
  EXPECT_EQ(stats.exit_code, 1) << stats.output;
  EXPECT_NE(stats.output.find("; logits (statistics only): argmax "), std::string::npos)
      << stats.output;

  const std::string both = m_.Path("both.db");
  const CommandResult first = m_.Samebits({"import", m_.Path("x86.json"), "--db", both});
  EXPECT_NE(first.output.find("imported 1 run (1); 0 already present; wrote 4 logit dumps"),
            std::string::npos)
      << first.output;
  const CommandResult again =
      m_.Samebits({"import", m_.Path("x86.json"), m_.Path("arm.json"), "--db", both});
  EXPECT_NE(again.output.find("imported 1 run (2); 1 already present\n"), std::string::npos)
      << again.output;
  // The same arm run with its rows is already there (as statistics).
  const CommandResult rows_too = m_.Samebits({"import", m_.Path("arm-rows.json"), "--db", both});
  EXPECT_NE(rows_too.output.find("imported 0 runs; 1 already present"), std::string::npos)
      << rows_too.output;
  // Stored runs compare through the imported dump file and the statistics.
  const CommandResult ids = m_.Samebits({"compare", "1", "2", "--db", both});
  EXPECT_EQ(ids.exit_code, 1) << ids.output;
  EXPECT_NE(ids.output.find("; logits (statistics only): argmax "), std::string::npos)
      << ids.output;
}

TEST_F(StandinExchange, ABadBundleIsRefusedAndTheStoreIsNotTouched) {
  m_.RunAndExport("ok", "a.db", "a.json");
  std::string text = harness::testing::ReadFile(m_.Path("a.json"));
  harness::testing::WriteFile(m_.Path("cut.json"), text.substr(0, text.size() - 40));
  const std::string target = m_.Path("target.db");
  const CommandResult imported =
      m_.Samebits({"import", m_.Path("a.json"), m_.Path("cut.json"), "--db", target});
  EXPECT_EQ(imported.exit_code, 2) << imported.output;
  EXPECT_NE(imported.output.find("cut.json"), std::string::npos) << imported.output;
  EXPECT_FALSE(std::filesystem::exists(target));
  const CommandResult compared = m_.Samebits({"compare", m_.Path("a.json"), m_.Path("cut.json")});
  EXPECT_EQ(compared.exit_code, 2) << compared.output;
}

// Signed bundles through the program: `export --sign` writes a bundle that
// `import --verify` and `compare --verify` take with the same key; with
// another key, without a signature, or edited after signing (its content
// id recomputed, as a deliberate edit would), each is refused with its own
// message and exit 2, and nothing is imported (the store is not even made).
TEST_F(StandinExchange, OnlyABundleSignedWithTheKeyAndUnchangedIsTaken) {
  const CommandResult run = m_.Matrix({"run"}, "ok", "a.db");
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.output;
  harness::testing::WriteFile(m_.Path("team.key"), std::string(40, 't'));
  harness::testing::WriteFile(m_.Path("other.key"), std::string(40, 'o'));
  const CommandResult exported = m_.Samebits({"export", "-o", m_.Path("signed.json"), "--sign",
                                              m_.Path("team.key"), "--db", m_.Path("a.db")});
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find("signed with key"), std::string::npos) << exported.output;
  ASSERT_EQ(m_.Samebits({"export", "-o", m_.Path("plain.json"), "--db", m_.Path("a.db")}).exit_code,
            0);
  // The edit: one step's hash, its run's content id recomputed by reading
  // the edited run back unsigned (the id is a plain hash of the content).
  nlohmann::json doc = nlohmann::json::parse(harness::testing::ReadFile(m_.Path("signed.json")));
  std::string& hash = doc["runs"][0]["cells"][0]["steps"][0]["xxh3_64"].get_ref<std::string&>();
  hash.back() = hash.back() == '0' ? '1' : '0';
  nlohmann::json unsigned_doc = doc;
  unsigned_doc.erase("signature");
  harness::testing::WriteFile(m_.Path("probe.json"), unsigned_doc.dump());
  const CommandResult probe =
      m_.Samebits({"import", m_.Path("probe.json"), "--db", m_.Path("probe.db")});
  const std::string said = "does not match the run's content (";
  const size_t at = probe.output.find(said);
  ASSERT_NE(at, std::string::npos) << probe.output;
  doc["runs"][0]["content_id"] = probe.output.substr(at + said.size(), 32);
  harness::testing::WriteFile(m_.Path("edited.json"), doc.dump(1));
  doc.erase("signature");
  harness::testing::WriteFile(m_.Path("edited-unsigned.json"), doc.dump(1));
  // Unsigned, the edit imports: the content id detects damage, not this.
  EXPECT_EQ(
      m_.Samebits({"import", m_.Path("edited-unsigned.json"), "--db", m_.Path("c.db")}).exit_code,
      0);

  const std::string target = m_.Path("target.db");
  const CommandResult good = m_.Samebits({"import", m_.Path("signed.json"), "--verify",
                                          m_.Path("team.key"), "--db", m_.Path("good.db")});
  EXPECT_EQ(good.exit_code, 0) << good.output;
  EXPECT_EQ(m_.Samebits({"compare", m_.Path("signed.json"), m_.Path("signed.json"), "--verify",
                         m_.Path("team.key")})
                .exit_code,
            0);
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{m_.Path("signed.json"), "--verify", m_.Path("other.key")}, "signed with another key"},
      {{m_.Path("plain.json"), "--verify", m_.Path("team.key")}, "not signed"},
      {{m_.Path("edited.json"), "--verify", m_.Path("team.key")}, "changed after it was signed"},
      // With a good bundle beside it: all or nothing.
      {{m_.Path("signed.json"), m_.Path("edited.json"), "--verify", m_.Path("team.key")},
       "changed after it was signed"},
  };
  for (const auto& [args, message] : refused) {
    std::vector<std::string> import = {"import"};
    import.insert(import.end(), args.begin(), args.end());
    import.insert(import.end(), {"--db", target});
    const CommandResult r = m_.Samebits(import);
    EXPECT_EQ(r.exit_code, 2) << r.command << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.command << "\n" << r.output;
    EXPECT_FALSE(std::filesystem::exists(target)) << r.command << " imported something";
    std::vector<std::string> compare = {"compare", m_.Path("signed.json")};
    compare.insert(compare.end(), args.begin(), args.end());
    const CommandResult c = m_.Samebits(compare);
    if (args.size() == 3) {
      EXPECT_EQ(c.exit_code, 2) << c.command << "\n" << c.output;
      EXPECT_NE(c.output.find(message), std::string::npos) << c.command << "\n" << c.output;
    }
  }
  // A database carries no signature: refused under --verify.
  const CommandResult db = m_.Samebits(
      {"compare", m_.Path("a.db"), m_.Path("signed.json"), "--verify", m_.Path("team.key")});
  EXPECT_EQ(db.exit_code, 2) << db.output;
}

}  // namespace
}  // namespace samebits::standin
