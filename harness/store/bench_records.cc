// Bench results in the store (bench_records.h).
#include "harness/store/bench_records.h"

#include "engine/numerics/hash.h"

namespace samebits::store {

int64_t SaveBench(Store& store, const harness::BenchRecord& b) {
  Connection& db = store.connection();
  int64_t id = 0;
  WithWriteTransaction(db, [&] {
    Statement insert = db.Prepare(
        "INSERT INTO benches (started_at, command, machine, "
        "preflight, forced, a_label, a_engine, "
        "a_revision, a_config, b_label, b_engine, b_revision, "
        "b_config, checkpoint, scenario, "
        "median_a_ms, median_b_ms, ratio, ratio_low, ratio_high, "
        "pairs, identical, "
        "identity_detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?) RETURNING id");
    insert.Bind(1, b.started_at).Bind(2, b.command).Bind(3, b.machine).Bind(4, b.preflight);
    insert.Bind(5, int64_t{b.forced ? 1 : 0});
    insert.Bind(6, b.a.label).Bind(7, b.a.engine).Bind(8, b.a.revision);
    insert.Bind(9, b.a.cell.config.name);
    insert.Bind(10, b.b.label).Bind(11, b.b.engine).Bind(12, b.b.revision);
    insert.Bind(13, b.b.cell.config.name);
    insert.Bind(14, b.a.cell.checkpoint).Bind(15, b.a.cell.scenario);
    insert.Bind(16, b.summary.median_a_ms).Bind(17, b.summary.median_b_ms);
    insert.Bind(18, b.summary.ratio.ratio);
    if (b.summary.ratio.low) {
      insert.Bind(19, *b.summary.ratio.low).Bind(20, *b.summary.ratio.high);
    } else {
      insert.BindNull(19).BindNull(20);
    }
    insert.Bind(21, int64_t{b.summary.ratio.pairs});
    insert.Bind(22, int64_t{b.summary.identical ? 1 : 0}).Bind(23, b.summary.identity_detail);
    id = insert.RunReturningId();
    Statement sample = db.Prepare(
        "INSERT INTO bench_samples (bench_id, seq, side, round, ok, failure, "
        "elapsed_ms, wall_ms, "
        "steps, last_xxh3_64) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (size_t i = 0; i < b.samples.size(); ++i) {
      const harness::BenchSample& s = b.samples[i];
      sample.Reset();
      sample.Bind(1, id).Bind(2, static_cast<int64_t>(i)).Bind(3, std::string(1, s.side));
      sample.Bind(4, int64_t{s.round}).Bind(5, int64_t{s.ok ? 1 : 0}).Bind(6, s.failure);
      sample.Bind(7, s.elapsed_ms).Bind(8, s.wall_ms).Bind(9, int64_t{s.steps});
      sample.Bind(10,
                  s.outputs.empty() ? std::string() : numerics::Hex16(s.outputs.back().xxh3_64));
      sample.Run();
    }
  });
  return id;
}

std::vector<harness::BenchSample> LoadBenchSamples(Store& store, int64_t id) {
  Statement select = store.connection().Prepare(
      "SELECT side, round, ok, failure, elapsed_ms, "
      "wall_ms, steps FROM bench_samples WHERE "
      "bench_id = ? ORDER BY seq");
  select.Bind(1, id);
  std::vector<harness::BenchSample> out;
  while (select.Step()) {
    harness::BenchSample s;
    const std::string side = select.Text(0);
    s.side = side.empty() ? '?' : side[0];
    s.round = static_cast<int>(select.Int(1));
    s.ok = select.Int(2) != 0;
    s.failure = select.Text(3);
    s.elapsed_ms = select.Double(4);
    s.wall_ms = select.Double(5);
    s.steps = static_cast<int>(select.Int(6));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace samebits::store
