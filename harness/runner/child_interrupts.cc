// Interrupts and the engines running now (child_interrupts.h).
#include "harness/runner/child_interrupts.h"

#include <signal.h>
#include <string.h>

#include <atomic>
#include <mutex>

#include "harness/runner/child.h"

namespace samebits::runner {
namespace {

// The process groups of the engines running now, so that a harness
// interrupted by SIGINT or SIGTERM (Ctrl-C, a CI job's cancel) takes them
// with it: they lead groups of their own, so the terminal's signal does
// not reach them (their supervisors then collect the rest). Lock-free
// slots, because a signal handler may not lock.
constexpr int kSlots = 1024;
std::atomic<pid_t> g_running[kSlots];

// Deferred interrupts (child.h): whether they are, the first signal
// received, and how many clean-ups may still start children.
std::atomic<bool> g_defer_interrupts{false};
std::atomic<int> g_interrupt_signal{0};
std::atomic<int> g_cleanups{0};

void KillChildrenAndDie(int sig) {
  for (std::atomic<pid_t>& slot : g_running) {
    const pid_t pid = slot.load();
    if (pid > 0) ::kill(-pid, SIGKILL);
  }
  int none = 0;
  if (g_defer_interrupts.load() && g_interrupt_signal.compare_exchange_strong(none, sig)) return;
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void InstallInterruptHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      ::sigaction(sig, nullptr, &old);
      if (old.sa_handler == SIG_IGN) continue;  // e.g. nohup: keep ignoring
      struct sigaction action {};
      action.sa_handler = KillChildrenAndDie;
      sigemptyset(&action.sa_mask);
      ::sigaction(sig, &action, nullptr);
    }
  });
}

}  // namespace

int TrackEngineGroup(pid_t pid) {
  for (int i = 0; i < kSlots; ++i) {
    pid_t expected = 0;
    if (g_running[i].compare_exchange_strong(expected, pid)) return i;
  }
  return -1;  // More than kSlots children at once: untracked, still killed on timeout.
}

void UntrackEngineGroup(int slot) {
  if (slot >= 0) g_running[slot].store(0);
}

std::string StartRefusal() {
  InstallInterruptHandlers();
  if (InterruptSignal() != 0 && g_cleanups.load() == 0) {
    return "not started: the command was interrupted";
  }
  return "";
}

Interrupted::Interrupted(int signal)
    : std::runtime_error(std::string("interrupted by ") +
                         (::sigabbrev_np(signal) != nullptr
                              ? std::string("SIG") + ::sigabbrev_np(signal)
                              : std::to_string(signal))),
      signal_(signal) {}

void DeferInterrupts() {
  g_defer_interrupts.store(true);
  InstallInterruptHandlers();
}

int InterruptSignal() {
  return g_interrupt_signal.load();
}

void ThrowIfInterrupted() {
  if (const int sig = InterruptSignal(); sig != 0) throw Interrupted(sig);
}

InterruptCleanup::InterruptCleanup() {
  ++g_cleanups;
}

InterruptCleanup::~InterruptCleanup() {
  --g_cleanups;
}

}  // namespace samebits::runner
