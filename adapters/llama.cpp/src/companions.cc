#include "companions.h"

#include <algorithm>

#include "engine/numerics/splitmix.h"
#include "engine/run/scenario.h"
#include "greedy.h"

namespace samebits::llamacpp {
namespace {

constexpr int kMaxPrompt = 24;

}  // namespace

Companions::Companions(int count, Schedule schedule, uint64_t seed, int vocab_size)
    : schedule_(schedule), seed_(seed), vocab_size_(vocab_size) {
  for (int k = 1; k <= count; ++k) {
    Slot slot;
    slot.sequence = k;
    slot.join = schedule == Schedule::kTogether ? 0 : k;
    slot.leave = schedule == Schedule::kTogether ? -1 : slot.join + 2 + 2 * k;
    slots_.push_back(slot);
  }
}

int Companions::MaxPositions(int calls) {
  return kMaxPrompt + calls;
}

std::vector<BatchRow> Companions::Prompt(const Slot& slot) const {
  const uint64_t seed =
      seed_ + 1000 * static_cast<uint64_t>(slot.sequence) + static_cast<uint64_t>(slot.generation);
  run::RandomTokenSpec spec;
  spec.length = 1 + static_cast<int>(numerics::SplitMix64At(seed, 1u << 20) % kMaxPrompt);
  spec.seed = seed;
  spec.first_token = std::min(3, vocab_size_ - 1);
  std::vector<BatchRow> rows;
  for (const int32_t token : run::RandomTokens(spec, vocab_size_)) {
    rows.push_back({token, static_cast<llama_pos>(rows.size()), slot.sequence, false});
  }
  rows.back().output = true;
  return rows;
}

std::vector<BatchRow> Companions::Rows(int call, const std::vector<BatchRow>& own,
                                       LlamaSession& session, int* own_first) {
  // Each active companion's rows in this call, in slot order.
  std::vector<std::vector<BatchRow>> theirs;
  for (Slot& slot : slots_) {
    slot.output_row = -1;
    if (slot.active && call == slot.leave) {
      // The companion leaves; after a gap of its sequence id in calls a new
      // one takes the slot.
      session.RemoveSequence(slot.sequence);
      slot.active = false;
      slot.generation += 1;
      slot.join = call + slot.sequence;
      slot.leave = slot.join + 2 + 2 * slot.sequence;
    }
    if (!slot.active && call == slot.join) {
      slot.active = true;
      slot.position = 0;
      theirs.push_back(Prompt(slot));
    } else if (slot.active) {
      theirs.push_back({{slot.next, slot.position, slot.sequence, true}});
    } else {
      continue;
    }
    slot.position += static_cast<int>(theirs.back().size());
  }
  // Where the scenario's rows go among them.
  const size_t place =
      schedule_ == Schedule::kTogether ? 0 : static_cast<size_t>(call) % (theirs.size() + 1);
  std::vector<BatchRow> rows;
  size_t t = 0;
  for (size_t group = 0; group <= theirs.size(); ++group) {
    if (group == place) {
      *own_first = static_cast<int>(rows.size());
      rows.insert(rows.end(), own.begin(), own.end());
      continue;
    }
    const std::vector<BatchRow>& g = theirs[t++];
    rows.insert(rows.end(), g.begin(), g.end());
    // The companion's output row is its last.
    for (Slot& slot : slots_) {
      if (slot.active && slot.sequence == g.front().sequence) {
        slot.output_row = static_cast<int>(rows.size()) - 1;
      }
    }
  }
  return rows;
}

void Companions::After(const LlamaSession& session) {
  for (Slot& slot : slots_) {
    if (slot.output_row >= 0) slot.next = Greedy(session.Logits(slot.output_row));
  }
}

}  // namespace samebits::llamacpp
