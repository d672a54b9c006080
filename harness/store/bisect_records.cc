// Bisect sessions in the store (bisect_records.h).
#include "harness/store/bisect_records.h"

namespace samebits::store {

int64_t StartBisect(Store& store, const BisectRecord& b) {
  Connection& db = store.connection();
  int64_t id = 0;
  WithWriteTransaction(db, [&] {
    id = db.Prepare(
               "INSERT INTO bisects (started_at, repository, good, bad, "
               "command, status) "
               "VALUES (?, ?, ?, ?, ?, ?) RETURNING id")
             .Bind(1, b.started_at)
             .Bind(2, b.repository)
             .Bind(3, b.good)
             .Bind(4, b.bad)
             .Bind(5, b.command)
             .Bind(6, b.status)
             .RunReturningId();
  });
  return id;
}

void AddBisectStep(Store& store, int64_t id, const BisectStepRecord& s) {
  Connection& db = store.connection();
  WithWriteTransaction(db, [&] {
    Statement next = db.Prepare("SELECT count(*) FROM bisect_steps WHERE bisect_id = ?");
    next.Bind(1, id).Step();
    const int64_t seq = next.Int(0);
    Statement insert = db.Prepare(
        "INSERT INTO bisect_steps (bisect_id, seq, revision, tree, "
        "role, verdict, run_id, note, build_ms, run_ms, judge_ms) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert.Bind(1, id).Bind(2, seq).Bind(3, s.revision).Bind(4, s.tree).Bind(5, s.role);
    insert.Bind(6, s.verdict);
    if (s.run_id > 0) {
      insert.Bind(7, s.run_id);
    } else {
      insert.BindNull(7);
    }
    insert.Bind(8, s.note).Bind(9, s.build_ms).Bind(10, s.run_ms).Bind(11, s.judge_ms).Run();
  });
}

void FinishBisect(Store& store, int64_t id, const std::string& status, const std::string& culprit,
                  const std::string& summary, double elapsed_ms) {
  Connection& db = store.connection();
  WithWriteTransaction(db, [&] {
    db.Prepare(
          "UPDATE bisects SET status = ?, culprit = ?, summary = ?, "
          "elapsed_ms = ? WHERE id = ?")
        .Bind(1, status)
        .Bind(2, culprit)
        .Bind(3, summary)
        .Bind(4, elapsed_ms)
        .Bind(5, id)
        .Run();
  });
}

std::vector<BisectStepRecord> LoadBisectSteps(Store& store, int64_t id) {
  Statement select = store.connection().Prepare(
      "SELECT revision, tree, role, verdict, run_id, note, build_ms, run_ms, judge_ms "
      "FROM bisect_steps "
      "WHERE bisect_id = ? "
      "ORDER BY seq");
  select.Bind(1, id);
  std::vector<BisectStepRecord> out;
  while (select.Step()) {
    BisectStepRecord s;
    s.revision = select.Text(0);
    s.tree = select.Text(1);
    s.role = select.Text(2);
    s.verdict = select.Text(3);
    s.run_id = select.IsNull(4) ? 0 : select.Int(4);
    s.note = select.Text(5);
    s.build_ms = select.Double(6);
    s.run_ms = select.Double(7);
    s.judge_ms = select.Double(8);
    out.push_back(std::move(s));
  }
  return out;
}

int64_t LatestDivergingRun(Store& store) {
  Statement select = store.connection().Prepare(
      "SELECT max(r.id) FROM runs r WHERE EXISTS (SELECT 1 FROM divergences d "
      "WHERE d.run_id = "
      "r.id) AND NOT EXISTS (SELECT 1 FROM bisect_steps b WHERE b.run_id = "
      "r.id)");
  if (!select.Step() || select.IsNull(0)) return 0;
  return select.Int(0);
}

std::optional<std::string> LatestAgreeingRevision(Store& store) {
  Statement select = store.connection().Prepare(
      "SELECT b.revision FROM runs r JOIN cells c ON c.run_id = r.id JOIN "
      "builds b ON b.id = "
      "c.build_id WHERE r.status = 'PASS' AND r.diagnosis_kind = 'all-agree' "
      "AND b.revision != '' "
      "AND b.dirty = 0 AND NOT EXISTS (SELECT 1 FROM bisect_steps s WHERE "
      "s.run_id = r.id) "
      "ORDER BY r.id DESC LIMIT 1");
  if (!select.Step()) return std::nullopt;
  return select.Text(0);
}

}  // namespace samebits::store
