// Each record survives a write and a read unchanged; malformed lines are
// rejected with a message that says what is wrong.
#include "engine/protocol/records.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

namespace samebits::protocol {
namespace {

using ::testing::HasSubstr;

Hello SampleHello() {
  Hello h;
  h.engine = {"samebits-engine", "0.1.0"};
  h.build = {"0123456789abcdef0123456789abcdef01234567", true, "GNU 12.2.0",
             "-O3 -ffp-contract=off"};
  h.platform = {"x86_64", "Some \"quoted\" CPU", "Linux", "6.1.0", "glibc 2.36", {"avx2", "fma"}};
  h.math = {"libm", "glibc", "2.36", "00112233aabbccdd"};
  h.config = {"synthetic:tiny", "classic", "cpu", 3, "avx2", 8192, "libm"};
  h.checkpoint = {"synthetic:tiny", "8d67e3c1e65c42a7", 256};
  return h;
}

template <typename T>
T RoundTrip(const T& record) {
  const std::string line = ToJsonLine(record);
  EXPECT_EQ(line.find('\n'), std::string::npos) << "a record must be one line";
  const Record parsed = ParseRecord(line);
  EXPECT_TRUE(std::holds_alternative<T>(parsed)) << line;
  return std::get<T>(parsed);
}

TEST(RecordsTest, HelloRoundTrips) {
  const Hello h = SampleHello();
  EXPECT_EQ(RoundTrip(h), h);
}

TEST(RecordsTest, StepRoundTripsWithExtremeHashes) {
  Step s{7, "extend", 22, 224, 19, 0, std::numeric_limits<uint64_t>::max(), 19, 3, 4};
  EXPECT_EQ(RoundTrip(s), s);
  s.fnv1a64 = 0x00000000000000ffULL;
  s.xxh3_64 = 0x8000000000000000ULL;
  s.kind = "decode";
  EXPECT_EQ(RoundTrip(s), s);
}

TEST(RecordsTest, StepLineIsInTheDocumentedOrder) {
  const Step s{0, "prefill", 11, 42, 17, 0x11912b9135bdeff4ULL, 0x8aca1371cc17e8baULL, 17, 0, 0};
  EXPECT_EQ(ToJsonLine(s),
            "{\"type\":\"step\",\"index\":0,\"kind\":\"prefill\",\"position\":11,"
            "\"input_token\":42,\"token\":17,\"fnv1a64\":\"11912b9135bdeff4\","
            "\"xxh3_64\":\"8aca1371cc17e8ba\",\"argmax\":17,\"nan\":0,\"inf\":0}");
}

TEST(RecordsTest, TraceDoneAndErrorRoundTrip) {
  const Trace t{11, -1, "output_norm", 0xdeadbeefcafef00dULL};
  EXPECT_EQ(RoundTrip(t), t);
  const Done d{9, 12.5};
  EXPECT_EQ(RoundTrip(d), d);
  const Error e{"scenario classic.json: step 2: 'decode' must be a positive integer\n\"x\""};
  EXPECT_EQ(RoundTrip(e), e);
}

TEST(RecordsTest, UnsupportedRoundTripsAndNeedsAReason) {
  const Unsupported u{"ISA neon is not available on this machine"};
  EXPECT_EQ(RoundTrip(u), u);
  EXPECT_EQ(ToJsonLine(u),
            R"({"type":"unsupported","reason":"ISA neon is not available on this machine"})");
  EXPECT_THROW(ParseRecord(R"({"type":"unsupported"})"), ProtocolError);
  EXPECT_THROW(ParseRecord(R"({"type":"unsupported","reason":""})"), ProtocolError);
  EXPECT_THROW(ParseRecord(R"({"type":"unsupported","reason":3})"), ProtocolError);
}

// The probe's `capabilities` record: written and read back, and anything
// else (another record, an empty reason) refused.
TEST(RecordsTest, CapabilitiesRoundTripAndRefuseOtherLines) {
  const Capabilities c{{{"isa", "neon", "no NEON on x86_64"}}};
  EXPECT_EQ(ParseCapabilities(ToJsonLine(c)), c);
  EXPECT_EQ(ParseCapabilities(ToJsonLine(Capabilities{})), Capabilities{});
  for (const std::string& bad :
       {ToJsonLine(Done{1, 1.0}), std::string("not json"),
        std::string("{\"type\":\"capabilities\"}"),
        std::string("{\"type\":\"capabilities\",\"unavailable\":[{\"axis\":\"isa\","
                    "\"value\":\"neon\",\"reason\":\"\"}]}")}) {
    EXPECT_THROW(ParseCapabilities(bad), ProtocolError) << bad;
  }
}

// `serve` (run --serve): written only when true, read back, absent read as
// false, anything but a boolean refused.
TEST(RecordsTest, CapabilitiesServeIsOptional) {
  Capabilities c;
  c.serve = true;
  EXPECT_NE(ToJsonLine(c).find("\"serve\":true"), std::string::npos);
  EXPECT_EQ(ParseCapabilities(ToJsonLine(c)), c);
  EXPECT_EQ(ToJsonLine(Capabilities{}).find("serve"), std::string::npos);
  EXPECT_FALSE(ParseCapabilities(R"({"type":"capabilities","unavailable":[]})").serve);
  EXPECT_THROW(ParseCapabilities(R"({"type":"capabilities","unavailable":[],"serve":"yes"})"),
               ProtocolError);
}

// `synthetic` (the synthetic checkpoints the engine knows): written only
// when known, read back, absent read as unknown, and anything but two
// arrays of non-empty strings refused.
TEST(RecordsTest, CapabilitiesSyntheticCheckpointsAreOptional) {
  Capabilities c;
  c.synthetic = SyntheticCheckpoints{{"tiny", "small"}, {"f32", "q8_0"}};
  EXPECT_NE(ToJsonLine(c).find(R"("synthetic":{"names":["tiny","small"],"types":["f32","q8_0"]})"),
            std::string::npos)
      << ToJsonLine(c);
  EXPECT_EQ(ParseCapabilities(ToJsonLine(c)), c);
  EXPECT_EQ(ToJsonLine(Capabilities{}).find("synthetic"), std::string::npos);
  EXPECT_FALSE(ParseCapabilities(R"({"type":"capabilities","unavailable":[]})").synthetic);
  for (const char* bad : {
           R"({"type":"capabilities","unavailable":[],"synthetic":["tiny"]})",
           R"({"type":"capabilities","unavailable":[],"synthetic":{"names":["tiny"]}})",
           R"({"type":"capabilities","unavailable":[],"synthetic":{"names":"tiny","types":[]}})",
           R"({"type":"capabilities","unavailable":[],"synthetic":{"names":[""],"types":[]}})",
           R"({"type":"capabilities","unavailable":[],"synthetic":{"names":[1],"types":[]}})",
       }) {
    EXPECT_THROW(ParseCapabilities(bad), ProtocolError) << bad;
  }
}

// The optional load time: written and read back when present, absent (an
// older engine) reads as unknown, and a negative or non-number one is refused.
TEST(RecordsTest, DoneLoadTimeIsOptional) {
  Done d{9, 12.5, PhaseTimes{8.0, 19, 4.25, 6}};
  d.load_ms = 30.5;
  EXPECT_EQ(RoundTrip(d), d);
  EXPECT_NE(ToJsonLine(d).find("\"load_ms\":30.5"), std::string::npos) << ToJsonLine(d);
  const Done old = std::get<Done>(ParseRecord("{\"type\":\"done\",\"steps\":2,\"elapsed_ms\":1}"));
  EXPECT_FALSE(old.load_ms.has_value());
  EXPECT_EQ(ToJsonLine(old).find("load_ms"), std::string::npos);
  for (const char* bad : {"{\"type\":\"done\",\"steps\":2,\"elapsed_ms\":1,\"load_ms\":-1}",
                          "{\"type\":\"done\",\"steps\":2,\"elapsed_ms\":1,\"load_ms\":\"1\"}"}) {
    try {
      ParseRecord(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("load_ms"), std::string::npos) << e.what();
    }
  }
}

// The optional phase split: written and read back when present, absent
// (an older engine) reads as no split, and a partial or negative split is
// refused naming the record.
TEST(RecordsTest, DonePhaseSplitIsOptionalAndWhole) {
  const Done d{9, 12.5, PhaseTimes{8.0, 19, 4.25, 6}};
  EXPECT_EQ(RoundTrip(d), d);
  EXPECT_NE(ToJsonLine(d).find("\"prefill_ms\":8.0,\"prefill_tokens\":19,\"decode_ms\":4.25,"
                               "\"decode_tokens\":6"),
            std::string::npos)
      << ToJsonLine(d);
  const Done old = std::get<Done>(ParseRecord("{\"type\":\"done\",\"steps\":2,\"elapsed_ms\":1}"));
  EXPECT_FALSE(old.phases.has_value());
  EXPECT_EQ(ToJsonLine(old).find("prefill"), std::string::npos);
  for (const char* bad : {"{\"type\":\"done\",\"steps\":2,\"elapsed_ms\":1,\"prefill_ms\":1}",
                          "{\"type\":\"done\",\"steps\":2,\"elapsed_ms\":1,\"prefill_ms\":-1,"
                          "\"prefill_tokens\":1,\"decode_ms\":1,\"decode_tokens\":1}",
                          "{\"type\":\"done\",\"steps\":2,\"elapsed_ms\":1,\"prefill_ms\":1,"
                          "\"prefill_tokens\":\"x\",\"decode_ms\":1,\"decode_tokens\":1}"}) {
    try {
      ParseRecord(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("done"), std::string::npos) << e.what();
    }
  }
}

TEST(RecordsTest, InvalidUtf8InAMessageStillMakesALine) {
  const Error e{std::string("bad byte \xff here")};
  const std::string line = ToJsonLine(e);
  EXPECT_NO_THROW(ParseRecord(line));
}

TEST(RecordsTest, UnknownFieldsAreIgnored) {
  const Record r =
      ParseRecord("{\"type\":\"done\",\"steps\":2,\"elapsed_ms\":1,\"future\":{\"x\":[1,2]}}");
  EXPECT_EQ(std::get<Done>(r), (Done{2, 1.0}));
}

void ExpectRejected(const std::string& line, const std::string& message_part) {
  try {
    ParseRecord(line);
    ADD_FAILURE() << "accepted: " << line;
  } catch (const ProtocolError& e) {
    EXPECT_THAT(e.what(), HasSubstr(message_part)) << line;
  }
}

TEST(RecordsTest, MalformedLinesAreRejectedWithMessages) {
  ExpectRejected("", "not a JSON line");
  ExpectRejected("Segmentation fault", "not a JSON line");
  ExpectRejected("{\"type\":\"step\"", "not a JSON line");
  ExpectRejected("[1,2,3]", "must be a JSON object");
  ExpectRejected("{\"steps\":1}", "'type'");
  ExpectRejected("{\"type\":7}", "'type'");
  ExpectRejected("{\"type\":\"hola\"}", "unknown record type 'hola'");
  ExpectRejected("{\"type\":\"done\",\"elapsed_ms\":1}", "missing field 'steps'");
  ExpectRejected("{\"type\":\"done\",\"steps\":-1,\"elapsed_ms\":1}", "'steps' is out of range");
  ExpectRejected("{\"type\":\"done\",\"steps\":1,\"elapsed_ms\":\"1\"}",
                 "'elapsed_ms' must be a number");
  ExpectRejected("{\"type\":\"error\"}", "missing field 'message'");
  ExpectRejected("{\"type\":\"error\",\"message\":3}", "'message' must be a string");
  ExpectRejected(
      "{\"type\":\"trace\",\"position\":1,\"layer\":-2,\"op\":\"q\",\"xxh3_64\":"
      "\"0000000000000000\"}",
      "'layer' is out of range");
}

TEST(RecordsTest, StepFieldsAreChecked) {
  const std::string good = ToJsonLine(Step{0, "decode", 1, 2, 3, 4, 5, 3, 0, 0});
  EXPECT_NO_THROW(ParseRecord(good));
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string line = good;
    const size_t at = line.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return line.replace(at, from.size(), to);
  };
  ExpectRejected(with("\"decode\"", "\"sideways\""), "'kind'");
  ExpectRejected(with("\"position\":1", "\"position\":1.5"), "'position' must be an integer");
  ExpectRejected(with("\"fnv1a64\":\"0000000000000004\"", "\"fnv1a64\":\"4\""),
                 "16 lower-case hex");
  ExpectRejected(with("\"fnv1a64\":\"0000000000000004\"", "\"fnv1a64\":\"000000000000000G\""),
                 "16 lower-case hex");
  ExpectRejected(with("\"fnv1a64\":\"0000000000000004\"", "\"fnv1a64\":\"00000000000000AB\""),
                 "16 lower-case hex");
  ExpectRejected(with("\"nan\":0", "\"nan\":-1"), "'nan' is out of range");
  ExpectRejected(with("\"token\":3,", ""), "missing field 'token'");
}

TEST(RecordsTest, HelloFieldsAndVersionAreChecked) {
  const std::string good = ToJsonLine(SampleHello());
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string line = good;
    const size_t at = line.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return line.replace(at, from.size(), to);
  };
  ExpectRejected(with("\"protocol\":1", "\"protocol\":2"), "protocol version 2 is not supported");
  ExpectRejected(with("\"dirty\":true", "\"dirty\":\"yes\""), "hello.build: field 'dirty'");
  ExpectRejected(with("\"threads\":3", "\"threads\":0"), "hello.config: field 'threads'");
  ExpectRejected(with("\"isa_features\":[\"avx2\",\"fma\"]", "\"isa_features\":\"avx2\""),
                 "'isa_features' must be an array");
  ExpectRejected(with("\"math\":{", "\"maths\":{"), "missing field 'math'");
}

TEST(RecordsTest, KernelAndConfigMathMayBeOmitted) {
  std::string line = ToJsonLine(SampleHello());
  for (const std::string field : {",\"kernel\":\"6.1.0\"", ",\"math\":\"libm\""}) {
    const size_t at = line.find(field);
    ASSERT_NE(at, std::string::npos) << field;
    line.erase(at, field.size());
  }
  const Hello h = std::get<Hello>(ParseRecord(line));
  EXPECT_EQ(h.platform.kernel, "");
  EXPECT_EQ(h.config.math, "libm") << "read as math.profile";
}

// Another engine has none of samebits-engine's switches: its hello leaves
// them out, and they read as "not given" (never as a value samebits-engine's
// cells could take for an echo: threads 0, kernels and isa empty).
TEST(RecordsTest, SamebitsEnginesSwitchesMayBeOmitted) {
  std::string line = ToJsonLine(SampleHello());
  for (const std::string field : {"\"kernels\":\"cpu\",", "\"threads\":3,", "\"isa\":\"avx2\",",
                                  "\"gemv_chunk_bytes\":8192,"}) {
    const size_t at = line.find(field);
    ASSERT_NE(at, std::string::npos) << field << " in " << line;
    line.erase(at, field.size());
  }
  const Hello h = std::get<Hello>(ParseRecord(line));
  EXPECT_EQ(h.config.kernels, "");
  EXPECT_EQ(h.config.threads, 0);
  EXPECT_EQ(h.config.isa, "");
  EXPECT_EQ(h.config.gemv_chunk_bytes, 0);
  EXPECT_EQ(h.config.checkpoint, "synthetic:tiny");
}

TEST(RecordsTest, MutatedLinesAreParsedOrRejectedNeverCrash) {
  // Every single-byte substitution of valid lines, from a fixed alphabet:
  // the reader either accepts the line or throws ProtocolError, nothing else.
  const std::string lines[] = {
      ToJsonLine(SampleHello()),
      ToJsonLine(Step{3, "decode", 14, 227, 186, 1, 2, 186, 0, 0}),
      ToJsonLine(Trace{11, -1, "logits", 7}),
      ToJsonLine(Done{8, 1.5}),
      ToJsonLine(Error{"m"}),
  };
  const char alphabet[] = {'"', '{', '}', '[', ']', ',', ':', '1', '-', 'x', '\\', '\0', ' '};
  int accepted = 0;
  int rejected = 0;
  for (const std::string& line : lines) {
    for (size_t i = 0; i < line.size(); ++i) {
      for (const char c : alphabet) {
        std::string mutated = line;
        mutated[i] = c;
        try {
          ParseRecord(mutated);
          ++accepted;
        } catch (const ProtocolError&) {
          ++rejected;
        } catch (const std::exception& e) {
          ADD_FAILURE() << "unexpected " << e.what() << " for " << mutated;
        }
      }
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(accepted, 0);  // e.g. a changed digit inside a string is still valid
}

TEST(RecordsTest, HashHexIsStrict) {
  uint64_t v = 0;
  EXPECT_TRUE(ParseHashHex("0123456789abcdef", &v));
  EXPECT_EQ(v, 0x0123456789abcdefULL);
  EXPECT_EQ(HashToHex(v), "0123456789abcdef");
  EXPECT_FALSE(ParseHashHex("0123456789abcde", &v));
  EXPECT_FALSE(ParseHashHex("0123456789abcdef0", &v));
  EXPECT_FALSE(ParseHashHex("0123456789ABCDEF", &v));
  EXPECT_FALSE(ParseHashHex(" 123456789abcdef", &v));
}

TEST(RecordsTest, StepTextIsOptionalAndRoundTrips) {
  Step with_text{0, "decode", 1, 2, 3, 4, 5, 3, 0, 0};
  with_text.text = "caf\xC3\xA9 \"<x>\"\n";
  const std::string line = ToJsonLine(with_text);
  EXPECT_EQ(std::get<Step>(ParseRecord(line)), with_text);
  // Older engines send no text: it reads as absent, and nothing is written back.
  const Step without{0, "decode", 1, 2, 3, 4, 5, 3, 0, 0};
  EXPECT_EQ(ToJsonLine(without).find("text"), std::string::npos);
  EXPECT_FALSE(std::get<Step>(ParseRecord(ToJsonLine(without))).text.has_value());
  // Part of a UTF-8 character (a byte piece) is written as U+FFFD, not refused.
  Step partial = without;
  partial.text = "\xE2\x96";
  EXPECT_NE(std::get<Step>(ParseRecord(ToJsonLine(partial))).text->find("\xEF\xBF\xBD"),
            std::string::npos);
  std::string bad = ToJsonLine(without);
  bad.insert(bad.size() - 1, ",\"text\":17");
  EXPECT_THROW(ParseRecord(bad), ProtocolError);
}

TEST(RecordsTest, BatchFieldsAreOptionalAndRoundTrip) {
  // Unbatched runs write none of them, so their records are as before.
  Hello h = SampleHello();
  EXPECT_EQ(ToJsonLine(h).find("batch"), std::string::npos);
  h.config.batch = 8;
  h.config.batch_seed = 12345;
  h.config.batch_schedule = "staggered";
  EXPECT_EQ(RoundTrip(h), h);
  std::string bad = ToJsonLine(h);
  bad.replace(bad.find("staggered"), 9, "sometimes");
  EXPECT_THAT([&] { ParseRecord(bad); },
              ::testing::ThrowsMessage<ProtocolError>(HasSubstr("batch_schedule")));

  Step s{3, "decode", 9, 2, 3, 4, 5, 3, 0, 0};
  EXPECT_EQ(ToJsonLine(s).find("batch"), std::string::npos);
  s.batch = BatchPlace{4, 11, 2, 7};
  EXPECT_EQ(RoundTrip(s), s);
  std::string outside = ToJsonLine(s);
  outside.replace(outside.find("\"slot\":2"), 8, "\"slot\":4");
  EXPECT_THROW(ParseRecord(outside), ProtocolError);
}

// The optional `device` of a hello: absent for a CPU run (the line is as
// before), written and read back whole when present, its kind required.
TEST(RecordsTest, HelloDeviceIsOptionalAndNeedsAKind) {
  Hello h = SampleHello();
  EXPECT_EQ(ToJsonLine(h).find("device"), std::string::npos);
  h.device = DeviceInfo{"cuda", "NVIDIA H200", "9.0",
                        132,    "580.159.04",  "CUDA 13.0, cuBLAS 13.1.0, torch 2.11.0+cu130"};
  EXPECT_EQ(RoundTrip(h), h);
  EXPECT_EQ(ParseDeviceText(ToJsonText(*h.device)), *h.device);
  // Only the kind is required.
  const DeviceInfo bare = ParseDeviceText("{\"kind\":\"cuda\"}");
  EXPECT_EQ(bare, (DeviceInfo{"cuda", "", "", 0, "", ""}));
  std::string line = ToJsonLine(h);
  line.replace(line.find("\"kind\":\"cuda\""), 13, "\"kind\":\"\"");
  ExpectRejected(line, "field 'kind' must name the device");
  ExpectRejected(ToJsonLine(SampleHello())
                     .insert(ToJsonLine(SampleHello()).size() - 1, ",\"device\":\"H200\""),
                 "field 'device' must be an object");
  EXPECT_THROW(ParseDeviceText("{\"name\":\"H200\"}"), ProtocolError);
  EXPECT_THROW(ParseDeviceText("not json"), ProtocolError);
  EXPECT_THROW(ParseDeviceText("{\"kind\":\"cuda\",\"multiprocessors\":-1}"), ProtocolError);
}

// The optional `readback` of a hello: absent for whole rows (the line is as
// before), each kind read back whole, and a kind the harness does not know
// refused: it must never take a partial read-back for whole rows.
TEST(RecordsTest, HelloReadbackIsOptionalAndKnown) {
  Hello h = SampleHello();
  EXPECT_EQ(ToJsonLine(h).find("readback"), std::string::npos);
  for (const Readback& r : {Readback{"topk", 20}, Readback{"tokens", 0}, Readback{"full", 0}}) {
    h.readback = r;
    EXPECT_EQ(RoundTrip(h), h) << r.kind;
  }
  const std::string base = ToJsonLine(SampleHello());
  const auto with = [&](const std::string& readback) {
    std::string line = base;
    return line.insert(line.size() - 1, ",\"readback\":" + readback);
  };
  ExpectRejected(with("{\"kind\":\"topn\"}"), "must be \"full\", \"topk\" or \"tokens\"");
  ExpectRejected(with("{\"kind\":\"topk\"}"), "'k'");
  ExpectRejected(with("{\"kind\":\"topk\",\"k\":0}"), "'k'");
  ExpectRejected(with("\"top20\""), "field 'readback' must be an object");
  EXPECT_EQ(DescribeReadback({"topk", 20}),
            "the chosen token and the top 20 (token, log-probability) pairs of each step, as "
            "returned");
  EXPECT_EQ(DescribeReadback({"tokens", 0}), "the chosen token of each step");
  EXPECT_EQ(DescribeReadback({}), "every step's whole logit row");
}

// The optional `repeats` of a done record: absent when the cell ran once,
// its first differing repeat and step present exactly when the repeats gave
// more than one output, and its counts consistent.
TEST(RecordsTest, DoneRepeatsAreOptionalAndConsistent) {
  Done d{9, 12.5};
  EXPECT_EQ(ToJsonLine(d).find("repeats"), std::string::npos);
  d.repeats = Repeats{8, 1, 0, -1};
  EXPECT_EQ(RoundTrip(d), d);
  EXPECT_NE(ToJsonLine(d).find("\"repeats\":{\"count\":8,\"distinct\":1}"), std::string::npos)
      << ToJsonLine(d);
  d.repeats = Repeats{8, 3, 2, 5};
  EXPECT_EQ(RoundTrip(d), d);
  EXPECT_EQ(ParseRepeatsText(ToJsonText(*d.repeats)), *d.repeats);
  const std::string head = "{\"type\":\"done\",\"steps\":9,\"elapsed_ms\":1,\"repeats\":";
  ExpectRejected(head + "{\"count\":0,\"distinct\":1}}", "'count' is out of range");
  ExpectRejected(head + "{\"count\":2,\"distinct\":3,\"first_repeat\":2,\"first_step\":0}}",
                 "'distinct' must not exceed 'count'");
  ExpectRejected(head + "{\"count\":2,\"distinct\":2}}", "missing field 'first_repeat'");
  ExpectRejected(head + "{\"count\":4,\"distinct\":2,\"first_repeat\":1,\"first_step\":0}}",
                 "'first_repeat' is out of range");
  ExpectRejected(head + "{\"count\":4,\"distinct\":2,\"first_repeat\":5,\"first_step\":0}}",
                 "'first_repeat' must not exceed 'count'");
  ExpectRejected(head + "{\"count\":4,\"distinct\":1,\"first_repeat\":2,\"first_step\":0}}",
                 "come only with more than one distinct output");
  ExpectRejected(head + "[4]}", "field 'repeats' must be an object");
}

// The optional `sampling` of a done record: at least two seeds, a finite
// temperature above 0, and counts that fit the seeds.
TEST(RecordsTest, DoneSamplingIsOptionalAndConsistent) {
  Done d{9, 12.5};
  EXPECT_EQ(ToJsonLine(d).find("sampling"), std::string::npos);
  d.sampling = Sampling{4, 0.7, 16, 3, 2};
  EXPECT_EQ(RoundTrip(d), d);
  EXPECT_EQ(ParseSamplingText(ToJsonText(*d.sampling)), *d.sampling);
  EXPECT_NE(ToJsonLine(d).find("\"sampling\":{\"seeds\":4,\"temperature\":0.7,\"tokens\":16,"
                               "\"distinct\":3,\"unstable_seed\":2}"),
            std::string::npos)
      << ToJsonLine(d);
  const std::string head = "{\"type\":\"done\",\"steps\":9,\"elapsed_ms\":1,\"sampling\":";
  const auto with = [&](const std::string& seeds, const std::string& temperature,
                        const std::string& distinct, const std::string& unstable) {
    return head + "{\"seeds\":" + seeds + ",\"temperature\":" + temperature +
           ",\"tokens\":4,\"distinct\":" + distinct + ",\"unstable_seed\":" + unstable + "}}";
  };
  ExpectRejected(with("1", "1", "1", "0"), "'seeds' is out of range");
  ExpectRejected(with("4", "0", "1", "0"), "'temperature' must be a finite number above 0");
  ExpectRejected(with("4", "-1", "1", "0"), "'temperature' must be a finite number above 0");
  ExpectRejected(with("4", "\"1\"", "1", "0"), "'temperature' must be a finite number above 0");
  ExpectRejected(with("4", "1", "5", "0"), "'distinct' must not exceed 'seeds'");
  ExpectRejected(with("4", "1", "0", "0"), "'distinct' is out of range");
  ExpectRejected(with("4", "1", "2", "5"), "'unstable_seed' must not exceed 'seeds'");
  ExpectRejected(head + "[4]}", "field 'sampling' must be an object");
}

// A key twice in one object is refused, in every record and at any depth:
// a reader would take the last while a person reading the transcript may
// take the first (issue 43).
TEST(RecordsTest, ARepeatedKeyIsRefused) {
  Step record;
  record.kind = "decode";
  const std::string step = ToJsonLine(record);
  const std::string twice = step.substr(0, step.size() - 1) + R"(,"fnv1a64":"0000000000000001"})";
  ASSERT_NO_THROW(ParseRecord(step));
  try {
    ParseRecord(twice);
    ADD_FAILURE() << "accepted " << twice;
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("'fnv1a64' appears twice"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ParseRecord(R"({"type":"unsupported","reason":"a","reason":"b"})"), ProtocolError);
  EXPECT_THROW(
      ParseCapabilities(
          R"({"type":"capabilities","unavailable":[{"axis":"isa","axis":"x","value":"v","reason":"r"}]})"),
      ProtocolError);
  // The same key in two objects is not a repeat.
  EXPECT_NO_THROW(ParseCapabilities(
      R"({"type":"capabilities","unavailable":[{"axis":"isa","value":"a","reason":"r"},{"axis":"isa","value":"b","reason":"r"}]})"));
}

}  // namespace
}  // namespace samebits::protocol
