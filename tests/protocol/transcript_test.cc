// The sequence reader judges a child's whole stdout: `hello` first, steps in
// order, `done` last and matching. Anything else is a failure with a reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/protocol/records.h"

namespace samebits::protocol {
namespace {

using ::testing::HasSubstr;

std::string HelloLine() {
  Hello h;
  h.engine = {"samebits-engine", "0.1.0"};
  h.build = {"r", false, "c", "f"};
  h.platform = {"x86_64", "unknown", "Linux", "6.1", "glibc 2.36", {}};
  h.math = {"portable", "samebits-portable", "1", "0000000000000001"};
  h.config = {"synthetic:tiny", "classic", "reference", 1, "scalar", 0, "portable"};
  h.checkpoint = {"synthetic:tiny", "0000000000000002", 256};
  return ToJsonLine(h) + "\n";
}

std::string StepLine(int index) {
  return ToJsonLine(Step{index, index == 0 ? "prefill" : "decode", 11 + index, 5, 6,
                         static_cast<uint64_t>(index) * 3, static_cast<uint64_t>(index) * 5, 6, 0,
                         0}) +
         "\n";
}

std::string TraceLine() {
  return ToJsonLine(Trace{11, 0, "q", 9}) + "\n";
}
std::string DoneLine(int steps) {
  return ToJsonLine(Done{steps, 3.25}) + "\n";
}

TEST(TranscriptTest, ACompleteStreamIsOk) {
  const Transcript t =
      ReadTranscript(HelloLine() + StepLine(0) + TraceLine() + StepLine(1) + DoneLine(2));
  EXPECT_TRUE(t.ok) << t.failure;
  ASSERT_TRUE(t.hello.has_value());
  EXPECT_EQ(t.hello->config.kernels, "reference");
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.steps[1].xxh3_64, 5u);
  EXPECT_EQ(t.traces.size(), 1u);
  ASSERT_TRUE(t.done.has_value());
  EXPECT_EQ(t.done->elapsed_ms, 3.25);
}

TEST(TranscriptTest, AStreamWithoutDoneFailed) {
  const Transcript t = ReadTranscript(HelloLine() + StepLine(0) + StepLine(1));
  EXPECT_FALSE(t.ok);
  EXPECT_THAT(t.failure, HasSubstr("without a `done` record"));
  EXPECT_EQ(t.steps.size(), 2u) << "what was read is kept for the report";
}

TEST(TranscriptTest, AnEmptyStreamFailed) {
  const Transcript t = ReadTranscript("");
  EXPECT_FALSE(t.ok);
  EXPECT_THAT(t.failure, HasSubstr("no `hello`"));
}

TEST(TranscriptTest, AnErrorRecordFailsWithItsMessage) {
  const Transcript t = ReadTranscript(ToJsonLine(Error{"ISA avx512 is not available"}) + "\n");
  EXPECT_FALSE(t.ok);
  ASSERT_TRUE(t.error.has_value());
  EXPECT_EQ(t.error->message, "ISA avx512 is not available");
  EXPECT_THAT(t.failure, HasSubstr("ISA avx512 is not available"));
}

TEST(TranscriptTest, AnUnsupportedRecordIsKeptApartFromErrors) {
  // Alone (refused before hello) or after hello, it ends the stream.
  for (const std::string& prefix : {std::string(), HelloLine()}) {
    const Transcript t = ReadTranscript(
        prefix + ToJsonLine(Unsupported{"ISA avx512 is not available"}) + "\n" + DoneLine(0));
    EXPECT_FALSE(t.ok);
    EXPECT_FALSE(t.error.has_value());
    ASSERT_TRUE(t.unsupported.has_value());
    EXPECT_EQ(t.unsupported->reason, "ISA avx512 is not available");
    EXPECT_THAT(t.failure, HasSubstr("cannot run this here: ISA avx512 is not available"));
  }
  // An error record is never read as unsupported, whatever it says.
  const Transcript e = ReadTranscript(ToJsonLine(Error{"avx512 is not supported"}) + "\n");
  EXPECT_FALSE(e.unsupported.has_value());
}

TEST(TranscriptTest, SequenceViolationsFail) {
  struct Case {
    std::string text;
    std::string why;
  };
  const Case cases[] = {
      {StepLine(0) + DoneLine(1), "line 1: the first record must be `hello`"},
      {HelloLine() + HelloLine() + DoneLine(0), "line 2: a second `hello`"},
      {HelloLine() + StepLine(1) + DoneLine(1), "step index 1 where 0 was expected"},
      {HelloLine() + StepLine(0) + StepLine(0) + DoneLine(2), "step index 0 where 1"},
      {HelloLine() + StepLine(0) + DoneLine(2), "`done` counts 2 steps, but 1"},
      {HelloLine() + DoneLine(0) + StepLine(0), "line 3: output after the `done` record"},
      {HelloLine() + "Segmentation fault\n" + DoneLine(0), "line 2: not a JSON line"},
      {HelloLine() + "\n" + DoneLine(0), "line 2: an empty line"},
  };
  for (const Case& c : cases) {
    const Transcript t = ReadTranscript(c.text);
    EXPECT_FALSE(t.ok) << c.text;
    EXPECT_THAT(t.failure, HasSubstr(c.why)) << c.text;
  }
}

TEST(TranscriptTest, ATruncatedLastLineFails) {
  std::string text = HelloLine() + StepLine(0) + DoneLine(1);
  text.resize(text.size() - 5);  // a child killed mid-write
  const Transcript t = ReadTranscript(text);
  EXPECT_FALSE(t.ok);
  EXPECT_THAT(t.failure, HasSubstr("not a JSON line"));
}

TEST(TranscriptTest, FeedingInArbitraryPiecesGivesTheSameResult) {
  const std::string text = HelloLine() + StepLine(0) + TraceLine() + StepLine(1) + DoneLine(2);
  for (size_t piece : {1u, 2u, 7u, 64u, 1000u}) {
    TranscriptReader reader;
    for (size_t at = 0; at < text.size(); at += piece) reader.Feed(text.substr(at, piece));
    const Transcript t = reader.Finish();
    EXPECT_TRUE(t.ok) << piece << ": " << t.failure;
    EXPECT_EQ(t.steps.size(), 2u);
  }
}

TEST(TranscriptTest, CarriageReturnsAndAMissingFinalNewlineAreAccepted) {
  std::string text = HelloLine() + StepLine(0) + DoneLine(1);
  text.pop_back();
  std::string crlf;
  for (const char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  const Transcript t = ReadTranscript(crlf);
  EXPECT_TRUE(t.ok) << t.failure;
}

}  // namespace
}  // namespace samebits::protocol
