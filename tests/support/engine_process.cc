#include "tests/support/engine_process.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "tests/support/data_folder.h"

namespace samebits::testing {

EngineResult RunEngine(const std::string& args, const std::string& input) {
  const std::string base = ::testing::TempDir() + "/engine_process." + std::to_string(getpid());
  const std::string in_path = base + ".stdin", err_path = base + ".stderr";
  std::ofstream(in_path, std::ios::binary) << input;
  const std::string command = std::string("timeout -s KILL 60 '") + SAMEBITS_BINARY_DIR +
                              "/bin/samebits-engine' " + args + " <'" + in_path + "' 2>'" +
                              err_path + "'";
  EngineResult result;
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe != nullptr) {
    std::array<char, 4096> buffer;
    size_t n;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
      result.out.append(buffer.data(), n);
    }
    const int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.err = ReadWholeFile(err_path);
  }
  std::filesystem::remove(in_path);
  std::filesystem::remove(err_path);
  return result;
}

std::string SharedVocab(const std::string& name) {
  return data_folder::Path("vocab/ggml-vocab-" + name + ".gguf");
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace samebits::testing
