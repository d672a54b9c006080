// What both backends share (connection.h).
#include "harness/store/connection.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>
#include <type_traits>

namespace samebits::store {

int64_t Statement::RunReturningId() {
  if (!Step()) throw StoreError("an INSERT ... RETURNING id returned no row");
  const int64_t id = Int(0);
  while (Step()) {
  }
  Reset();
  return id;
}

void BindValue(Statement& s, int index, const BoundValue& value) {
  std::visit(
      [&](const auto& v) {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
          s.BindNull(index);
        } else {
          s.Bind(index, v);
        }
      },
      value);
}

void WaitBeforeRetry(int attempt) {
  // Writers that collided back off apart: 10 ms doubling to 1 s, jittered.
  thread_local std::minstd_rand random(std::random_device{}());
  const int ceiling = std::min(1000, 10 << std::min(attempt, 7));
  std::this_thread::sleep_for(
      std::chrono::milliseconds(ceiling / 2 + random() % (ceiling / 2 + 1)));
}

}  // namespace samebits::store
