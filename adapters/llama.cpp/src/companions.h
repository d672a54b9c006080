// The companion sequences of a run with `--companions N`: each its own
// sequence id (1 .. N) in the same llama_decode calls as the scenario's
// sequence (id 0), in one unified K/V cache, as a server batches the
// requests of several users.
//
//   together   every companion prefills its prompt in the first call,
//              beside the scenario's prefill, then decodes one token
//              (greedy) in every later call; the scenario's rows come first.
//   staggered  companion k joins in call k, beside whatever the scenario
//              feeds then, decodes for 2 + 2k calls, leaves (its cells are
//              removed with llama_memory_seq_rm), and after a gap of k calls
//              a new companion takes its sequence id; the scenario's rows
//              move to another place among the companions' in every call.
//
// Prompts are 1 to 24 seeded random ids (scenarios/README.md's rule, seed
// `seed` + 1000 * sequence + generation), so a run is reproducible from
// its hello. Companions see every call of the scenario: its prefill and
// extend chunks, or each of their tokens when fed one by one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llama_session.h"

namespace samebits::llamacpp {

enum class Schedule : uint8_t { kTogether, kStaggered };

class Companions {
 public:
  Companions(int count, Schedule schedule, uint64_t seed, int vocab_size);

  // Returns the most positions a companion can hold after `calls` calls
  // (its longest prompt and a decode per call), for sizing the context.
  static int MaxPositions(int calls);

  // Returns the rows of call `call`: the scenario's `own` rows placed among
  // the companions' (whose prompts and decoded tokens it adds), and sets
  // `*own_first` to the index of the scenario's first row. Companions that
  // leave in this call are removed from `session`'s cache first.
  std::vector<BatchRow> Rows(int call, const std::vector<BatchRow>& own, LlamaSession& session,
                             int* own_first);
  // Reads the companions' logits after the call and chooses their next
  // tokens (greedy).
  void After(const LlamaSession& session);

 private:
  struct Slot {
    llama_seq_id sequence = 0;
    int generation = 0;  // how many companions this slot has held before
    int join = 0;        // the call in which the current companion joins
    int leave = 0;       // the call in which it leaves (staggered only)
    int position = 0;    // the next position to feed
    bool active = false;
    llama_token next = 0;  // the token to feed after its prefill
    int output_row = -1;   // its output row in the current call, or -1
  };
  std::vector<BatchRow> Prompt(const Slot& slot) const;

  Schedule schedule_;
  uint64_t seed_;
  int vocab_size_;
  std::vector<Slot> slots_;
};

}  // namespace samebits::llamacpp
