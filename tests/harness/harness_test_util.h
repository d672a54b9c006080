// Shared helpers for the harness tests: paths of the built programs and a
// temporary folder removed at the end of each test.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "harness/analysis/results.h"

namespace samebits::harness::testing {

inline std::string BinDir() {
  return std::string(SAMEBITS_BINARY_DIR) + "/bin";
}
inline std::string FakeEngine() {
  return BinDir() + "/samebits-fake-engine";
}
inline std::string SamebitsProgram() {
  return BinDir() + "/samebits";
}

// A fresh folder under TMPDIR (or /tmp), removed with its contents.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/samebits-test-XXXXXX";
    path_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

struct ShellResult {
  int exit_code = -1;  // -1 when killed by a signal, or /bin/sh did not start
  std::string output;  // stdout and stderr together
};

// Returns what /bin/sh made of the command line `line`.
inline ShellResult RunShellLine(const std::string& line) {
  ShellResult r;
  std::FILE* pipe = ::popen(("{ " + line + " ; } 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Returns a step with hashes derived from `seed` (a fixed, documented
// pattern: xxh3 = seed * 1000 + index, fnv = its complement).
inline StepRecord MakeStep(int index, uint64_t seed) {
  StepRecord s;
  s.index = index;
  s.kind = index == 0 ? "prefill" : "decode";
  s.position = 10 + index;
  s.input_token = 40 + index;
  s.token = static_cast<int>((seed + static_cast<uint64_t>(index)) % 256);
  s.argmax = s.token;
  s.xxh3_64 = seed * 1000 + static_cast<uint64_t>(index);
  s.fnv1a64 = ~s.xxh3_64;
  return s;
}

// Returns a PASS cell with `n` steps from `seed`.
inline CellResult MakeCell(const std::string& checkpoint, const std::string& scenario,
                           const std::string& config, uint64_t seed, int n = 4,
                           const std::string& math = "portable") {
  CellResult c;
  c.checkpoint = checkpoint;
  c.scenario = scenario;
  c.config.name = config;
  c.config.kernels = config == "reference" ? "reference" : "cpu";
  c.config.math = math;
  c.code = ResultCode::kPass;
  for (int i = 0; i < n; ++i) c.steps.push_back(MakeStep(i, seed));
  MathLibraryInfo m;
  m.profile = math;
  m.name = math == "portable" ? "samebits-portable" : "glibc";
  m.version = math == "portable" ? "1" : "2.36";
  m.fingerprint = math == "portable" ? "00000000000000aa" : "00000000000000bb";
  c.math = m;
  BuildInfo b;
  b.engine = "samebits-engine";
  b.version = "0.1.0";
  b.revision = "0123456789abcdef0123456789abcdef01234567";
  b.compiler = "GNU 12.2.0";
  b.flags = "-O3";
  c.build = b;
  c.weights_xxh3 = "00000000deadbeef";
  c.vocab_size = 256;
  return c;
}

}  // namespace samebits::harness::testing
