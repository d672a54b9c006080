// Raw logit dumps in bundles (harness/exchange/bundle_dumps.h): the rows
// survive store -> bundle -> another store bit for bit (NaN payloads, -0
// and infinities included); importing twice adds nothing; statistics alone
// travel and are kept; a bundle whose dump was tampered with is refused,
// naming the field; a dump file that cannot be read is a warning, not a
// failed export.
#include "harness/exchange/bundle_dumps.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "harness/analysis/logit_difference.h"
#include "harness/exchange/base64.h"
#include "harness/exchange/bundle.h"
#include "harness/exchange/import.h"
#include "harness/store/store.h"
#include "tests/harness/dump_test_util.h"

namespace samebits::exchange {
namespace {

using harness::RunResult;
using harness::testing::DumpedCell;
using harness::testing::DumpValues;
using harness::testing::kDumpBytes;
using harness::testing::kDumpSteps;
using harness::testing::kDumpVocab;
using harness::testing::TempDir;

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Base64, RoundTripsAndRefusesAnyOtherSpelling) {
  for (size_t n = 0; n < 8; ++n) {
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i < n; ++i) bytes.push_back(static_cast<uint8_t>(0xF0 + 7 * i));
    const std::string text = Base64Encode(bytes);
    EXPECT_EQ(text.size(), Base64Length(n));
    EXPECT_EQ(Base64Decode(text), bytes) << text;
  }
  EXPECT_EQ(Base64Encode({'M', 'a', 'n'}), "TWFu");
  EXPECT_EQ(Base64Encode({'M', 'a'}), "TWE=");
  EXPECT_EQ(Base64Encode({'M'}), "TQ==");
  for (const char* bad : {"TWE", "TW=u", "TQ=A", "T===", "TR==", "TWF=", "TW u", "TWE=TWFu"})
    EXPECT_FALSE(Base64Decode(bad)) << bad;
}

// A run of two cells with dumps (the second one logit apart at step 2) and
// one without, stored in `a.db` as a local run is: dump paths, no
// statistics.
class BundleDumpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    values_ = DumpValues(1);
    other_ = values_;
    other_[2 * kDumpVocab + 10] = harness::testing::UlpsAbove(other_[2 * kDumpVocab + 10], 3);
    RunResult run;
    run.started_at = "2026-12-01T01:00:00Z";
    run.machine = {"x86_64", "Some CPU", "Linux", "6.1", "glibc 2.36", {"avx2"}};
    run.cells.push_back(DumpedCell("reference", values_, dir_.File("dumps/reference.f32")));
    run.cells.push_back(DumpedCell("cpu-t1", other_, dir_.File("dumps/cpu-t1.f32")));
    run.cells.push_back(DumpedCell("cpu-t2", values_, ""));
    store::Store source(dir_.File("a.db"));
    local_ = source.LoadRun(source.SaveRun(run));
  }

  // Returns the local run with its dumps attached, rows up to `max_bytes`.
  RunResult Exported(uint64_t max_bytes) {
    RunResult run = local_;
    EXPECT_TRUE(AttachDumps(run, "", max_bytes).empty());
    return run;
  }

  // Writes `run` as a bundle to `name` and returns its text.
  std::string Bundle(const RunResult& run, const std::string& name) {
    WriteBundle({run}, dir_.File(name));
    return harness::testing::ReadFile(dir_.File(name));
  }

  // Expects `text` written to `name` to be refused with a message holding
  // `words` and the file's name.
  void ExpectRefused(const std::string& text, const std::string& name, const std::string& words) {
    harness::testing::WriteFile(dir_.File(name), text);
    try {
      ReadBundle(dir_.File(name));
      ADD_FAILURE() << "read " << name;
    } catch (const BundleError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(dir_.File(name)), std::string::npos) << e.what();
    }
  }

  TempDir dir_;
  std::vector<float> values_, other_;
  RunResult local_;
};

TEST_F(BundleDumpsTest, RowsRoundTripBitForBitAndImportIsIdempotent) {
  EXPECT_FALSE(local_.cells[0].dump);  // a local run's statistics come from its file
  const RunResult exported = Exported(kDefaultMaxDumpBytes);
  const std::string text = Bundle(exported, "rows.json");
  EXPECT_NE(text.find("\"version\": 3"), std::string::npos);
  EXPECT_NE(text.find("\"rows_included\": true"), std::string::npos);
  EXPECT_EQ(text.find("dump_path"), std::string::npos);

  const std::vector<RunResult> back = ReadBundle(dir_.File("rows.json"));
  ASSERT_EQ(back.size(), 1u);
  ASSERT_TRUE(back[0].cells[0].dump && back[0].cells[1].dump);
  EXPECT_FALSE(back[0].cells[2].dump);
  EXPECT_TRUE(SameBits(back[0].cells[0].dump->values, values_));
  EXPECT_TRUE(SameBits(back[0].cells[1].dump->values, other_));
  EXPECT_EQ(back[0].cells[0].dump->rows[1].nan_count, 1);
  EXPECT_EQ(back[0].cells[0].dump->rows[1].inf_count, 1);

  // Imported into a store in another folder: each dump is a file again.
  store::Store target(dir_.File("b/b.db"));
  ImportOptions options;
  options.root = dir_.path();
  const ImportResult first = ImportRuns(target, back, options);
  ASSERT_EQ(first.added.size(), 1u);
  EXPECT_EQ(first.dumps_written, 2);
  const RunResult stored = target.LoadRun(first.added[0]);
  for (int k = 0; k < 2; ++k) {
    const harness::CellResult& c = stored.cells[static_cast<size_t>(k)];
    EXPECT_EQ(c.dump_path.rfind("b/dumps/import-", 0), 0u) << c.dump_path;
    const harness::LogitDump file =
        harness::ReadLogitDump(ResolveDumpPath(c.dump_path, dir_.path()), kDumpSteps);
    EXPECT_TRUE(SameBits(file.values, k == 0 ? values_ : other_));
    ASSERT_TRUE(c.dump);  // the statistics are kept in the store
    EXPECT_EQ(c.dump->rows, back[0].cells[static_cast<size_t>(k)].dump->rows);
  }
  EXPECT_TRUE(stored.cells[2].dump_path.empty());
  EXPECT_FALSE(stored.cells[2].dump);

  const ImportResult again = ImportRuns(target, ReadBundle(dir_.File("rows.json")), options);
  EXPECT_TRUE(again.added.empty());
  EXPECT_EQ(again.already_present, 1);
  EXPECT_EQ(again.dumps_written, 0);
  // The source store knows its own run, by its dump files' statistics.
  store::Store source(dir_.File("a.db"));
  EXPECT_EQ(ImportRuns(source, back).already_present, 1);
  // An imported run exports as it came (its dump files read back).
  RunResult re = stored;
  EXPECT_TRUE(AttachDumps(re, dir_.path(), kDefaultMaxDumpBytes).empty());
  EXPECT_EQ(ContentId(re), ContentId(exported));
}

TEST_F(BundleDumpsTest, RunsWithoutDumpsKeepTheirBundleAndContentId) {
  RunResult plain = local_;
  for (harness::CellResult& c : plain.cells) c.dump_path.clear();
  EXPECT_NE(Bundle(plain, "plain.json").find("\"version\": 1"), std::string::npos);
  EXPECT_EQ(Bundle(plain, "plain.json").find("\"dump\""), std::string::npos);
  // The dump's statistics are part of the content; its paths are not.
  EXPECT_EQ(ContentId(plain), ContentId(local_));
  EXPECT_NE(ContentId(plain), ContentId(Exported(kDefaultMaxDumpBytes)));
}

TEST_F(BundleDumpsTest, StatisticsOnlyTravelAndAreTheSameRun) {
  const RunResult stats = Exported(0);
  const std::string text = Bundle(stats, "stats.json");
  EXPECT_NE(text.find("\"rows_included\": false"), std::string::npos);
  EXPECT_EQ(text.find("rows_base64"), std::string::npos);
  const std::vector<RunResult> back = ReadBundle(dir_.File("stats.json"));
  const harness::DumpData& d = *back[0].cells[1].dump;
  EXPECT_TRUE(d.values.empty());
  EXPECT_EQ(d.row_length, kDumpVocab);
  ASSERT_EQ(d.rows.size(), static_cast<size_t>(kDumpSteps));
  for (int r = 0; r < kDumpSteps; ++r)
    EXPECT_EQ(d.rows[static_cast<size_t>(r)],
              harness::RowStatistics(std::span<const float>(
                  other_.data() + static_cast<size_t>(r) * kDumpVocab, kDumpVocab)));

  store::Store target(dir_.File("b.db"));
  const ImportResult first = ImportRuns(target, back);
  ASSERT_EQ(first.added.size(), 1u);
  EXPECT_EQ(first.dumps_written, 0);
  const RunResult stored = target.LoadRun(first.added[0]);
  EXPECT_TRUE(stored.cells[1].dump_path.empty());
  ASSERT_TRUE(stored.cells[1].dump);
  EXPECT_EQ(stored.cells[1].dump->rows, d.rows);
  EXPECT_EQ(stored.cells[1].dump->row_length, kDumpVocab);
  // The same run with its rows is the same run: not imported again.
  EXPECT_EQ(ContentId(Exported(kDefaultMaxDumpBytes)), ContentId(stats));
  EXPECT_EQ(ImportRuns(target, {Exported(kDefaultMaxDumpBytes)}).already_present, 1);
  // A cap below one dump's size sends that cell's statistics only.
  const RunResult capped = Exported(kDumpBytes - 1);
  EXPECT_TRUE(capped.cells[0].dump->values.empty());
  EXPECT_FALSE(Exported(kDumpBytes).cells[0].dump->values.empty());
}

TEST_F(BundleDumpsTest, ATamperedDumpIsRefusedNamingTheField) {
  RunResult run = Exported(kDefaultMaxDumpBytes);
  // The second cell: no vocabulary known, so only the size cap bounds its rows.
  run.cells[1].weights_xxh3.clear();
  run.cells[1].vocab_size = 0;
  const std::string text = Bundle(run, "good.json");
  ASSERT_NO_THROW(ReadBundle(dir_.File("good.json")));
  const std::string key = "\"rows_base64\": \"";
  const size_t rows = text.find(key) + key.size();
  const std::string field = "runs[0].cells[0].dump.rows_base64: ";

  std::string cut = text;
  cut.erase(rows, 4);
  ExpectRefused(cut, "cut.json",
                field + std::to_string(Base64Length(kDumpBytes) - 4) +
                    " characters, but 4 rows of 256 float32 values take");

  std::string bad = text;
  bad[rows + 8] = '!';
  ExpectRefused(bad, "bad.json", field + "not valid base64");

  std::string flipped = text;
  flipped[rows + 8] = flipped[rows + 8] == 'A' ? 'B' : 'A';
  ExpectRefused(flipped, "flipped.json", field + "row 0 does not hash to its step");

  std::string large = text;
  const size_t length = large.find("\"row_length\": 256", large.find("\"cpu-t1\""));
  ASSERT_NE(length, std::string::npos);
  large.replace(length, 17, "\"row_length\": 16777216");
  ExpectRefused(large, "large.json",
                "runs[0].cells[1].dump.rows_base64: 268435456 bytes of rows is larger than the "
                "67108864-byte limit");

  std::string vocab = text;
  vocab.replace(vocab.find("\"row_length\": 256"), 17, "\"row_length\": 255");
  ExpectRefused(vocab, "vocab.json",
                "runs[0].cells[0].dump.row_length: 255 is not the cell's vocab_size 256");

  std::string argmax = text;
  const size_t a = argmax.find("\"argmax\": ", argmax.find("\"dump\""));
  argmax.replace(a, 10, "\"argmax\": 1");
  ExpectRefused(argmax, "argmax.json", "runs[0].cells[0].dump.steps[0]");

  std::string negative = text;
  const size_t m = negative.find("\"max_abs\": ");
  negative.replace(m, 11, "\"max_abs\": -");
  ExpectRefused(negative, "negative.json",
                "runs[0].cells[0].dump.steps[0].max_abs: expected a finite float32 value >= 0");

  std::string old = text;
  old.replace(old.find("\"version\": 3"), 12, "\"version\": 2");
  ExpectRefused(old, "old.json", "runs[0].cells[0].dump: a dump needs bundle version 3");
}

TEST_F(BundleDumpsTest, AnUnreadableDumpIsAWarningNamingTheFile) {
  std::filesystem::remove(dir_.File("dumps/reference.f32"));
  RunResult run = local_;
  run.cells[1].steps[3].xxh3_64 ^= 1;  // its file no longer matches its step
  const std::vector<std::string> warnings = AttachDumps(run, "", kDefaultMaxDumpBytes);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find(dir_.File("dumps/reference.f32")), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("exported without its dump"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("row 3 does not hash to its step"), std::string::npos) << warnings[1];
  EXPECT_FALSE(run.cells[0].dump);
  EXPECT_FALSE(run.cells[1].dump);
  // The bundle is still written, and read.
  Bundle(run, "partial.json");
  EXPECT_NO_THROW(ReadBundle(dir_.File("partial.json")));
}

}  // namespace
}  // namespace samebits::exchange
