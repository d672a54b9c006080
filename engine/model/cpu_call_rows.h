// The rows of one cpu-pass call (forward_cpu.cc): the token rows of every
// sequence of the batch, one sequence after another, each row knowing its
// sequence and position. The layer works on all rows at once; what belongs
// to one sequence (its KV cache, its positions, its attention, its logits
// and trace) is looked up here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/model/forward.h"

namespace samebits::model::cpu {

// One sequence's rows in the call.
struct CallSequence {
  InferenceState* state = nullptr;
  int row0 = 0;    // its first row in the call
  int rows = 0;    // its token rows
  int n_past = 0;  // the position of its first row
  bool all_positions = false;
  int out0 = 0;     // its first output row (Head)
  int outputs = 0;  // its output rows: every row, or the last
  std::vector<float>* logits = nullptr;
  TraceSink* trace = nullptr;
};

struct CallRows {
  std::vector<CallSequence> sequences;
  std::vector<int32_t> tokens;    // (n) every row's token
  std::vector<int> sequence;      // (n) every row's sequence
  std::vector<int> position;      // (n) every row's position
  std::vector<int> output_rows;   // (outputs) the call row of each output row
  int n = 0;                      // rows
  int64_t positions_reached = 0;  // the largest n_past + rows of a sequence
  bool any_trace = false;

  // Lays out `calls` in their order (allocates only when a call is larger
  // than any before).
  void Assign(std::span<const SequenceCall> calls) {
    sequences.clear(), tokens.clear(), sequence.clear(), position.clear(), output_rows.clear();
    positions_reached = 0;
    any_trace = false;
    for (const SequenceCall& call : calls) {
      CallSequence s;
      s.state = call.state;
      s.row0 = static_cast<int>(tokens.size());
      s.rows = static_cast<int>(call.tokens.size());
      s.n_past = call.state->n_past;
      s.all_positions = call.all_positions;
      s.out0 = static_cast<int>(output_rows.size());
      s.outputs = call.all_positions ? s.rows : std::min(s.rows, 1);
      s.logits = call.logits;
      s.trace = call.trace;
      for (int t = 0; t < s.rows; ++t) {
        tokens.push_back(call.tokens[t]);
        sequence.push_back(static_cast<int>(sequences.size()));
        position.push_back(s.n_past + t);
      }
      for (int t = s.rows - s.outputs; t < s.rows; ++t) output_rows.push_back(s.row0 + t);
      positions_reached = std::max<int64_t>(positions_reached, int64_t{s.n_past} + s.rows);
      any_trace = any_trace || s.trace != nullptr;
      sequences.push_back(s);
    }
    n = static_cast<int>(tokens.size());
  }
};

}  // namespace samebits::model::cpu
