// Report files (harness/report/report_file.h): a failed write leaves the
// previous report whole, and the store is never a report's target.
#include "harness/report/report_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace samebits::harness::report {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class ReportFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("samebits_report_file_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A write that fails half-way (here: the file size limit, as a full disk
// would) leaves the previous report as it was and no temporary file.
TEST_F(ReportFile, AFailedWriteLeavesThePreviousReportWhole) {
  const fs::path report = dir_ / "r.md";
  WriteFileAtomically(report.string(), "previous report\n");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const struct rlimit limit = {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      WriteFileAtomically(report.string(), std::string(100000, 'x'));
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
  WriteFileAtomically(report.string(), "new report\n");
  EXPECT_EQ(Read(report), "new report\n");
}

TEST_F(ReportFile, TheStoreAndItsSideFilesAreRefusedAnyOtherPathIsNot) {
  const std::string db = (dir_ / "v.db").string();
  std::ofstream(db) << "x";
  EXPECT_THROW(RefuseOutputOverStore(db, db), std::invalid_argument);
  EXPECT_THROW(RefuseOutputOverStore(db + "-wal", db), std::invalid_argument);
  EXPECT_THROW(RefuseOutputOverStore((dir_ / "." / "v.db-shm").string(), db),
               std::invalid_argument);
  fs::create_hard_link(db, dir_ / "hard.md");
  EXPECT_THROW(RefuseOutputOverStore((dir_ / "hard.md").string(), db), std::invalid_argument);
  EXPECT_NO_THROW(RefuseOutputOverStore((dir_ / "v.md").string(), db));
  EXPECT_NO_THROW(RefuseOutputOverStore("-", db));
  EXPECT_NO_THROW(RefuseOutputOverStore("", db));
}

}  // namespace
}  // namespace samebits::harness::report
