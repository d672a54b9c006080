// Output files (harness/store/output_file.h): a failed write leaves the
// previous file whole, a symlink is written through, a special file is
// never replaced, and the store is never an output's target.
#include "harness/store/output_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace samebits::store {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("samebits_output_file_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A write that fails half-way (here: the file size limit, as a full disk
// would) leaves the previous report as it was and no temporary file.
TEST_F(OutputFile, AFailedWriteLeavesThePreviousReportWhole) {
  const fs::path report = dir_ / "r.md";
  WriteOutputFile(report.string(), "previous report\n");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const struct rlimit limit = {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      WriteOutputFile(report.string(), std::string(100000, 'x'));
    } catch (const std::runtime_error&) {
      ::_exit(0);
    }
    ::_exit(1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the write did not fail";
  EXPECT_EQ(Read(report), "previous report\n");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) files += entry.exists() ? 1 : 0;
  EXPECT_EQ(files, 1) << "a temporary file was left behind";
  // Negative control: without the limit the new report replaces the old.
  WriteOutputFile(report.string(), "new report\n");
  EXPECT_EQ(Read(report), "new report\n");
}

// Returns whether CheckCommandOutputs refuses `output` beside the store `db`
// and the input `input`.
bool Refused(const std::string& output, const std::string& db, const std::string& input = "") {
  CommandPaths paths;
  paths.stores = {db};
  if (!input.empty()) paths.inputs = {{"FILE", input}};
  paths.outputs = {{"-o", output}};
  try {
    CheckCommandOutputs(paths);
    return false;
  } catch (const std::invalid_argument&) {
    return true;
  }
}

TEST_F(OutputFile, TheStoreItsSideFilesAndTheInputsAreRefusedAnyOtherPathIsNot) {
  const std::string db = (dir_ / "v.db").string();
  std::ofstream(db) << "x";
  EXPECT_TRUE(Refused(db, db));
  EXPECT_TRUE(Refused(db + "-wal", db));
  EXPECT_TRUE(Refused((dir_ / "." / "v.db-shm").string(), db));
  fs::create_hard_link(db, dir_ / "hard.md");
  EXPECT_TRUE(Refused((dir_ / "hard.md").string(), db));
  const std::string input = (dir_ / "in.json").string();
  std::ofstream(input) << "{}";
  EXPECT_TRUE(Refused(input, db, input));
  fs::create_symlink(input, dir_ / "in-link.json");
  EXPECT_TRUE(Refused((dir_ / "in-link.json").string(), db, input));
  EXPECT_FALSE(Refused((dir_ / "v.md").string(), db, input));
  EXPECT_FALSE(Refused("-", db));
  EXPECT_FALSE(Refused("", db));
  // A value that names no file (a run id) is no input to protect.
  EXPECT_FALSE(Refused((dir_ / "3").string(), db, "3"));
}

// A symlink at the output is written through: its target gets the bytes
// and the link stays a link.
TEST_F(OutputFile, ASymlinkIsWrittenThroughToItsTarget) {
  fs::create_directories(dir_ / "real");
  const fs::path target = dir_ / "real" / "report.md";
  std::ofstream(target) << "old";
  const fs::path link = dir_ / "link.md";
  fs::create_symlink(target, link);
  WriteOutputFile(link.string(), "new");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(Read(target), "new");
  // A dangling link creates its target.
  const fs::path dangling = dir_ / "dangling.md";
  fs::create_symlink(dir_ / "real" / "later.md", dangling);
  WriteOutputFile(dangling.string(), "later");
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(Read(dir_ / "real" / "later.md"), "later");
}

// A FIFO, a device or a folder at the output is refused by the check and
// by the writer, and is still there afterwards.
TEST_F(OutputFile, AFifoADeviceOrAFolderIsNeverReplaced) {
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const fs::path folder = dir_ / "folder";
  fs::create_directories(folder);
  const std::string db = (dir_ / "v.db").string();
  for (const std::string& special : {fifo.string(), folder.string(), std::string("/dev/null")}) {
    EXPECT_TRUE(Refused(special, db)) << special;
    EXPECT_THROW(WriteOutputFile(special, "x"), std::runtime_error) << special;
  }
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_directory(folder));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

}  // namespace
}  // namespace samebits::store
