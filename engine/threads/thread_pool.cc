#include "engine/threads/thread_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace samebits::threads {
namespace {

// How long an idle worker (or the caller waiting for the workers) spins
// before it sleeps. Decode issues several dispatches per layer a few
// microseconds apart; waking a sleeping thread costs tens of microseconds,
// so a short spin pays for itself, and a bounded one does not burn a core
// while the engine is idle.
constexpr auto kSpinDuration = std::chrono::microseconds(50);
// The clock is read once per this many pause instructions.
constexpr int kSpinsPerClockRead = 64;

// Tells the CPU this is a spin-wait loop (saves power, frees the sibling
// hyperthread).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spins until `done()` or until kSpinDuration has passed; returns done().
template <typename Done>
bool SpinUntil(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinDuration;
  while (true) {
    for (int i = 0; i < kSpinsPerClockRead; ++i) {
      if (done()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

}  // namespace

// Dispatch protocol. `claim` packs a generation (high 32 bits) and the next
// unclaimed task index (low 32 bits). An even generation is an open
// dispatch; an odd one means "closed, being prepared". A thread claims a
// task with a compare-and-swap on the whole word, so the claim only succeeds
// if no generation change happened since the thread read the dispatch's
// task function and size. The caller closes the current generation before
// it rewrites them, so a worker that wakes up late can never claim a task of
// one dispatch with the size or function of another. The caller waits for
// `done` to reach the task count, not for the workers to check in, so a
// descheduled worker (2 cores shared by many processes) does not hold up a
// dispatch that the other threads have finished.
struct ThreadPool::Impl {
  int n_threads = 1;
  std::vector<std::thread> workers;

  std::atomic<uint64_t> claim{0};
  std::atomic<const std::function<void(int64_t, int)>*> task{nullptr};
  std::atomic<int64_t> n_tasks{0};
  std::atomic<int64_t> offset{0};  // added to the task index (dispatches over 2^31 tasks)
  std::atomic<int64_t> done{0};
  std::atomic<bool> stopping{false};

  // Sleeping workers wait on `wake`; `sleepers` counts them so that a
  // dispatch only takes the mutex when someone actually sleeps. Both sides
  // use sequentially consistent operations (a worker increments `sleepers`
  // and then re-reads `claim`; the caller publishes `claim` and then reads
  // `sleepers`), so one of them always sees the other: no lost wake-up.
  std::mutex mutex;
  std::condition_variable wake;
  std::atomic<int> sleepers{0};

  // The first exception a task threw in the current dispatch.
  std::mutex error_mutex;
  std::exception_ptr first_error;
  std::atomic<bool> failed{false};

  static uint32_t Generation(uint64_t c) { return static_cast<uint32_t>(c >> 32); }
  // Returns true when `c` belongs to an open dispatch other than `seen`.
  static bool IsNewDispatch(uint64_t c, uint32_t seen) {
    return Generation(c) != seen && (Generation(c) & 1u) == 0;
  }

  // Claims and runs tasks of generation `gen` until none is left. After a
  // failure the remaining tasks are counted as done without running, so
  // that the caller learns of it quickly.
  void RunTasks(uint32_t gen, int thread) {
    uint64_t c = claim.load();
    while (true) {
      if (Generation(c) != gen) return;
      const auto* fn = task.load();
      const int64_t n = n_tasks.load();
      const int64_t base = offset.load();
      const int64_t i = static_cast<int64_t>(c & 0xffffffffu);
      if (i >= n) return;
      if (!claim.compare_exchange_weak(c, c + 1)) continue;  // `c` reloaded
      if (!failed.load(std::memory_order_relaxed)) {
        try {
          (*fn)(base + i, thread);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!first_error) first_error = std::current_exception();
          failed.store(true);
        }
      }
      done.fetch_add(1, std::memory_order_release);
      c = claim.load();
    }
  }

  void WorkerLoop(int thread) {
    uint32_t seen = 0;
    while (true) {
      const auto changed = [&] { return IsNewDispatch(claim.load(), seen); };
      if (!SpinUntil(changed)) {
        std::unique_lock<std::mutex> lock(mutex);
        sleepers.fetch_add(1);
        wake.wait(lock, changed);
        sleepers.fetch_sub(1);
      }
      // The generation may have moved on again (even to a closed one);
      // RunTasks checks it on every claim.
      const uint64_t c = claim.load();
      seen = Generation(c) & ~1u;
      if (stopping.load()) return;
      RunTasks(seen, thread);
    }
  }

  // Closes the current dispatch: every claim that read the old word fails.
  void Close() { claim.store(static_cast<uint64_t>(Generation(claim.load()) | 1u) << 32); }

  // Opens the next even generation with task index 0 (after Close and after
  // the dispatch's fields are written) and wakes sleepers. Returns it.
  uint32_t Publish() {
    const uint32_t gen = Generation(claim.load()) + 1;
    claim.store(static_cast<uint64_t>(gen) << 32);
    if (sleepers.load() > 0) {
      // Taking the mutex orders this notify after any worker's predicate
      // check that missed the new generation.
      std::lock_guard<std::mutex> lock(mutex);
      wake.notify_all();
    }
    return gen;
  }

  // Runs tasks [base, base + count) with count < 2^31 across the pool.
  void Dispatch(int64_t base, int64_t count, const std::function<void(int64_t, int)>& fn) {
    Close();
    task.store(&fn);
    n_tasks.store(count);
    offset.store(base);
    done.store(0);
    const uint32_t gen = Publish();
    RunTasks(gen, 0);
    // Wait for tasks still running on workers: spin first (they are
    // normally short), then yield the core.
    const auto all_done = [&] { return done.load(std::memory_order_acquire) == count; };
    if (!SpinUntil(all_done)) {
      while (!all_done()) std::this_thread::yield();
    }
  }
};

ThreadPool::ThreadPool(int n_threads) : impl_(std::make_unique<Impl>()) {
  impl_->n_threads = n_threads < 1 ? 1 : n_threads;
  impl_->workers.reserve(impl_->n_threads - 1);
  for (int t = 1; t < impl_->n_threads; ++t) {
    impl_->workers.emplace_back([impl = impl_.get(), t] { impl->WorkerLoop(t); });
  }
}

ThreadPool::~ThreadPool() {
  impl_->Close();
  impl_->stopping.store(true);
  impl_->Publish();
  for (std::thread& worker : impl_->workers) worker.join();
}

int ThreadPool::size() const {
  return impl_->n_threads;
}

void ThreadPool::ParallelFor(int64_t n_tasks,
                             const std::function<void(int64_t task, int thread)>& task) {
  if (n_tasks <= 0) return;
  Impl& p = *impl_;
  // One task or one thread: run inline, without touching the workers.
  if (p.n_threads == 1 || n_tasks == 1) {
    for (int64_t i = 0; i < n_tasks; ++i) task(i, 0);
    return;
  }
  p.first_error = nullptr;
  p.failed.store(false);
  // The claim counter has 32 bits: split absurdly large ranges.
  constexpr int64_t kMaxPerDispatch = int64_t{1} << 31;
  for (int64_t base = 0; base < n_tasks && !p.failed.load(); base += kMaxPerDispatch) {
    const int64_t count = n_tasks - base < kMaxPerDispatch ? n_tasks - base : kMaxPerDispatch;
    p.Dispatch(base, count, task);
  }
  if (p.failed.load()) {
    std::exception_ptr error = p.first_error;
    p.first_error = nullptr;
    std::rethrow_exception(error);
  }
}

int DefaultThreadCount() {
  if (const char* env = std::getenv("SAMEBITS_THREADS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const long value = std::strtol(env, &end, 10);
    if (*end == '\0' && value >= 1 && value <= kMaxThreads) return static_cast<int>(value);
    std::fprintf(stderr,
                 "samebits: ignoring SAMEBITS_THREADS=\"%s\" (expected an integer from 1 to %d); "
                 "using one thread per core\n",
                 env, kMaxThreads);
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

}  // namespace samebits::threads
