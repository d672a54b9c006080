// Bundles and import (harness/exchange): a run survives store -> bundle ->
// another store bit for bit; importing twice adds nothing; a damaged,
// modified, oversized or other-version bundle is refused with a message
// naming the file and the field, and the store is left unchanged.
#include "harness/exchange/bundle.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/numerics/hash.h"
#include "harness/analysis/machine_name.h"
#include "harness/exchange/import.h"
#include "harness/store/shard_records.h"
#include "harness/store/store.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::exchange {
namespace {

using harness::RunResult;
using harness::testing::MakeCell;
using harness::testing::TempDir;

RunResult SampleRun() {
  RunResult run;
  run.started_at = "2026-11-30T12:00:00Z";
  run.elapsed_ms = 1234.5;
  run.command = "samebits gate -q";
  run.machine = {"x86_64", "Some CPU", "Linux", "6.1", "glibc 2.36", {"avx2", "fma"}};
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "reference", 7));
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "cpu-t1-libm", 9, 4, "libm"));
  run.cells.back().traces = {{10, -1, "embed", 0xfedcba9876543210ull}, {10, 0, "attn_norm", 1}};
  run.cells.back().isa_used = "avx2";
  run.cells.back().scenario_xxh3 = "0123456789abcdef";
  // A served cell's protocol objects travel with it.
  run.cells.back().device = harness::DeviceInfo{"cuda", "NVIDIA H200", "9.0", 132, "580", ""};
  run.cells.back().readback = protocol::Readback{"tokens", 0};
  run.cells.back().server = R"({"model":{"id":"m"},"url":"http://127.0.0.1:8080"})";
  run.cells.back().repeats = harness::RepeatInfo{4, 1, 0, -1};
  harness::CellResult unsupported = MakeCell("synthetic:tiny", "classic", "cpu-avx512", 7);
  unsupported.code = harness::ResultCode::kUnsupported;
  unsupported.steps.clear();
  unsupported.math.reset();
  unsupported.build.reset();
  unsupported.weights_xxh3.clear();
  unsupported.vocab_size = 0;
  unsupported.message = "this machine lacks avx512";
  run.cells.push_back(unsupported);
  run.diagnosis.kind = harness::Diagnosis::Kind::kCodeChanged;
  run.diagnosis.headline = "the code changed the numbers";
  run.diagnosis.details = {"  git bisect start HEAD abc"};
  harness::Divergence d;
  d.checkpoint = "synthetic:tiny";
  d.scenario = "classic";
  d.config_a = "reference";
  d.config_b = "references/portable.txt";
  d.step_index = 2;
  d.kind = "decode";
  d.position = 12;
  d.layer = 0;
  d.op = "ffn_down";
  d.detail = "xxh3_64 a vs b";
  run.diagnosis.divergences.push_back(d);
  return run;
}

int64_t RunCount(store::Store& s) {
  store::Statement q = s.connection().Prepare("SELECT count(*) FROM runs");
  q.Step();
  return q.Int(0);
}

// Stores the sample run in a fresh store and writes it as a bundle.
class BundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store::Store source(dir_.File("a.db"));
    const int64_t id = source.SaveRun(SampleRun());
    original_ = source.LoadRun(id);
    WriteBundle({original_}, bundle());
  }
  std::string bundle() const { return dir_.File("a.bundle.json"); }

  // Expects importing `file` to be refused with a message holding `words`,
  // leaving the store `b.db` with the runs it had.
  void ExpectRefused(const std::string& file, const std::string& words) {
    store::Store target(dir_.File("b.db"));
    const int64_t before = RunCount(target);
    try {
      ImportRuns(target, ReadBundle(file, 1 << 20));
      ADD_FAILURE() << "imported " << file;
    } catch (const BundleError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    }
    EXPECT_EQ(RunCount(target), before);
  }

  TempDir dir_;
  RunResult original_;
};

TEST_F(BundleTest, RoundTripKeepsEveryHashAndImportIsIdempotent) {
  store::Store target(dir_.File("b.db"));
  const ImportResult first = ImportRuns(target, ReadBundle(bundle()));
  ASSERT_EQ(first.added.size(), 1u);
  EXPECT_EQ(first.already_present, 0);
  const RunResult back = target.LoadRun(first.added[0]);
  ASSERT_EQ(back.cells.size(), original_.cells.size());
  for (size_t i = 0; i < back.cells.size(); ++i) {
    const auto& x = original_.cells[i];
    const auto& y = back.cells[i];
    EXPECT_EQ(x.code, y.code);
    ASSERT_EQ(x.steps.size(), y.steps.size());
    for (size_t k = 0; k < x.steps.size(); ++k) {
      EXPECT_EQ(x.steps[k].xxh3_64, y.steps[k].xxh3_64);
      EXPECT_EQ(x.steps[k].fnv1a64, y.steps[k].fnv1a64);
      EXPECT_EQ(x.steps[k].token, y.steps[k].token);
    }
    ASSERT_EQ(x.traces.size(), y.traces.size());
    for (size_t k = 0; k < x.traces.size(); ++k)
      EXPECT_EQ(x.traces[k].xxh3_64, y.traces[k].xxh3_64);
    EXPECT_EQ(x.math.has_value(), y.math.has_value());
    if (x.math) {
      EXPECT_EQ(x.math->fingerprint, y.math->fingerprint);
    }
    EXPECT_EQ(x.isa_used, y.isa_used);
    EXPECT_EQ(x.scenario_xxh3, y.scenario_xxh3);
    EXPECT_EQ(x.device, y.device);
    EXPECT_EQ(x.readback, y.readback);
    EXPECT_EQ(x.server, y.server);
    EXPECT_EQ(x.repeats, y.repeats);
  }
  EXPECT_TRUE(back.cells[1].readback.has_value());
  EXPECT_FALSE(back.cells[1].server.empty());
  EXPECT_EQ(back.machine.arch, "x86_64");
  EXPECT_EQ(back.diagnosis.divergences.size(), 1u);
  EXPECT_EQ(ContentId(back), ContentId(original_));

  const ImportResult second = ImportRuns(target, ReadBundle(bundle()));
  EXPECT_TRUE(second.added.empty());
  EXPECT_EQ(second.already_present, 1);
  EXPECT_EQ(RunCount(target), 1);

  // Negative control: a run that differs in one hash bit is a new run.
  RunResult other = original_;
  other.cells[0].steps[1].xxh3_64 ^= 1;
  EXPECT_NE(ContentId(other), ContentId(original_));
  EXPECT_EQ(ImportRuns(target, {other}).added.size(), 1u);
  EXPECT_EQ(RunCount(target), 2);
}

TEST_F(BundleTest, ModifiedBundleIsRefused) {
  std::string text = harness::testing::ReadFile(bundle());
  const std::string hash = numerics::Hex16(original_.cells[0].steps[1].xxh3_64);
  const size_t at = text.find(hash);
  ASSERT_NE(at, std::string::npos);
  text[at] = text[at] == '0' ? '1' : '0';
  harness::testing::WriteFile(dir_.File("tampered.json"), text);
  ExpectRefused(dir_.File("tampered.json"), "content_id");
}

TEST_F(BundleTest, TruncatedBundleIsRefused) {
  const std::string text = harness::testing::ReadFile(bundle());
  harness::testing::WriteFile(dir_.File("short.json"), text.substr(0, text.size() / 2));
  ExpectRefused(dir_.File("short.json"), "truncated");
}

TEST_F(BundleTest, HugeBundleIsRefusedBeforeReading) {
  const std::string huge = dir_.File("huge.json");
  harness::testing::WriteFile(huge, "");
  std::filesystem::resize_file(huge, (1 << 20) + 1);  // sparse: no disk used
  ExpectRefused(huge, "limit");
}

TEST_F(BundleTest, OtherVersionIsRefused) {
  std::string text = harness::testing::ReadFile(bundle());
  const size_t at = text.find("\"version\": 1");
  ASSERT_NE(at, std::string::npos) << text.substr(0, 200);
  text.replace(at, 12, "\"version\": 7");
  harness::testing::WriteFile(dir_.File("v7.json"), text);
  ExpectRefused(dir_.File("v7.json"), "bundle version 7 is not supported");
}

// A batched run needs version 2 and comes back whole; a bundle without
// batches stays version 1, which older samebits read.
TEST_F(BundleTest, BatchedRunsTravelAsVersionTwo) {
  RunResult batched = original_;
  batched.started_at = "2026-11-30T14:00:00Z";
  harness::CellResult& c = batched.cells[1];
  c.config.name = "cpu-t1-b8-staggered-seed3-libm";
  c.config.batch = 8;
  c.config.batch_seed = 3;
  c.config.batch_schedule = "staggered";
  for (harness::StepRecord& st : c.steps) st.batch = harness::BatchPlace{5, 9, 2, 4};
  batched.diagnosis.divergences[0].batch_place = "batch 8 staggered, seed 3, slot 2 of 5";
  const std::string file = dir_.File("batched.json");
  WriteBundle({batched}, file);
  EXPECT_NE(harness::testing::ReadFile(file).find("\"version\": 2"), std::string::npos);
  EXPECT_NE(harness::testing::ReadFile(bundle()).find("\"version\": 1"), std::string::npos);
  const std::vector<RunResult> back = ReadBundle(file);
  ASSERT_EQ(back.size(), 1u);
  const harness::CellResult& y = back[0].cells[1];
  EXPECT_EQ(y.config.batch, 8);
  EXPECT_EQ(y.config.batch_seed, 3u);
  EXPECT_EQ(y.config.batch_schedule, "staggered");
  for (const harness::StepRecord& st : y.steps)
    EXPECT_EQ(st.batch, (harness::BatchPlace{5, 9, 2, 4}));
  for (const harness::StepRecord& st : back[0].cells[0].steps) EXPECT_FALSE(st.batch);
  EXPECT_EQ(back[0].diagnosis.divergences[0].batch_place, "batch 8 staggered, seed 3, slot 2 of 5");
  EXPECT_EQ(ContentId(back[0]), ContentId(batched));
  // The batch is part of the content: the same run unbatched is another run.
  EXPECT_NE(ContentId(batched), ContentId(original_));

  // A place outside its call is refused, naming the field.
  std::string text = harness::testing::ReadFile(file);
  const size_t at = text.find("\"slot\": 2");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 10, "\"slot\": 7");
  harness::testing::WriteFile(dir_.File("outside.json"), text);
  ExpectRefused(dir_.File("outside.json"), "runs[0].cells[1].steps[0].batch: slot must be below");
}

// A run's own machine name travels (version 4); a run named after its
// description carries no name and keeps version 1 and its content id, so
// older bundles and stores still find it; a bad name is refused.
TEST_F(BundleTest, MachineNamesTravelAsVersionFour) {
  RunResult unnamed = SampleRun();
  const std::string plain = FormatBundle({unnamed});
  EXPECT_FALSE(nlohmann::json::parse(plain)["runs"][0]["machine"].contains("name")) << plain;
  EXPECT_NE(plain.find("\"version\": 1"), std::string::npos);
  const std::vector<RunResult> back = ParseBundle(plain, "plain.json");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].machine_name, harness::DescribedMachineName(unnamed.machine));
  // Named after its description, it is the same run as before names existed.
  RunResult described = unnamed;
  described.machine_name = harness::DescribedMachineName(unnamed.machine);
  EXPECT_EQ(ContentId(described), ContentId(unnamed));

  RunResult named = SampleRun();
  named.machine_name = "ci-arm64";
  EXPECT_NE(ContentId(named), ContentId(unnamed));
  const std::string text = FormatBundle({named});
  EXPECT_EQ(nlohmann::json::parse(text)["runs"][0]["machine"]["name"], "ci-arm64") << text;
  EXPECT_NE(text.find("\"version\": 4"), std::string::npos);
  const std::vector<RunResult> named_back = ParseBundle(text, "named.json");
  ASSERT_EQ(named_back.size(), 1u);
  EXPECT_EQ(named_back[0].machine_name, "ci-arm64");

  // A name in a version-3 bundle, or a name that is not one, is refused.
  std::string old = text;
  old.replace(old.find("\"version\": 4"), 12, "\"version\": 3");
  try {
    ParseBundle(old, "old.json");
    ADD_FAILURE() << "a name in version 3 was read";
  } catch (const BundleError& e) {
    EXPECT_NE(std::string(e.what()).find("runs[0].machine.name: a machine name needs bundle "
                                         "version 4"),
              std::string::npos)
        << e.what();
  }
  std::string bad = text;
  bad.replace(bad.find("ci-arm64"), 8, "ci arm64");
  try {
    ParseBundle(bad, "bad.json");
    ADD_FAILURE() << "a bad name was read";
  } catch (const BundleError& e) {
    EXPECT_NE(std::string(e.what()).find("runs[0].machine.name: machine name 'ci arm64' may hold"),
              std::string::npos)
        << e.what();
  }
}

// Expects `text` to be refused as a bundle with a message holding `words`.
void ExpectUnreadable(const std::string& text, const std::string& words) {
  try {
    ParseBundle(text, "edited.json");
    ADD_FAILURE() << "read: " << words;
  } catch (const BundleError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

// An int8 cell travels with its dot-product profile (version 6): it comes
// back int8 through another store, and a run without one keeps version 1
// and its content id; an int8 cell in an older version, which an older
// samebits would read as exact, is refused, naming the field.
TEST_F(BundleTest, Int8CellsTravelAsVersionSix) {
  RunResult int8 = original_;
  int8.cells[1].config.name = "cpu-t1-libm-int8";
  int8.cells[1].config.quant_dot = "int8";
  EXPECT_NE(ContentId(int8), ContentId(original_));
  EXPECT_FALSE(
      nlohmann::json::parse(FormatBundle({original_}))["runs"][0]["cells"][1]["config"].contains(
          "quant_dot"));
  EXPECT_NE(harness::testing::ReadFile(bundle()).find("\"version\": 1"), std::string::npos);
  const std::string file = dir_.File("int8.json");
  WriteBundle({int8}, file);
  const std::string text = harness::testing::ReadFile(file);
  EXPECT_NE(text.find("\"version\": 6"), std::string::npos);

  store::Store target(dir_.File("b.db"));
  const ImportResult imported = ImportRuns(target, ReadBundle(file));
  ASSERT_EQ(imported.added.size(), 1u);
  const RunResult back = target.LoadRun(imported.added[0]);
  EXPECT_EQ(back.cells[0].config.quant_dot, "exact");
  EXPECT_EQ(back.cells[1].config.quant_dot, "int8");
  EXPECT_EQ(ContentId(back), ContentId(int8));

  std::string old = text;
  old.replace(old.find("\"version\": 6"), 12, "\"version\": 5");
  ExpectUnreadable(old,
                   "runs[0].cells[1].config.quant_dot: a dot-product profile needs bundle "
                   "version 6");
  std::string exact = text;
  exact.replace(exact.find("\"quant_dot\": \"int8\""), 19, "\"quant_dot\": \"exact\"");
  ExpectUnreadable(exact, "runs[0].cells[1].config.quant_dot: expected a profile other than exact");
}

// A shard travels with its run (version 5): imported into another store,
// it is listed under its group as the shard it was; a run that is not a
// shard keeps its version and content id; a shard in an older version, a
// bad group or a K outside 1..N is refused, naming the field.
TEST_F(BundleTest, ShardsTravelAsVersionFive) {
  RunResult shard = original_;
  shard.shard = harness::ShardInfo{"ci-1234", 2, 3};
  EXPECT_NE(ContentId(shard), ContentId(original_));
  EXPECT_FALSE(nlohmann::json::parse(FormatBundle({original_}))["runs"][0].contains("shard"));
  const std::string file = dir_.File("shard.json");
  WriteBundle({shard}, file);
  const std::string text = harness::testing::ReadFile(file);
  EXPECT_NE(text.find("\"version\": 5"), std::string::npos);

  store::Store target(dir_.File("b.db"));
  const ImportResult first = ImportRuns(target, ReadBundle(file));
  ASSERT_EQ(first.added.size(), 1u);
  EXPECT_EQ(ImportRuns(target, ReadBundle(file)).already_present, 1);
  const std::vector<harness::StoredShard> listed = store::ShardsOf(target, "ci-1234");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].run_id, first.added[0]);
  EXPECT_EQ(listed[0].index, 2);
  EXPECT_EQ(listed[0].count, 3);
  const RunResult back = target.LoadRun(first.added[0]);
  ASSERT_TRUE(back.shard.has_value());
  EXPECT_EQ(ContentId(back), ContentId(shard));

  std::string old = text;
  old.replace(old.find("\"version\": 5"), 12, "\"version\": 4");
  ExpectUnreadable(old, "runs[0].shard: a shard needs bundle version 5");
  std::string bad_group = text;
  bad_group.replace(bad_group.find("ci-1234"), 7, "ci 1234");
  ExpectUnreadable(bad_group, "runs[0].shard.group:");
  std::string outside = text;
  outside.replace(outside.find("\"index\": 2", outside.find("\"shard\"")), 10, "\"index\": 4");
  ExpectUnreadable(outside, "runs[0].shard.index: out of range [1, 3]");
}

TEST_F(BundleTest, BadFieldsAreNamed) {
  // Fields are checked before the content id, so the message names the field.
  std::string text = harness::testing::ReadFile(bundle());
  const size_t at = text.find("\"threads\": 1");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12, "\"threads\": \"x\"");
  harness::testing::WriteFile(dir_.File("bad.json"), text);
  ExpectRefused(dir_.File("bad.json"), "runs[0].cells[0].config.threads: expected an integer");

  harness::testing::WriteFile(dir_.File("other.json"), "{\"format\": \"something\"}");
  ExpectRefused(dir_.File("other.json"), "not a samebits bundle");
}

// Several runs import in one transaction: when a later one cannot be
// written, none of them is.
TEST_F(BundleTest, ImportIsAllOrNothing) {
  store::Store target(dir_.File("b.db"));
  RunResult second = original_;
  second.started_at = "2026-11-30T13:00:00Z";
  target.after_cell_hook = [&](int cells) {
    if (cells == 2 && RunCount(target) == 2) throw std::runtime_error("disk full");
  };
  EXPECT_THROW(ImportRuns(target, {original_, second}), std::runtime_error);
  target.after_cell_hook = nullptr;
  EXPECT_EQ(RunCount(target), 0);
}

}  // namespace
}  // namespace samebits::exchange
