// A sharded gate's runs in the store (shard_records.h).
#include "harness/store/shard_records.h"

namespace samebits::store {

std::vector<harness::StoredShard> ShardsOf(Store& store, const std::string& group) {
  Statement select = store.connection().Prepare(
      "SELECT id, shard_index, shard_count, started_at, machine_name FROM runs "
      "WHERE shard_group = ?1 ORDER BY id");
  select.Bind(1, group);
  std::vector<harness::StoredShard> out;
  while (select.Step()) {
    out.push_back({select.Int(0), static_cast<int>(select.Int(1)), static_cast<int>(select.Int(2)),
                   select.Text(3), select.Text(4)});
  }
  return out;
}

std::vector<std::string> ShardGroups(Store& store, int limit) {
  Statement select = store.connection().Prepare(
      "SELECT shard_group FROM runs WHERE shard_group <> '' GROUP BY shard_group "
      "ORDER BY max(id) DESC LIMIT ?1");
  select.Bind(1, static_cast<int64_t>(limit));
  std::vector<std::string> out;
  while (select.Step()) out.push_back(select.Text(0));
  return out;
}

}  // namespace samebits::store
