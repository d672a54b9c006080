// What `samebits bisect` keeps in the store (SCHEMA.md, version 5): one row
// per bisect, one per step (a revision, its verdict and the run it made),
// and the questions bisect asks of earlier runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/store/store.h"

namespace samebits::store {

struct BisectRecord {
  std::string started_at, repository, good, bad, command;
  std::string status;  // running, found, ambiguous, failed
};

struct BisectStepRecord {
  std::string revision, tree;
  // good-end, bad-end, step, culprit-trace, parent-trace
  std::string role;
  std::string verdict;  // good, bad, skip ("" for the traces)
  int64_t run_id = 0;   // 0: no run was made (the revision did not build)
  std::string note;
  // Where the step's time went, in milliseconds; -1 where not measured (no
  // run when the revision did not build; steps stored before version 15).
  // build_ms is 0 for a revision whose build was cached.
  double build_ms = -1, run_ms = -1, judge_ms = -1;
};

// Returns the new bisect's id.
int64_t StartBisect(Store& store, const BisectRecord& bisect);

// Appends a step to bisect `id`.
void AddBisectStep(Store& store, int64_t id, const BisectStepRecord& step);

// Records how bisect `id` ended.
void FinishBisect(Store& store, int64_t id, const std::string& status, const std::string& culprit,
                  const std::string& summary, double elapsed_ms);

// Returns bisect `id`'s steps in order.
std::vector<BisectStepRecord> LoadBisectSteps(Store& store, int64_t id);

// Returns the newest run with divergences (a failing gate or run) that no
// bisect made, or 0.
int64_t LatestDivergingRun(Store& store);

// Returns the build revision of the newest run that passed (every
// configuration agreed and matched its references) and that no bisect made,
// as its cells' engines reported it; nullopt when there is none.
std::optional<std::string> LatestAgreeingRevision(Store& store);

}  // namespace samebits::store
