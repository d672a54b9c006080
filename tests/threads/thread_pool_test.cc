// The thread pool decides who runs a task, never what it computes: every
// task must run exactly once, whatever the pool size, and a task's
// exception must reach the caller.
#include "engine/threads/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace samebits::threads {
namespace {

TEST(ThreadPool, SizeCountsTheCaller) {
  for (int n = 1; n <= 4; ++n) EXPECT_EQ(ThreadPool(n).size(), n);
}

TEST(ThreadPool, EveryTaskRunsExactlyOnce) {
  for (int threads = 1; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 3, 7, 64, 1000, 10007}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
      std::vector<std::atomic<int>> per_thread(static_cast<size_t>(threads));
      std::atomic<bool> bad_thread{false};
      pool.ParallelFor(n, [&](int64_t task, int thread) {
        if (thread < 0 || thread >= threads) {
          bad_thread = true;
          return;
        }
        runs[static_cast<size_t>(task)].fetch_add(1);
        per_thread[static_cast<size_t>(thread)].fetch_add(1);
      });
      EXPECT_FALSE(bad_thread);
      int64_t total = 0;
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(runs[static_cast<size_t>(i)].load(), 1)
            << "task " << i << " of " << n << ", " << threads << " threads";
      }
      for (auto& c : per_thread) total += c.load();
      EXPECT_EQ(total, n);
    }
  }
}

TEST(ThreadPool, ResultsDoNotDependOnThePool) {
  // Each task writes one whole output; the buffer is identical for any size.
  std::vector<float> want(513);
  for (size_t i = 0; i < want.size(); ++i)
    want[i] = static_cast<float>(i) * 0.25f + 1.0f / (1.0f + i);
  for (int threads = 1; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    std::vector<float> got(want.size(), -1.0f);
    pool.ParallelFor(static_cast<int64_t>(got.size()), [&](int64_t i, int) {
      got[static_cast<size_t>(i)] = static_cast<float>(i) * 0.25f + 1.0f / (1.0f + i);
    });
    EXPECT_EQ(got, want) << threads;
  }
}

TEST(ThreadPool, ExceptionsPropagateToTheCaller) {
  for (int threads = 1; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    // Thrown from some task, possibly on a worker.
    EXPECT_THROW(pool.ParallelFor(100,
                                  [](int64_t task, int) {
                                    if (task == 57) throw std::runtime_error("task 57 failed");
                                  }),
                 std::runtime_error);
    // Every task throws: exactly one exception comes out, and its message is intact.
    try {
      pool.ParallelFor(50, [](int64_t, int) { throw std::invalid_argument("all fail"); });
      ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
      EXPECT_STREQ(e.what(), "all fail");
    }
    // A single task runs inline and still throws.
    EXPECT_THROW(pool.ParallelFor(1, [](int64_t, int) { throw std::logic_error("one"); }),
                 std::logic_error);
    // The pool stays usable after a failure.
    std::atomic<int64_t> sum{0};
    pool.ParallelFor(100, [&](int64_t task, int) { sum += task; });
    EXPECT_EQ(sum.load(), 4950);
  }
}

TEST(ThreadPool, ManySmallDispatchesFinishQuickly) {
  // Decode issues several dispatches per layer; 10^4 tiny ones must not
  // stall (a lost wake-up would hang here, a slow path would time out).
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    std::atomic<int64_t> count{0};
    const auto start = std::chrono::steady_clock::now();
    for (int rep = 0; rep < 10000; ++rep) {
      pool.ParallelFor(threads + rep % 3,
                       [&](int64_t, int) { count.fetch_add(1, std::memory_order_relaxed); });
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    int64_t want = 0;
    for (int rep = 0; rep < 10000; ++rep) want += threads + rep % 3;
    EXPECT_EQ(count.load(), want);
    EXPECT_LT(seconds, 20.0) << threads << " threads";
  }
}

TEST(ThreadPool, ManyDispatchesWithWorkersTakingPart) {
  // Tasks of a few microseconds, so that woken workers claim some of them
  // while the caller is still busy: exercises the claim protocol across
  // generations (late workers must not run a later dispatch's tasks with an
  // earlier dispatch's function).
  ThreadPool pool(3);
  std::vector<int64_t> sums(2000, 0);
  for (int rep = 0; rep < 2000; ++rep) {
    std::atomic<int64_t> sum{0};
    pool.ParallelFor(8, [&, rep](int64_t task, int) {
      volatile int64_t spin = 0;
      for (int k = 0; k < 300; ++k) spin = spin + k;
      sum.fetch_add(rep * 100 + task);
    });
    sums[static_cast<size_t>(rep)] = sum.load();
  }
  for (int rep = 0; rep < 2000; ++rep)
    ASSERT_EQ(sums[static_cast<size_t>(rep)], rep * 800 + 28) << rep;
}

TEST(ThreadPool, AllThreadsRunConcurrently) {
  // As many tasks as threads, each waiting until all are running: only
  // possible if every thread of the pool takes one. A timeout turns a
  // failure into an assertion instead of a hang.
  for (int threads = 2; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    std::atomic<int> arrived{0};
    std::atomic<bool> timed_out{false};
    pool.ParallelFor(threads, [&](int64_t, int) {
      arrived.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (arrived.load() < threads) {
        if (std::chrono::steady_clock::now() > deadline) {
          timed_out = true;
          return;
        }
        std::this_thread::yield();
      }
    });
    EXPECT_FALSE(timed_out) << threads << " threads";
  }
}

TEST(ThreadPool, DispatchAfterIdleWakesSleepingWorkers) {
  // Longer than the spin: the workers are asleep on the condition variable.
  ThreadPool pool(3);
  for (int rep = 0; rep < 3; ++rep) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::vector<std::atomic<int>> per_thread(3);
    pool.ParallelFor(3000, [&](int64_t, int thread) { per_thread[static_cast<size_t>(thread)]++; });
    EXPECT_EQ(per_thread[0] + per_thread[1] + per_thread[2], 3000);
  }
}

TEST(ThreadPool, DefaultThreadCountReadsTheEnvironment) {
  const char* saved = std::getenv("SAMEBITS_THREADS");
  const std::string saved_value = saved ? saved : "";
  setenv("SAMEBITS_THREADS", "3", 1);
  EXPECT_EQ(DefaultThreadCount(), 3);
  unsetenv("SAMEBITS_THREADS");
  const int cores = DefaultThreadCount();
  EXPECT_GE(cores, 1);
  // The limit is the one --threads holds to (kMaxThreads), not a second one.
  setenv("SAMEBITS_THREADS", std::to_string(kMaxThreads).c_str(), 1);
  EXPECT_EQ(DefaultThreadCount(), kMaxThreads);
  const std::string over = std::to_string(kMaxThreads + 1);
  for (const char* bad : {"0", "-2", "abc", "3x", "", over.c_str()}) {
    setenv("SAMEBITS_THREADS", bad, 1);
    EXPECT_EQ(DefaultThreadCount(), cores) << "\"" << bad << "\"";
  }
  if (saved)
    setenv("SAMEBITS_THREADS", saved_value.c_str(), 1);
  else
    unsetenv("SAMEBITS_THREADS");
}

}  // namespace
}  // namespace samebits::threads
