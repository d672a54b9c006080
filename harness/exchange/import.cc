// Adding bundled runs to a store (import.h).
#include "harness/exchange/import.h"

#include <filesystem>
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

}  // namespace

int64_t FindStoredRun(store::Store& store, const std::string& started_at,
                      const std::string& content_id, const std::string& dump_base_dir) {
  return StoredIds(store, dump_base_dir).Find(started_at, content_id);
}

ImportResult ImportRuns(store::Store& store, const std::vector<harness::RunResult>& runs,
                        const ImportOptions& options) {
  ImportResult result;
  const fs::path dumps = fs::absolute(store.connection().path()).parent_path() / "dumps";
  std::vector<fs::path> written;
  try {
    store::WithWriteTransaction(store.connection(), [&] {
      result = ImportResult{};
      // A retried transaction writes its files again.
      for (const fs::path& p : written) {
        std::error_code ec;
        fs::remove(p, ec);
      }
      written.clear();
      StoredIds stored(store, options.root);
      for (const harness::RunResult& run : runs) {
        const std::string id = ContentId(run);
        if (stored.Find(run.started_at, id) != 0) {
          ++result.already_present;
          continue;
        }
        harness::RunResult copy = run;
        WriteDumps(copy, dumps / ("import-" + id), options.root, written);
        result.added.push_back(store.InsertRun(copy));
        // An equal run later in the bundles is then already present.
        stored.Add(run.started_at, id, result.added.back());
      }
      result.dumps_written = static_cast<int>(written.size());
    });
  } catch (...) {
    // Nothing was stored, so no file may stay behind pointing nowhere.
    for (const fs::path& p : written) {
      std::error_code ec;
      fs::remove(p, ec);
      fs::remove(p.parent_path(), ec);  // only when empty
    }
    throw;
  }
  return result;
}

}  // namespace samebits::exchange
