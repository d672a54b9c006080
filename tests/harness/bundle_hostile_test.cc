// Bundles are untrusted files: reading one is bounded in depth, count and
// memory, never aborts, and every refusal names the file; importing is
// linear however many runs share a start time. Each hostile shape is tried
// at every level of a real bundle, not at one place.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/analysis/bounded_json.h"
#include "harness/exchange/bundle.h"
#include "harness/exchange/import.h"
#include "harness/store/sqlite.h"
#include "harness/store/store.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::exchange {
namespace {

using harness::JsonLimits;
using harness::LimitsForSize;
using harness::ParseBoundedJson;
using harness::RunResult;
using harness::testing::MakeCell;
using harness::testing::TempDir;

RunResult SampleRun(const std::string& command) {
  RunResult run;
  run.started_at = "2026-12-01T12:00:00Z";
  run.command = command;
  run.machine = {"x86_64", "Some CPU", "Linux", "6.1", "glibc 2.36", {"avx2"}};
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "reference", 7));
  return run;
}

// The places in a bundle where a value can be replaced: the text of each
// JSON value that `needle` starts (a run's field, a cell's, a step's).
const std::vector<std::string> kPlaces = {
    "\"version\": ",     // the bundle
    "\"command\": ",     // a run
    "\"checkpoint\": ",  // a cell
    "\"threads\": ",     // a cell's configuration
    "\"position\": ",    // a step
    "\"steps\": ",       // an array
};

// Returns `text` with the value after the first `needle` replaced by
// `value` (a value is taken to end at the next ',' or newline).
std::string Replace(std::string text, const std::string& needle, const std::string& value) {
  const size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  const size_t begin = at + needle.size();
  size_t end = begin;
  int depth = 0;
  for (; end < text.size(); ++end) {
    const char c = text[end];
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') {
      if (depth == 0) break;
      --depth;
    }
    if (depth == 0 && (c == ',' || c == '\n')) break;
  }
  return text.replace(begin, end - begin, value);
}

// The hostile values: numbers out of range, nesting past any real bundle,
// and many small values.
std::vector<std::pair<std::string, std::string>> HostileValues() {
  return {
      {"1e400", "out of range"},
      {"-1e400", "out of range"},
      {"123456789012345678901234567890e99999", "out of range"},
      {std::string(100000, '[') + std::string(100000, ']'), "nested deeper"},
      {"[" + std::string(200, '[') + "1" + std::string(201, ']'), "nested deeper"},
  };
}

class BundleHostile : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteBundle({SampleRun("samebits gate")}, dir_.File("good.json"));
    good_ = harness::testing::ReadFile(dir_.File("good.json"));
  }
  TempDir dir_;
  std::string good_;
};

// Every hostile value at every place: refused with the file's name and the
// reason, as a BundleError (exit 2), never an abort or another exception.
TEST_F(BundleHostile, EveryHostileValueAnywhereIsRefusedNamingTheFile) {
  int tried = 0;
  for (const std::string& place : kPlaces) {
    for (const auto& [value, reason] : HostileValues()) {
      const std::string text = Replace(good_, place, value);
      ASSERT_FALSE(text.empty()) << place;
      const std::string file = dir_.File("hostile.json");
      harness::testing::WriteFile(file, text);
      try {
        ReadBundle(file);
        ADD_FAILURE() << "read a bundle with " << place << value.substr(0, 20);
      } catch (const BundleError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(file), std::string::npos) << message;
        EXPECT_NE(message.find(reason), std::string::npos) << place << ": " << message;
      }
      ++tried;
    }
  }
  EXPECT_EQ(tried, static_cast<int>(kPlaces.size() * HostileValues().size()));
  // Negative control: the bundle itself reads.
  EXPECT_EQ(ReadBundle(dir_.File("good.json")).size(), 1u);
}

// Each limit stops the parse where it is passed, whatever the shape.
TEST(BoundedJson, EachLimitIsEnforcedForEveryShape) {
  JsonLimits small;
  small.max_depth = 8;
  small.max_values = 1000;
  small.max_memory_bytes = 200000;
  const std::vector<std::pair<std::string, std::string>> shapes = {
      {"[" + std::string(9, '[') + std::string(9, ']') + "]", "nested deeper"},
      {"{\"a\":" + std::string(9, '[') + std::string(9, ']') + "}", "nested deeper"},
      {"[" + std::string(size_t{2000} * 3, ',') + "]", "not valid JSON"},
      {[] {
         std::string s = "[";
         for (int i = 0; i < 1500; ++i) s += i ? ",0" : "0";
         return s + "]";
       }(),
       "more than 1000 values"},
      {[] {
         std::string s = "[";
         for (int i = 0; i < 5000; ++i) s += i ? ",{}" : "{}";
         return s + "]";
       }(),
       "MiB of memory"},
      {"[\"" + std::string(300000, 'x') + "\"]", "MiB of memory"},
      {"{\"k\": 1e400}", "out of range"},
  };
  for (const auto& [text, reason] : shapes) {
    // The memory shapes are tried with no count limit to pass first.
    JsonLimits limits = small;
    if (reason == "MiB of memory") limits.max_values = 1u << 30;
    try {
      ParseBoundedJson(text, limits);
      ADD_FAILURE() << "parsed " << text.substr(0, 30);
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  }
  // Negative control: a document within every limit parses.
  EXPECT_EQ(ParseBoundedJson("[[1,2],{\"a\":\"b\"}]", small).size(), 2u);
}

// An array of many small objects within the limits is read whole. (Its
// time is in BENCHMARKS.md, "Reading hostile bundles": nlohmann's callback
// parser, used before, walked the whole array after each object; this
// shape took 158 s at 400 000 objects.)
TEST(BoundedJson, AnArrayOfManyObjectsIsReadWhole) {
  constexpr int kObjects = 300000;
  std::string text = "[";
  for (int i = 0; i < kObjects; ++i) text += i ? ",{\"k\":1}" : "{\"k\":1}";
  text += "]";
  const nlohmann::json doc = ParseBoundedJson(text, LimitsForSize(text.size()));
  ASSERT_EQ(doc.size(), static_cast<size_t>(kObjects));
  EXPECT_EQ(doc.back().at("k"), 1);
}

// A bundle read from a pipe (`samebits import /dev/stdin`) is read, within
// the size limit; a folder or a missing file is named for what it is.
TEST_F(BundleHostile, ABundleFromAPipeIsReadAndOtherKindsAreNamed) {
  const std::string fifo = dir_.File("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const uint64_t limit : {uint64_t{1} << 20, uint64_t{100}}) {
    const pid_t writer = ::fork();
    ASSERT_GE(writer, 0);
    if (writer == 0) {
      FILE* out = std::fopen(fifo.c_str(), "w");
      if (out != nullptr) {
        std::fwrite(good_.data(), 1, good_.size(), out);
        std::fclose(out);
      }
      ::_exit(0);
    }
    if (limit > good_.size()) {
      EXPECT_EQ(ReadBundle(fifo, limit).size(), 1u);
    } else {
      try {
        ReadBundle(fifo, limit);
        ADD_FAILURE() << "read past the limit";
      } catch (const BundleError& e) {
        EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
      }
    }
    int status = 0;
    ::kill(writer, SIGPIPE);
    ::waitpid(writer, &status, 0);
  }
  try {
    ReadBundle(dir_.path());
    ADD_FAILURE() << "read a folder";
  } catch (const BundleError& e) {
    EXPECT_NE(std::string(e.what()).find("is a folder"), std::string::npos) << e.what();
  }
  try {
    ReadBundle(dir_.File("missing.json"));
    ADD_FAILURE() << "read a missing file";
  } catch (const BundleError& e) {
    EXPECT_NE(std::string(e.what()).find("no such bundle file"), std::string::npos) << e.what();
  }
}

// Counts the statements `store` runs whose text holds `needle`.
class StatementCounter {
 public:
  StatementCounter(store::Store& store, std::string needle) : needle_(std::move(needle)) {
    sqlite3_trace_v2(static_cast<store::SqliteConnection&>(store.connection()).raw(),
                     SQLITE_TRACE_STMT, &Count, this);
  }
  int count() const { return count_; }

 private:
  static int Count(unsigned, void* self, void* stmt, void*) {
    auto* counter = static_cast<StatementCounter*>(self);
    const char* sql = sqlite3_sql(static_cast<sqlite3_stmt*>(stmt));
    if (sql != nullptr && std::string(sql).find(counter->needle_) != std::string::npos)
      ++counter->count_;
    return 0;
  }
  std::string needle_;
  int count_ = 0;
};

// Many runs sharing one start time: every stored run is loaded at most once
// per import however many bundled runs share its start time (it was loaded
// once per bundled run: quadratic), and the import stays idempotent.
TEST_F(BundleHostile, ImportLoadsEachStoredRunOnceWhateverSharesItsStartTime) {
  std::vector<RunResult> runs;
  runs.reserve(40);
  for (int i = 0; i < 40; ++i) runs.push_back(SampleRun("samebits gate # " + std::to_string(i)));
  store::Store target(dir_.File("t.db"));
  const std::vector<RunResult> first_half(runs.begin(), runs.begin() + 20);
  ASSERT_EQ(ImportRuns(target, first_half).added.size(), 20u);
  StatementCounter loads(target, "WHERE r.id = ?1");
  const ImportResult all = ImportRuns(target, runs);
  EXPECT_EQ(all.added.size(), 20u);
  EXPECT_EQ(all.already_present, 20);
  EXPECT_LE(loads.count(), 20) << "a stored run was loaded more than once";
  const ImportResult again = ImportRuns(target, runs);
  EXPECT_EQ(again.added.size(), 0u);
  EXPECT_EQ(again.already_present, 40);
}

// Returns the exit status and output of `samebits ARGS` run with its
// address space limited to `limit_bytes` (RLIMIT_AS): the memory a hostile
// bundle could take is bounded by the parser, so the program refuses it
// rather than dying of an allocation failure. Under AddressSanitizer, which
// reserves far more address space than any limit, it runs unlimited.
std::pair<int, std::string> RunLimited(const std::vector<std::string>& args, uint64_t limit_bytes,
                                       const std::string& output_file) {
  const std::string program = harness::testing::SamebitsProgram();
  const pid_t pid = ::fork();
  if (pid == 0) {
#if !defined(__SANITIZE_ADDRESS__)
    const rlimit limit{limit_bytes, limit_bytes};
    ::setrlimit(RLIMIT_AS, &limit);
#else
    (void)limit_bytes;
#endif
    if (std::freopen(output_file.c_str(), "w", stdout) == nullptr) ::_exit(126);
    ::dup2(::fileno(stdout), 2);
    std::vector<char*> argv = {const_cast<char*>(program.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return {code, harness::testing::ReadFile(output_file)};
}

// Ten million tiny values of every kind (the 30 MB bundle of `{}` once
// peaked at 1.08 GB and, under a memory limit, ended in std::terminate):
// under a 768 MiB address-space limit, `import` and `compare` refuse each
// with exit 2 and a message naming the file, and nothing is imported.
TEST_F(BundleHostile, MillionsOfTinyValuesAreRefusedUnderAMemoryLimit) {
  const std::vector<std::string> tiny = {"{}", "[]", "0", "\"\"", "null", "{\"a\":{}}"};
  for (const std::string& value : tiny) {
    const std::string file = dir_.File("tiny.json");
    {
      std::string text = "{\"format\":\"samebits-bundle\",\"version\":1,\"runs\":[";
      const size_t count = (30u << 20) / (value.size() + 1);
      text.reserve(text.size() + count * (value.size() + 1) + 3);
      for (size_t i = 0; i < count; ++i) {
        if (i > 0) text += ',';
        text += value;
      }
      text += "]}";
      harness::testing::WriteFile(file, text);
    }
    const std::string db = dir_.File("limited.db");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"import", file, "--db", db},
          std::vector<std::string>{"compare", file, file}}) {
      const auto [code, output] = RunLimited(args, 768ull << 20, dir_.File("limited.out"));
      EXPECT_EQ(code, 2) << args[0] << " of " << value << ": " << output;
      EXPECT_NE(output.find(file), std::string::npos)
          << args[0] << " of " << value << ": " << output;
      EXPECT_EQ(output.find("terminate"), std::string::npos) << output;
      EXPECT_FALSE(std::filesystem::exists(db)) << args[0] << " of " << value;
    }
  }
}

}  // namespace
}  // namespace samebits::exchange
