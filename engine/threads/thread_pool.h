// A persistent pool of worker threads. The calling thread takes part as
// worker 0, so a pool of size 1 starts no thread at all. Workers spin
// briefly between dispatches (decode issues several per layer) and then
// sleep. The pool only decides *who* computes a task, never *how*: every
// task computes whole outputs in the contract's order, so results never
// depend on the pool's size or on which thread ran which task.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace samebits::threads {

class ThreadPool {
 public:
  // `n_threads` >= 1, counting the calling thread.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Returns the number of threads, the caller's included.
  int size() const;

  // Runs `task(i, thread)` for every i in [0, n_tasks) across the pool and
  // returns when all have finished. `thread` is in [0, size()), for
  // per-thread scratch buffers. Not reentrant: a task must not call back in.
  // Tasks are claimed dynamically, so which thread runs which task varies
  // from run to run; results must not depend on it. If a task throws, tasks
  // not yet started are skipped and the first exception is rethrown here,
  // after every running task has finished; the pool stays usable.
  void ParallelFor(int64_t n_tasks, const std::function<void(int64_t task, int thread)>& task);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The most threads the engine runs with, whichever way they are asked for
// (--threads, --threads-list, SAMEBITS_THREADS): far above any machine this
// runs on, small enough that a typo is caught. engines/samebits.json's
// threads axis has the same range (a test holds them equal).
inline constexpr int kMaxThreads = 1024;

// Returns the default thread count: SAMEBITS_THREADS when set to an integer
// from 1 to kMaxThreads, else one per online core (at least 1). Any other non-empty
// value is ignored with a warning on stderr that names it.
int DefaultThreadCount();

}  // namespace samebits::threads
