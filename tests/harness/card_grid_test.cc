// The grid a determinism card opens with (harness/report/card_grid.h).
#include "harness/report/card_grid.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "harness/report/card_report.h"

namespace samebits::harness::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

CardRow Row(const std::string& axis, const std::string& value, const std::string& config,
            CardOutcome outcome, int first_step = -1) {
  CardRow r;
  r.axis = axis;
  r.value = value;
  r.config = config;
  r.outcome = outcome;
  r.first_step = first_step;
  return r;
}

// Two files; the second has a row the first lacks, and one row fails.
Card TwoFileCard() {
  Card card;
  card.engine = "llama.cpp";
  card.baseline = "t1";
  CardTable a;
  a.checkpoint = "gguf:../shared/checkpoints/tiny_dense_llama_f32.gguf";
  a.scenario = "classic";
  a.rows = {Row("threads", "2", "t2", CardOutcome::kIdentical),
            Row("kv", "f16", "t1-kvf16", CardOutcome::kKnown, 0)};
  CardTable b = a;
  b.checkpoint = "gguf:/data/qwen3_q4_k_m.gguf";
  b.rows = {Row("threads", "2", "t2", CardOutcome::kDiffers, 3),
            Row("kv", "f16", "t1-kvf16", CardOutcome::kFixed),
            Row("ubatch", "7", "t1-ub7", CardOutcome::kNotRun)};
  card.tables = {a, b};
  return card;
}

TEST(CardGrid, ARowPerValueAColumnPerFileAndOneMarkEach) {
  const Card card = TwoFileCard();
  const CardGrid grid = BuildCardGrid(card);
  EXPECT_THAT(grid.columns, ElementsAre("tiny_dense_llama_f32", "qwen3_q4_k_m"));
  ASSERT_EQ(grid.rows.size(), 3u);
  EXPECT_EQ(grid.rows[0].config, "t2");
  EXPECT_EQ(GridMark(grid.rows[0].cells[0]), "=");
  EXPECT_EQ(GridMark(grid.rows[0].cells[1]), "D3");
  EXPECT_EQ(GridMark(grid.rows[1].cells[0]), "K0");
  EXPECT_EQ(GridMark(grid.rows[1].cells[1]), "F");
  EXPECT_EQ(GridMark(grid.rows[2].cells[0]), "");  // not a row of the first file's table
  EXPECT_EQ(GridMark(grid.rows[2].cells[1]), "-");
}

TEST(CardGrid, AScenarioIsNamedInTheColumnOnlyWhereThereAreSeveral) {
  Card card = TwoFileCard();
  card.tables[1].checkpoint = card.tables[0].checkpoint;
  card.tables[1].scenario = "long";
  EXPECT_THAT(BuildCardGrid(card).columns,
              ElementsAre("tiny_dense_llama_f32 / classic", "tiny_dense_llama_f32 / long"));
}

TEST(CardGrid, AFeedTablesRowsJoinTheirCheckpointsColumn) {
  Card card = TwoFileCard();
  CardTable feed;
  feed.checkpoint = card.tables[0].checkpoint;
  feed.scenario = "feed: chunk-prefill-12 (whole) vs ...";
  feed.feed = true;
  feed.rows = {Row("feed", "token", "t1 on chunk-extend-1x6", CardOutcome::kIdentical)};
  card.tables.push_back(feed);
  const CardGrid grid = BuildCardGrid(card);
  EXPECT_THAT(grid.columns, ElementsAre("tiny_dense_llama_f32", "qwen3_q4_k_m"));
  ASSERT_EQ(grid.rows.size(), 4u);
  EXPECT_EQ(GridMark(grid.rows[3].cells[0]), "=");
  EXPECT_EQ(GridMark(grid.rows[3].cells[1]), "");

  card.tables[1].checkpoint = card.tables[0].checkpoint;
  card.tables[1].scenario = "long";
  EXPECT_THAT(BuildCardGrid(card).columns,
              ElementsAre("tiny_dense_llama_f32 / classic", "tiny_dense_llama_f32 / long",
                          "tiny_dense_llama_f32 / feed"));
}

TEST(CardGrid, ShortNamesDropTheFolderAndTheExtensionOfFilesOnly) {
  EXPECT_EQ(ShortCheckpointName("synthetic:tiny"), "synthetic:tiny");
  EXPECT_EQ(ShortCheckpointName("toy:small"), "toy:small");
  EXPECT_EQ(ShortCheckpointName("gguf:a/b/model.q8.gguf"), "model.q8");
  EXPECT_EQ(ShortCheckpointName("safetensors:/m/qwen3-0.6b/"), "qwen3-0");
  EXPECT_EQ(ShortCheckpointName("model.gguf"), "model");
}

TEST(CardGrid, TheMarkdownCardOpensWithItAboveTheTablesFailingMarksInBold) {
  std::ostringstream md;
  WriteCardMarkdown(TwoFileCard(), md);
  const std::string text = md.str();
  EXPECT_THAT(text, HasSubstr("| Axis = value (configuration) | tiny_dense_llama_f32 | "
                              "qwen3_q4_k_m |\n|---|:-:|:-:|\n"));
  EXPECT_THAT(text, HasSubstr("| threads = 2 (t2) | = | **D3** |\n"));
  EXPECT_THAT(text, HasSubstr("| kv = f16 (t1-kvf16) | K0 | **F** |\n"));
  EXPECT_THAT(text, HasSubstr("| ubatch = 7 (t1-ub7) |  | - |\n"));
  EXPECT_LT(text.find("### At a glance"), text.find("### gguf:"));

  std::ostringstream html;
  WriteCardHtml(TwoFileCard(), html);
  EXPECT_THAT(html.str(), HasSubstr("<td class=\"mark DIFFERS\" title=\"differs from step 3 "
                                    "(position 0)\">D3</td>"));
}

}  // namespace
}  // namespace samebits::harness::report
