// Adding bundled runs to a store (import.h).
#include "harness/exchange/import.h"

#include <set>

#include "harness/exchange/bundle.h"

namespace samebits::exchange {

int64_t FindStoredRun(store::Store& store, const std::string& started_at,
                      const std::string& content_id) {
  // Only runs that started at the same instant can be equal, so only those
  // are loaded and hashed (the store records no content id).
  std::vector<int64_t> candidates;
  store::Statement select =
      store.connection().Prepare("SELECT id FROM runs WHERE started_at = ?1 ORDER BY id");
  select.Bind(1, started_at);
  while (select.Step()) candidates.push_back(select.Int(0));
  for (int64_t id : candidates) {
    harness::RunResult stored = store.LoadRun(id);
    // Dump paths are left out of bundles, so they do not count.
    for (harness::CellResult& c : stored.cells) c.dump_path.clear();
    if (ContentId(stored) == content_id) return id;
  }
  return 0;
}

ImportResult ImportRuns(store::Store& store, const std::vector<harness::RunResult>& runs) {
  ImportResult result;
  store::WithWriteTransaction(store.connection(), [&] {
    result = ImportResult{};
    std::set<std::string> seen;
    for (const harness::RunResult& run : runs) {
      const std::string id = ContentId(run);
      if (!seen.insert(id).second || FindStoredRun(store, run.started_at, id) != 0) {
        ++result.already_present;
        continue;
      }
      result.added.push_back(store.InsertRun(run));
    }
  });
  return result;
}

}  // namespace samebits::exchange
