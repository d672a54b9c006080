// The wisdom file (engine/run/wisdom.h) is untrusted input: a file written
// by `tune` reads back as written, and every kind of damage is refused
// whole, with the file and what is wrong, before any knob is set.
#include "engine/run/wisdom.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace samebits::run {
namespace {

using ::testing::HasSubstr;

WisdomKey Key(int threads) {
  return {"Test CPU", "avx512", 2, "bf16", "exact", threads};
}

Wisdom TwoEntries() {
  Wisdom w;
  w.Put({Key(1), {{"gemv_chunk_bytes", 65536}}, {{"checkpoint", "synthetic:bench"}}});
  w.Put({Key(2), {{"gemm_tile_n", 256}, {"attention_row_block", 8}}, nlohmann::json::object()});
  return w;
}

// A folder of its own under the test's temporary folder, removed after.
class WisdomFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ =
        std::filesystem::path(::testing::TempDir()) / ("wisdom_test." + std::to_string(::getpid()));
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (folder_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::filesystem::path folder_;
};

TEST(Wisdom, WhatIsWrittenReadsBackAsWritten) {
  const Wisdom w = TwoEntries();
  const Wisdom back = ParseWisdom(WisdomText(w), "memory");
  ASSERT_EQ(back.entries.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.entries[i].key, w.entries[i].key);
    EXPECT_EQ(back.entries[i].knobs, w.entries[i].knobs);
    EXPECT_EQ(back.entries[i].measured, w.entries[i].measured);
  }
  ASSERT_NE(back.Find(Key(2)), nullptr);
  EXPECT_EQ(back.Find(Key(2))->knobs.at("gemm_tile_n"), 256);
  EXPECT_EQ(back.Find(Key(3)), nullptr);
}

TEST(Wisdom, PuttingAnEntryForTheSameKeyReplacesIt) {
  Wisdom w = TwoEntries();
  w.Put({Key(1), {{"gemv_chunk_bytes", 16384}}, nlohmann::json::object()});
  ASSERT_EQ(w.entries.size(), 2u);
  EXPECT_EQ(w.Find(Key(1))->knobs.at("gemv_chunk_bytes"), 16384);
}

TEST(Wisdom, EveryKindOfDamageIsRefusedWithWhatIsWrong) {
  const std::string entry =
      R"("cpu": "c", "isa": "avx512", "cores": 2, "weights": "bf16", "quant_dot": "exact", )"
      R"("threads": 1)";
  const auto file = [&](const std::string& fields) {
    return R"({"samebits_wisdom": 1, "entries": [{)" + fields + "}]}";
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not valid JSON"},
      {"[1, 2", "not valid JSON"},
      {"[]", "the top level must be an object"},
      {R"({"samebits_wisdom": 1, "entries": [], "entries": []})", "given twice"},
      {R"({"entries": []})", "'samebits_wisdom' is missing"},
      {R"({"samebits_wisdom": 2, "entries": []})", "newer than this engine reads"},
      {R"({"samebits_wisdom": "1", "entries": []})", "must be a whole number"},
      {R"({"samebits_wisdom": 1, "entries": {}})", "'entries' must be an array"},
      {R"({"samebits_wisdom": 1, "entries": [], "extra": 0})", "unknown key 'extra'"},
      {R"({"samebits_wisdom": 1, "entries": [7]})", "entries[0]: must be an object"},
      {file(entry), "'knobs' is missing"},
      {file(entry + R"(, "knobs": {"prefetch": 64})"), "no tuning knob is named 'prefetch'"},
      {file(entry + R"(, "knobs": {"gemm_tile_m": 0})"), "'gemm_tile_m' must be from 1"},
      {file(entry + R"(, "knobs": {"gemm_tile_m": 1.5})"), "must be a whole number"},
      {file(entry + R"(, "knobs": {"gemv_chunk_bytes": 18446744073709551615})"),
       "'gemv_chunk_bytes' must be from 1"},
      {file(entry + R"(, "knobs": {}, "colour": "red")"), "unknown key 'colour'"},
      {file(entry + R"(, "knobs": {}, "measured": [])"), "'measured' must be an object"},
      {file(R"("cpu": "", "isa": "a", "cores": 2, "weights": "w", "quant_dot": "exact", )"
            R"("threads": 1, "knobs": {})"),
       "'cpu' must be 1 to 256 characters long"},
      {file(R"("cpu": "c", "isa": "a", "cores": 0, "weights": "w", "quant_dot": "exact", )"
            R"("threads": 1, "knobs": {})"),
       "'cores' must be from 1"},
      {file(R"("cpu": "c", "isa": "a", "cores": 2, "weights": "w", "quant_dot": "fast", )"
            R"("threads": 1, "knobs": {})"),
       "'quant_dot' must be \"exact\" or \"int8\""},
      {file(R"("cpu": "c", "isa": "a", "cores": 2, "weights": "w", "quant_dot": "exact", )"
            R"("threads": 99999, "knobs": {})"),
       "'threads' must be from 1 to 1024"},
      {R"({"samebits_wisdom": 1, "entries": [{)" + entry + R"(, "knobs": {}}, {)" + entry +
           R"(, "knobs": {}}]})",
       "entries[1]: a second entry for the same machine and work"},
  };
  for (const auto& [text, expected] : cases) {
    try {
      ParseWisdom(text, "w.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const WisdomError& e) {
      EXPECT_THAT(e.what(), HasSubstr("wisdom file w.json: ")) << text;
      EXPECT_THAT(e.what(), HasSubstr(expected)) << text;
    }
  }
}

TEST(Wisdom, TooManyEntriesAreRefused) {
  std::string text = R"({"samebits_wisdom": 1, "entries": [)";
  for (size_t i = 0; i <= kMaxWisdomEntries; ++i) text += (i ? ",0" : "0");
  text += "]}";
  EXPECT_THROW(ParseWisdom(text, "w.json"), WisdomError);
}

TEST_F(WisdomFiles, AFileThatIsNoWisdomIsRefusedAndATooLargeOneUnread) {
  EXPECT_THROW(LoadWisdom((folder_ / "missing.json").string()), WisdomError);
  EXPECT_THROW(LoadWisdom(folder_.string()), WisdomError);  // a folder
  EXPECT_THROW(LoadWisdom(""), WisdomError);
  const std::string large = Write("large.json", std::string(kMaxWisdomBytes + 1, ' '));
  try {
    LoadWisdom(large);
    ADD_FAILURE() << "a file over the limit was read";
  } catch (const WisdomError& e) {
    EXPECT_THAT(e.what(), HasSubstr(large));
  }
}

TEST_F(WisdomFiles, SavingWritesTheWholeFileAndNothingBeside) {
  const std::string path = (folder_ / "sub" / "wisdom.json").string();
  SaveWisdom(TwoEntries(), path);
  EXPECT_EQ(LoadWisdom(path).entries.size(), 2u);
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(folder_ / "sub")) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u) << "a temporary file was left beside the wisdom";
}

// Sets an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST_F(WisdomFiles, ARunUsesTheNamedFileTheEnvironmentsOrTheCachesWhenThere) {
  const std::string named = (folder_ / "named.json").string();
  SaveWisdom(TwoEntries(), named);
  const std::string home = (folder_ / "home").string();
  const ScopedEnv no_env("SAMEBITS_WISDOM", nullptr);
  const ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
  const ScopedEnv at_home("HOME", home.c_str());

  EXPECT_TRUE(ChooseWisdom("none", Key(1)).file.empty());
  // No cache file yet: today's defaults, no error.
  EXPECT_EQ(DefaultWisdomPath(), home + "/.cache/samebits/wisdom.json");
  EXPECT_TRUE(ChooseWisdom("", Key(1)).file.empty());

  const WisdomChoice chosen = ChooseWisdom(named, Key(2));
  EXPECT_EQ(chosen.file, named);
  ASSERT_TRUE(chosen.entry.has_value());
  EXPECT_EQ(chosen.entry->knobs.at("gemm_tile_n"), 256);
  const WisdomChoice other = ChooseWisdom(named, Key(8));
  EXPECT_EQ(other.file, named);
  EXPECT_FALSE(other.entry.has_value());

  // The cache's file, once there, is read; a damaged one is refused, not
  // passed over.
  SaveWisdom(TwoEntries(), home + "/.cache/samebits/wisdom.json");
  EXPECT_TRUE(ChooseWisdom("", Key(1)).entry.has_value());
  Write("home/.cache/samebits/wisdom.json", "{");
  EXPECT_THROW(ChooseWisdom("", Key(1)), WisdomError);

  // One named by the environment must be there.
  const ScopedEnv env("SAMEBITS_WISDOM", (folder_ / "absent.json").c_str());
  EXPECT_THROW(ChooseWisdom("", Key(1)), WisdomError);
  EXPECT_THROW(ChooseWisdom((folder_ / "absent.json").string(), Key(1)), WisdomError);
}

TEST(Wisdom, TheHelloRecordSaysTheKnobsAndWhichEntryChoseThem) {
  const model::KnobValues knobs = {{"gemm_tile_n", 256}};
  EXPECT_EQ(TuningRecord(knobs, {}).dump(), R"({"knobs":{"gemm_tile_n":256}})");
  WisdomChoice choice{"/w.json", TwoEntries().entries[1]};
  const nlohmann::json r = TuningRecord(knobs, choice);
  EXPECT_EQ(r["wisdom"]["file"], "/w.json");
  EXPECT_EQ(r["wisdom"]["entry"]["threads"], 2);
  EXPECT_TRUE(TuningRecord(knobs, {"/w.json", std::nullopt})["wisdom"]["entry"].is_null());
}

}  // namespace
}  // namespace samebits::run
