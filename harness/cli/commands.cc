// The subcommands' shared helpers (commands.h).
#include "harness/cli/commands.h"

#include <unistd.h>

#include <filesystem>

#include "harness/cli/path_flags.h"
#include "harness/store/location.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;

std::string& CommandLineStorage() {
  static std::string line;
  return line;
}

Paths FindPaths() {
  Paths p;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) exe = fs::absolute("samebits");
  p.program = exe.string();
  const fs::path bin = exe.parent_path();
  fs::path root = bin.parent_path().parent_path();
  if (!fs::is_directory(root / "scenarios", ec) && !fs::is_directory(root / "references", ec)) {
    root = fs::current_path(ec);
  }
  p.root = root.string();
  p.engine = (bin / "samebits-engine").string();
  p.scenarios = (root / "scenarios").string();
  p.references = (root / "references").string();
  p.db = (root / ".samebits" / "samebits.db").string();
  p.reports = (root / "reports").string();
  const fs::path relative = exe.lexically_relative(root);
  p.program_display =
      !relative.empty() && *relative.begin() != ".." ? relative.string() : p.program;
  return p;
}

}  // namespace

std::string ShellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\n'\"\\$`*?[]{}();&|<>!#~") == std::string::npos) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

const Paths& GetPaths() {
  static const Paths paths = FindPaths();
  return paths;
}

const std::string& CommandLine() {
  return CommandLineStorage();
}

void SetCommandLine(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) line += ' ';
    // Stored with runs, printed by `show`, exported in bundles: no secret.
    line += ShellQuote(i == 0 ? GetPaths().program_display : store::RedactArgument(argv[i]));
  }
  CommandLineStorage() = line;
}

std::string StorePath(const std::string& db_path) {
  return db_path.empty() ? GetPaths().db : db_path;
}

std::string StoreSideFolder(const std::string& db_path) {
  return store::SideFolder(store::UsableLocation(StorePath(db_path)),
                           std::filesystem::path(GetPaths().db).parent_path().string());
}

std::unique_ptr<store::Store> OpenStore(const std::string& db_path, store::Access access) {
  // A command declared a reader (path_flags.h) never opens its store for writing.
  if (DeclaredStoreAccess() == store::Access::kRead) access = store::Access::kRead;
  return std::make_unique<store::Store>(StorePath(db_path), access, StoreSideFolder(db_path));
}

harness::RunResult LoadRunArgument(store::Store& store, const std::string& which) {
  int64_t id = 0;
  if (which == "latest" || which.empty()) {
    id = store.LatestRunId();
    if (id == 0) throw UsageError("the database has no runs yet (make one with `samebits run`)");
  } else {
    try {
      size_t used = 0;
      id = std::stoll(which, &used);
      if (used != which.size() || id <= 0) throw std::invalid_argument(which);
    } catch (const std::exception&) {
      throw UsageError("'" + which + "' is not a run id (a positive number or `latest`)");
    }
  }
  return store.LoadRun(id);
}

std::string NoRunsOfMachineMessage(store::Store& store, const std::string& machine) {
  const std::vector<std::string> names = store.MachineNames();
  std::string known;
  for (const std::string& name : names) known += (known.empty() ? "" : ", ") + name;
  return "no run of machine '" + machine + "' in the store" +
         (names.empty() ? std::string(" (it holds no runs)")
                        : " (its machines: " + known + "; see `samebits runs`)");
}

harness::RunResult LoadLatestRunOf(store::Store& store, const std::string& machine) {
  const int64_t id = store.LatestRunIdOf(machine);
  if (id == 0) throw UsageError(NoRunsOfMachineMessage(store, machine));
  return store.LoadRun(id);
}

}  // namespace samebits::cli
