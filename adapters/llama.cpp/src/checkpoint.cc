#include "checkpoint.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "adapter_errors.h"
#include "engine/numerics/hash.h"

namespace samebits::llamacpp {
namespace {

namespace fs = std::filesystem;

// Returns XXH3-64 of the bytes of `path`, read in 1 MiB pieces.
std::string HashFile(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file) throw InputError("checkpoint " + path + ": cannot be read");
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state(XXH3_createState(),
                                                                        XXH3_freeState);
  XXH3_64bits_reset(state.get());
  std::vector<char> buffer(1 << 20);
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), file.get())) > 0) {
    XXH3_64bits_update(state.get(), buffer.data(), n);
  }
  if (std::ferror(file.get())) throw InputError("checkpoint " + path + ": read failed");
  return numerics::Hex16(XXH3_64bits_digest(state.get()));
}

// Returns what changes when a file is rebuilt or replaced: its path, size
// and modification time.
std::string Identity(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return path + ":missing";
  return path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

// samebits-engine: $SAMEBITS_ENGINE, else the tree's build/bin.
std::string EngineBinary() {
  const char* env = std::getenv("SAMEBITS_ENGINE");
  std::string path = env && *env ? env : std::string(SAMEBITS_ROOT) + "/build/bin/samebits-engine";
  if (access(path.c_str(), X_OK) != 0) {
    throw InputError("samebits-engine not found at " + path +
                     " (build it, or set SAMEBITS_ENGINE): it exports non-GGUF checkpoints for "
                     "this adapter");
  }
  return fs::absolute(path).string();
}

// $SAMEBITS_CACHE, else $XDG_CACHE_HOME/samebits, else ~/.cache/samebits.
fs::path CacheRoot() {
  if (const char* c = std::getenv("SAMEBITS_CACHE"); c && *c) return fs::path(c);
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "samebits";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".cache" / "samebits";
}

// Runs argv (no shell) with stdout and stderr captured into `*output`;
// returns the exit status (-1 when it could not run or was killed).
int RunCaptured(const std::vector<std::string>& argv, std::string* output) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::array<char, 4096> buffer{};
  ssize_t n = 0;
  while ((n = read(pipe_fds[0], buffer.data(), buffer.size())) > 0)
    output->append(buffer.data(), n);
  close(pipe_fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Returns the GGUF export of `spec`, written once into the cache.
std::string Export(const std::string& spec) {
  const std::string engine = EngineBinary();
  std::string source;
  if (const size_t colon = spec.find(':'); colon != std::string::npos) {
    const std::string kind = spec.substr(0, colon);
    if (kind == "llama2c" || kind == "safetensors") source = Identity(spec.substr(colon + 1));
  }
  const std::string key = spec + "\n" + Identity(engine) + "\n" + source;
  const fs::path folder = CacheRoot() / "llamacpp-exports";
  const fs::path file = folder / (numerics::Hex16(XXH3_64bits(key.data(), key.size())) + ".gguf");
  if (fs::exists(file)) return file.string();
  std::error_code ec;
  fs::create_directories(folder, ec);
  // One export at a time per checkpoint: cells that start together wait
  // for the first instead of each writing the same file (the lock goes
  // with the descriptor when this process ends).
  const std::string lock_path = (folder / (file.stem().string() + ".lock")).string();
  const int lock = open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock >= 0) flock(lock, LOCK_EX);
  struct LockGuard {
    int fd;
    ~LockGuard() {
      if (fd >= 0) close(fd);
    }
  } guard{lock};
  if (fs::exists(file)) return file.string();
  // Written beside its final name and renamed into place, so that cells
  // running at once never read half a file.
  // (The name ends in .gguf: the extension chooses the export's format.)
  const fs::path scratch =
      folder / (file.stem().string() + ".tmp" + std::to_string(getpid()) + ".gguf");
  std::string output;
  const int code = RunCaptured({engine, "export", spec, scratch.string()}, &output);
  if (code != 0) {
    fs::remove(scratch, ec);
    while (!output.empty() && output.back() == '\n') output.pop_back();
    if (output.find("the writers do not write") != std::string::npos) throw Unsupported(output);
    throw InputError("samebits-engine export " + spec + " failed: " + output);
  }
  fs::rename(scratch, file, ec);
  if (ec && !fs::exists(file))
    throw InputError("cannot write " + file.string() + ": " + ec.message());
  return file.string();
}

}  // namespace

CheckpointFile ResolveCheckpoint(const std::string& spec) {
  std::string path;
  if (spec.rfind("gguf:", 0) == 0) {
    path = spec.substr(5);
  } else if (spec.find(':') == std::string::npos && fs::is_regular_file(spec)) {
    path = spec;
  } else {
    path = Export(spec);
  }
  if (!fs::is_regular_file(path)) throw InputError("checkpoint " + spec + ": no such file " + path);
  return {path, HashFile(path)};
}

}  // namespace samebits::llamacpp
