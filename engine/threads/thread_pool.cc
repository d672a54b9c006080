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

struct ThreadPool::Impl {
  int n_threads = 1;
  std::vector<std::thread> workers;

  // The current dispatch. Written by the caller before `generation` is
  // bumped, read by workers after they observe the new generation.
  const std::function<void(int64_t, int)>* task = nullptr;
  int64_t n_tasks = 0;
  std::atomic<int64_t> next_task{0};
  // Workers (not counting the caller) still inside the current dispatch.
  std::atomic<int> busy_workers{0};
  std::atomic<uint64_t> generation{0};
  std::atomic<bool> stopping{false};

  // Sleeping workers wait on `wake`; `sleepers` counts them so that a
  // dispatch only takes the mutex when someone actually sleeps. Both sides
  // use sequentially consistent operations (a worker increments `sleepers`
  // and then re-reads `generation`; the caller bumps `generation` and then
  // reads `sleepers`), so one of them always sees the other: no lost wake-up.
  std::mutex mutex;
  std::condition_variable wake;
  std::atomic<int> sleepers{0};

  // The first exception a task threw in the current dispatch.
  std::mutex error_mutex;
  std::exception_ptr first_error;
  std::atomic<bool> failed{false};

  // Claims and runs tasks until none is left. After a failure, remaining
  // tasks are skipped so that the caller learns of it quickly.
  void RunTasks(int thread) {
    while (!failed.load(std::memory_order_relaxed)) {
      const int64_t i = next_task.fetch_add(1, std::memory_order_relaxed);
      if (i >= n_tasks) return;
      try {
        (*task)(i, thread);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
  }

  void WorkerLoop(int thread) {
    uint64_t seen = 0;
    while (true) {
      const auto changed = [&] { return generation.load(std::memory_order_acquire) != seen; };
      if (!SpinUntil(changed)) {
        std::unique_lock<std::mutex> lock(mutex);
        sleepers.fetch_add(1);
        wake.wait(lock, [&] { return generation.load() != seen; });
        sleepers.fetch_sub(1);
      }
      seen = generation.load(std::memory_order_acquire);
      if (stopping.load(std::memory_order_acquire)) return;
      RunTasks(thread);
      busy_workers.fetch_sub(1, std::memory_order_release);
    }
  }

  // Publishes a new generation and wakes sleeping workers.
  void Publish() {
    generation.fetch_add(1);
    if (sleepers.load() > 0) {
      // Taking the mutex orders this notify after any worker's predicate
      // check that missed the new generation.
      std::lock_guard<std::mutex> lock(mutex);
      wake.notify_all();
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
  impl_->stopping.store(true);
  impl_->Publish();
  for (std::thread& worker : impl_->workers) worker.join();
}

int ThreadPool::size() const { return impl_->n_threads; }

void ThreadPool::ParallelFor(int64_t n_tasks, const std::function<void(int64_t task, int thread)>& task) {
  if (n_tasks <= 0) return;
  Impl& p = *impl_;
  // One task or one thread: run inline, without touching the workers.
  if (p.n_threads == 1 || n_tasks == 1) {
    for (int64_t i = 0; i < n_tasks; ++i) task(i, 0);
    return;
  }
  p.task = &task;
  p.n_tasks = n_tasks;
  p.next_task.store(0, std::memory_order_relaxed);
  p.first_error = nullptr;
  p.failed.store(false, std::memory_order_relaxed);
  p.busy_workers.store(p.n_threads - 1, std::memory_order_relaxed);
  p.Publish();
  p.RunTasks(0);
  // Wait for every worker to leave the dispatch (they may still be running
  // their last task). Spin first, then yield: the wait is normally short.
  const auto all_done = [&] { return p.busy_workers.load(std::memory_order_acquire) == 0; };
  if (!SpinUntil(all_done)) {
    while (!all_done()) std::this_thread::yield();
  }
  if (p.failed.load(std::memory_order_relaxed)) {
    std::exception_ptr error = p.first_error;
    p.first_error = nullptr;
    std::rethrow_exception(error);
  }
}

int DefaultThreadCount() {
  if (const char* env = std::getenv("SAMEBITS_THREADS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const long value = std::strtol(env, &end, 10);
    if (*end == '\0' && value >= 1 && value <= 4096) return static_cast<int>(value);
    std::fprintf(stderr,
                 "samebits: ignoring SAMEBITS_THREADS=\"%s\" (expected an integer from 1 to 4096); "
                 "using one thread per core\n",
                 env);
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

}  // namespace samebits::threads
