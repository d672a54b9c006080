#include "tests/harness/standin_helpers.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "harness/store/store.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::standin {

namespace fs = std::filesystem;

std::string BinDir() {
  return std::string(SAMEBITS_BINARY_DIR) + "/bin";
}

std::string Source(const std::string& path) {
  return std::string(SAMEBITS_SOURCE_DIR) + "/" + path;
}

std::string FileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string DiagnosisText(const harness::Diagnosis& d) {
  std::string text = d.headline + "\n";
  for (const std::string& line : d.details) text += line + "\n";
  return text;
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& env_prefix) {
  std::string cmd = env_prefix;
  for (const std::string& a : argv) {
    if (!cmd.empty()) cmd += ' ';
    cmd += ShellQuote(a);
  }
  const harness::testing::ShellResult shell = harness::testing::RunShellLine(cmd);
  return CommandResult{cmd, shell.exit_code, shell.output};
}

TempDir::TempDir(const std::string& name) {
  path_ = fs::temp_directory_path() / ("samebits_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  if (std::getenv("SAMEBITS_KEEP_TEMP") == nullptr) fs::remove_all(path_, ec);
}

std::string FaultyEngine(const fs::path& dir, const std::string& fault) {
  const fs::path link = dir / ("samebits-standin-engine-" + fault);
  std::error_code ec;
  fs::remove(link, ec);
  fs::create_symlink(BinDir() + "/samebits-standin-engine", link);
  return link.string();
}

harness::RunResult LatestRun(const std::string& db) {
  store::Store store(db);
  return store.LoadRun(store.LatestRunId());
}

const harness::CellResult* FindCell(const harness::RunResult& run, const std::string& config) {
  for (const harness::CellResult& c : run.cells) {
    if (c.config.name == config) return &c;
  }
  return nullptr;
}

std::pair<int, int> StandinServersStartedAndLeft(const std::filesystem::path& pid_dir) {
  int started = 0;
  int left = 0;
  for (const std::filesystem::directory_entry& e : std::filesystem::directory_iterator(pid_dir)) {
    ++started;
    std::ifstream pid_file(e.path());
    std::string pid;
    std::getline(pid_file, pid);
    std::ifstream cmdline("/proc/" + pid + "/cmdline");
    const std::string command{std::istreambuf_iterator<char>(cmdline),
                              std::istreambuf_iterator<char>()};
    if (command.find("standin_server.py") != std::string::npos) ++left;
  }
  return {started, left};
}

std::string StoredCode(const std::string& db, const std::string& config) {
  for (const harness::CellResult& c : LatestRun(db).cells) {
    if (c.config.name == config) return harness::ResultCodeName(c.code);
  }
  return "(no cell " + config + ")";
}

ProfileGate GateAgainstOwnBaseline(const std::string& engine, const std::string& db,
                                   const std::string& checkpoint,
                                   const std::string& references_dir) {
  const auto samebits = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), BinDir() + "/samebits");
    argv.insert(argv.end(), {"--engine", engine, "--db", db});
    return RunCommand(argv);
  };
  ProfileGate g;
  g.run = samebits({"run", "--checkpoint", checkpoint, "--scenario", "classic", "--dump-logits"});
  if (g.run.exit_code != 0) return g;
  g.generate =
      samebits({"reference", "generate", "--run", "latest", "--references-dir", references_dir});
  if (g.generate.exit_code != 0) return g;
  g.gate = samebits({"gate", "--run", "latest", "--references-dir", references_dir});
  return g;
}

ReferenceConformance ConformT1ToReferencePass(const std::string& checkpoint,
                                              const std::string& reference_db,
                                              const std::string& engine_db,
                                              const std::string& scenario,
                                              const std::string& scenarios_dir) {
  ReferenceConformance r;
  r.reference =
      RunCommand({BinDir() + "/samebits", "run", "--checkpoint", checkpoint, "--scenarios-dir",
                  scenarios_dir.empty() ? Source("scenarios") : scenarios_dir, "--scenario",
                  scenario, "--config", "reference", "--dump-logits", "--db", reference_db});
  if (r.reference.exit_code != 0) return r;
  r.conform = RunCommand({BinDir() + "/samebits", "conform", reference_db, engine_db, "--config-b",
                          "t1", "--max-nmse", "1e-4"});
  return r;
}

std::string WriteScenario(const fs::path& dir) {
  // The stand-in only checks that the file exists; the real engine's
  // scenario format is not needed here.
  const fs::path file = dir / "standin.json";
  std::ofstream(file) << "{\"name\": \"standin\"}\n";
  return file.string();
}

std::string OwnEngineProfile(const std::filesystem::path& dir) {
  std::ifstream in(Source("engines/samebits.json"));
  nlohmann::json profile = nlohmann::json::parse(in);
  profile["command"] = {BinDir() + "/samebits-engine", "run"};
  std::string file = (dir / "samebits-here.json").string();
  std::ofstream(file) << profile.dump(2);
  return file;
}

}  // namespace samebits::standin
