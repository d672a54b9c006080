// Signed bundles (harness/exchange/bundle_signature.h): what an unsigned
// bundle's content id cannot promise, a signature does. Under --verify,
// every way a bundle can fall short is refused with its own message and
// nothing is read from it: no signature, a signature by another key, and a
// change to any value of the bundle after it was signed, including the
// attack the unkeyed id cannot see (an edited hash whose content id was
// recomputed). Tried at every value of a real signed bundle, and through
// the program: `export --sign`, `import --verify`, `compare --verify` (exit
// 2, nothing imported).
#include "harness/exchange/bundle_signature.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/exchange/bundle.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::exchange {
namespace {

using harness::RunResult;
using harness::testing::MakeCell;
using harness::testing::TempDir;
using harness::testing::WriteFile;
using nlohmann::json;

RunResult SampleRun() {
  RunResult run;
  run.started_at = "2026-12-01T12:00:00Z";
  run.command = "samebits gate";
  run.machine = {"x86_64", "Some CPU", "Linux", "6.1", "glibc 2.36", {"avx2"}};
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "reference", 7));
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "cpu-t2", 7));
  run.cells.back().weights_xxh3 = "00000000000000a1";
  run.cells.back().vocab_size = 256;
  return run;
}

// Returns what reading `text` with `key` throws ("" when it reads).
std::string Refusal(const std::string& text, const BundleKey* key) {
  try {
    ParseBundle(text, "b.json", key);
    return "";
  } catch (const BundleError& e) {
    return e.what();
  }
}

// Calls `visit` with a pointer to every value (scalars, arrays, objects)
// below `j`, depth first.
void EveryValue(json& j, const std::function<void(json&)>& visit) {
  if (j.is_object() || j.is_array()) {
    for (auto& child : j) EveryValue(child, visit);
  }
  visit(j);
}

class BundleSignature : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(tmp_.File("team.key"), std::string(32, 'k') + "\n");
    WriteFile(tmp_.File("other.key"), std::string(32, 'o') + "\n");
    key_ = ReadBundleKey(tmp_.File("team.key"));
    other_ = ReadBundleKey(tmp_.File("other.key"));
  }
  TempDir tmp_;
  BundleKey key_, other_;
};

TEST_F(BundleSignature, ASignedBundleVerifiesAndReadsAsUnsigned) {
  const std::string signed_text = FormatBundle({SampleRun()}, &key_);
  EXPECT_NE(signed_text.find("\"signature\""), std::string::npos);
  EXPECT_EQ(Refusal(signed_text, &key_), "");
  EXPECT_EQ(ParseBundle(signed_text, "b.json", &key_).at(0).cells.size(), 2u);
  // Without --verify the signature is not needed, and not in the way.
  EXPECT_EQ(Refusal(signed_text, nullptr), "");
  EXPECT_EQ(Refusal(FormatBundle({SampleRun()}), nullptr), "");
}

TEST_F(BundleSignature, EachWayToFallShortIsRefusedWithItsOwnMessage) {
  const std::string unsigned_text = FormatBundle({SampleRun()});
  EXPECT_NE(Refusal(unsigned_text, &key_).find("b.json: not signed, and --verify"),
            std::string::npos)
      << Refusal(unsigned_text, &key_);
  const std::string by_other = FormatBundle({SampleRun()}, &other_);
  EXPECT_NE(Refusal(by_other, &key_).find("signed with another key (key id " + other_.id),
            std::string::npos)
      << Refusal(by_other, &key_);
  // The attack the unkeyed content id cannot see: a hash edited and the
  // id recomputed (the bundle reads without --verify), under the original
  // signature.
  RunResult edited = SampleRun();
  edited.cells[1].steps[2].xxh3_64 ^= 1;
  json forged = json::parse(FormatBundle({edited}));
  forged["signature"] = json::parse(FormatBundle({SampleRun()}, &key_))["signature"];
  EXPECT_EQ(Refusal(forged.dump(1), nullptr), "") << "the id alone cannot see this edit";
  EXPECT_NE(Refusal(forged.dump(1), &key_).find("changed after it was signed"), std::string::npos)
      << Refusal(forged.dump(1), &key_);
}

// Any change to any value of a signed bundle, whatever it is (a hash, a
// name, a count, the version, the content id, the signature itself), is
// refused under --verify.
TEST_F(BundleSignature, ChangingAnyValueOfASignedBundleIsRefused) {
  const json original = json::parse(FormatBundle({SampleRun()}, &key_));
  size_t count = 0;
  json walk = original;
  EveryValue(walk, [&](json&) { ++count; });
  ASSERT_GT(count, 100u);
  for (size_t target = 0; target < count; ++target) {
    json doc = original;
    size_t at = 0;
    std::string what;
    EveryValue(doc, [&](json& v) {
      if (at++ != target) return;
      if (v.is_string()) {
        std::string s = v.get<std::string>();
        // A hex digit stays a hex digit, so only the signature can tell.
        if (!s.empty())
          s.back() = s.back() == '0' ? '1' : '0';
        else
          s = "x";
        v = s;
      } else if (v.is_boolean()) {
        v = !v.get<bool>();
      } else if (v.is_number_integer() || v.is_number_unsigned()) {
        v = v.get<int64_t>() + 1;
      } else if (v.is_number_float()) {
        v = v.get<double>() * 2 + 1;
      } else if (v.is_array()) {
        v.push_back(nullptr);
      } else if (v.is_object()) {
        v["extra"] = 1;
      } else {
        v = 0;
      }
      what = v.dump().substr(0, 60);
    });
    if (doc == original) continue;
    const std::string refusal = Refusal(doc.dump(1), &key_);
    EXPECT_NE(refusal, "") << "value " << target << " changed to " << what << " was accepted";
  }
}

TEST_F(BundleSignature, AMalformedSignatureOrKeyIsRefused) {
  json doc = json::parse(FormatBundle({SampleRun()}, &key_));
  for (const char* field : {"algorithm", "key_id", "mac"}) {
    json bad = doc;
    bad["signature"][field] = "zz";
    EXPECT_NE(Refusal(bad.dump(), nullptr).find(std::string("signature.") + field),
              std::string::npos)
        << field;
  }
  WriteFile(tmp_.File("short.key"), "too short");
  for (const std::string& path : {tmp_.File("short.key"), tmp_.File("missing.key"), tmp_.path()}) {
    EXPECT_THROW(ReadBundleKey(path), BundleError) << path;
  }
}

}  // namespace
}  // namespace samebits::exchange
