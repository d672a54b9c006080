// Adding bundled runs to a store (import.h).
#include "harness/exchange/import.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "harness/exchange/bundle.h"
#include "harness/exchange/bundle_dumps.h"
#include "harness/store/dump_paths.h"

namespace samebits::exchange {
namespace {

namespace fs = std::filesystem;

// Writes the rows `run`'s bundle carried into `folder`, one file per cell,
// and points each cell's `dump_path` at its file; adds every file written
// to `written`.
void WriteDumps(harness::RunResult& run, const fs::path& folder, const std::string& root,
                std::vector<fs::path>& written) {
  std::set<std::string> names;
  for (size_t i = 0; i < run.cells.size(); ++i) {
    harness::CellResult& cell = run.cells[i];
    if (!cell.dump || cell.dump->values.empty()) continue;
    std::string name = store::DumpFileName(cell.checkpoint, cell.scenario, cell.config.name);
    // Two cells of one name (never made by samebits) keep apart.
    if (!names.insert(name).second) {
      name += '-';
      name += std::to_string(i);
    }
    const fs::path path = folder / name;
    WriteDumpFile(path.string(), *cell.dump);
    written.push_back(path);
    cell.dump_path = root.empty() ? fs::absolute(path).lexically_normal().string()
                                  : store::StoredDumpPath(path.string(), root);
  }
}

// Returns the content id of the stored run `id`, as `samebits export`
// would write it (statistics of local dumps read from their files, dump
// paths left out).
std::string StoredContentId(store::Store& store, int64_t id, const std::string& dump_base_dir) {
  harness::RunResult stored = store.LoadRun(id);
  for (harness::CellResult& c : stored.cells) {
    // A local dump's statistics come from its file, as export reads them;
    // one that cannot be read is left out, as export leaves it out.
    if (!c.dump && !c.dump_path.empty()) {
      try {
        c.dump = ReadCellDump(c, ResolveDumpPath(c.dump_path, dump_base_dir), false);
      } catch (const std::exception&) {
      }
    }
    // Dump paths are left out of bundles, so they do not count.
    c.dump_path.clear();
  }
  return ContentId(stored);
}

// The content ids of the stored runs, by start time, each run loaded and
// hashed at most once however many bundled runs share its start time (one
// lookup per bundled run loaded every such run again: quadratic).
class StoredIds {
 public:
  StoredIds(store::Store& store, std::string dump_base_dir)
      : store_(store), dump_base_dir_(std::move(dump_base_dir)) {}

  // Returns the id of a stored run with `content_id` that started at
  // `started_at`, or 0.
  int64_t Find(const std::string& started_at, const std::string& content_id) {
    std::map<std::string, int64_t>& ids = Load(started_at);
    const auto it = ids.find(content_id);
    return it == ids.end() ? 0 : it->second;
  }

  // Records a run just stored.
  void Add(const std::string& started_at, const std::string& content_id, int64_t id) {
    Load(started_at).emplace(content_id, id);
  }

 private:
  std::map<std::string, int64_t>& Load(const std::string& started_at) {
    auto [it, fresh] = by_start_.try_emplace(started_at);
    if (!fresh) return it->second;
    // Only runs that started at the same instant can be equal, so only those
    // are loaded and hashed (the store records no content id).
    std::vector<int64_t> candidates;
    store::Statement select =
        store_.connection().Prepare("SELECT id FROM runs WHERE started_at = ?1 ORDER BY id");
    select.Bind(1, started_at);
    while (select.Step()) candidates.push_back(select.Int(0));
    for (int64_t id : candidates)
      it->second.emplace(StoredContentId(store_, id, dump_base_dir_), id);  // the first id wins
    return it->second;
  }

  store::Store& store_;
  std::string dump_base_dir_;
  std::map<std::string, std::map<std::string, int64_t>> by_start_;
};

// The file in each folder import writes that names the database it belongs
// to: several databases may share one folder, and so one dumps/ folder;
// the sweep removes only its own database's orphans.
constexpr const char* kOwnerFile = ".samebits-import-owner";
constexpr const char* kStagingPrefix = ".import-staging-";
constexpr const char* kImportPrefix = "import-";

std::string OwnerName(store::Store& store) {
  // A server's store is named by its connection string (no password).
  if (store.connection().backend() != store::Backend::kSqlite) return store.connection().path();
  return fs::path(store.connection().path()).filename().string();
}

bool OwnedBy(const fs::path& folder, const std::string& owner) {
  std::ifstream in(folder / kOwnerFile);
  std::string name;
  return std::getline(in, name) && name == owner;
}

// Marks `folder` (made if needed) as `owner`'s, once: the mark is written
// beside and renamed into place, so a kill at any moment leaves it whole
// or absent, never empty.
void MarkOwner(const fs::path& folder, const std::string& owner) {
  std::error_code ec;
  if (fs::exists(folder / kOwnerFile, ec)) return;
  fs::create_directories(folder);
  const fs::path part = folder / (std::string(kOwnerFile) + ".part");
  {
    std::ofstream out(part, std::ios::trunc);
    out << owner << "\n";
    if (!out.flush()) throw std::runtime_error("cannot write in " + folder.string());
  }
  fs::rename(part, folder / kOwnerFile);
}

// Removes what an interrupted import of this database left in `dumps`
// (SIGINT, SIGTERM or kill -9 before its transaction committed): staging
// folders, and import-<id> folders that no stored cell points into. Only
// folders marked as this database's are touched. Must run inside the write
// transaction, so that no other import of this database is between moving
// its files in and committing. Returns the number of folders removed.
int SweepImportOrphans(store::Store& store, const fs::path& dumps) {
  std::error_code ec;
  if (!fs::is_directory(dumps, ec)) return 0;
  std::set<std::string> referenced;
  store::Statement select =
      store.connection().Prepare("SELECT dump_path FROM cells WHERE dump_path != ''");
  while (select.Step()) {
    for (const fs::path& part : fs::path(select.Text(0))) {
      if (part.string().rfind(kImportPrefix, 0) == 0) referenced.insert(part.string());
    }
  }
  const std::string owner = OwnerName(store);
  std::vector<fs::path> orphans;
  for (const fs::directory_entry& entry : fs::directory_iterator(dumps, ec)) {
    const std::string name = entry.path().filename().string();
    const bool staging = name.rfind(kStagingPrefix, 0) == 0;
    const bool imported = name.rfind(kImportPrefix, 0) == 0 && referenced.count(name) == 0;
    if ((staging || imported) && entry.is_directory(ec) && OwnedBy(entry.path(), owner))
      orphans.push_back(entry.path());
  }
  for (const fs::path& folder : orphans) fs::remove_all(folder, ec);
  return static_cast<int>(orphans.size());
}

}  // namespace

int64_t FindStoredRun(store::Store& store, const std::string& started_at,
                      const std::string& content_id, const std::string& dump_base_dir) {
  return StoredIds(store, dump_base_dir).Find(started_at, content_id);
}

ImportResult ImportRuns(store::Store& store, const std::vector<harness::RunResult>& runs,
                        const ImportOptions& options) {
  ImportResult result;
  const fs::path dumps = fs::path(store.side_folder()) / "dumps";
  const std::string owner = OwnerName(store);
  // Dump files are written into a staging folder of this process and moved
  // to their places (dumps/import-<content id>/) only at the end of the
  // transaction, just before it commits: an import interrupted before then
  // leaves a staging folder, one killed between the move and the commit
  // leaves folders no stored cell points into; the next import of this
  // database sweeps both.
  const fs::path staging = dumps / (kStagingPrefix + std::to_string(::getpid()));
  std::vector<fs::path> moved;  // final folders, removed again if the commit fails
  const auto remove_files = [&] {
    std::error_code ec;
    fs::remove_all(staging, ec);
    for (const fs::path& p : moved) fs::remove_all(p, ec);
    moved.clear();
  };
  int swept = 0;
  try {
    store::WithWriteTransaction(store.connection(), [&] {
      // A retried transaction writes its files again.
      remove_files();
      result = ImportResult{};
      // Counted over every attempt: a retry finds nothing left to sweep.
      swept += SweepImportOrphans(store, dumps);
      result.orphans_swept = swept;
      StoredIds stored(store, options.root);
      std::vector<fs::path> written;
      std::vector<std::string> folders;
      for (const harness::RunResult& run : runs) {
        const std::string id = ContentId(run);
        if (stored.Find(run.started_at, id) != 0) {
          ++result.already_present;
          continue;
        }
        harness::RunResult copy = run;
        // Another database in this folder may hold the same run's dumps
        // under this name: its folder is its own, so this one takes another.
        std::string folder = kImportPrefix + id;
        for (int n = 2; fs::exists(dumps / folder) || fs::exists(staging / folder); ++n)
          folder = kImportPrefix + id + "-" + std::to_string(n);
        const size_t before = written.size();
        const bool has_rows = std::any_of(copy.cells.begin(), copy.cells.end(), [](const auto& c) {
          return c.dump && !c.dump->values.empty();
        });
        if (has_rows) MarkOwner(staging, owner);  // before its first file
        WriteDumps(copy, staging / folder, options.root, written);
        if (written.size() > before) {
          folders.push_back(folder);
          MarkOwner(staging / folder, owner);
          // The cells point where the files will be once moved.
          for (harness::CellResult& cell : copy.cells) {
            if (cell.dump_path.empty()) continue;
            const fs::path name = fs::path(cell.dump_path).filename();
            cell.dump_path =
                options.root.empty()
                    ? (dumps / folder / name).lexically_normal().string()
                    : store::StoredDumpPath((dumps / folder / name).string(), options.root);
          }
        }
        result.added.push_back(store.InsertRun(copy));
        // An equal run later in the bundles is then already present.
        stored.Add(run.started_at, id, result.added.back());
      }
      result.dumps_written = static_cast<int>(written.size());
      for (const std::string& folder : folders) {
        fs::rename(staging / folder, dumps / folder);
        moved.push_back(dumps / folder);
      }
      std::error_code ec;
      fs::remove_all(staging, ec);
    });
  } catch (...) {
    // Nothing was stored, so no file may stay behind pointing nowhere.
    remove_files();
    throw;
  }
  return result;
}

}  // namespace samebits::exchange
