// The activation trace of one cpu-pass call (forward_cpu.cc), held until the
// call ends so that the records leave in the reference's order (by
// position, then layer and op) whatever the batching, each to its own
// sequence's sink.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/model/cpu_call_rows.h"
#include "engine/model/forward.h"

namespace samebits::model::cpu {

class TraceBuffer {
 public:
  void Clear() { pending_.clear(); }

  // Holds one op's output `row` (`width` values) of `sequence` at `position`.
  void Add(int sequence, int layer, const char* op, int position, const float* row, int64_t width) {
    pending_.push_back(Record{sequence, layer, op, position, std::vector<float>(row, row + width)});
  }

  // Sends the held records to their sequences' sinks, by sequence, then by
  // position, and within a position in the order they were made (layer,
  // then op), and forgets them.
  void Flush(std::span<const CallSequence> sequences) {
    std::stable_sort(pending_.begin(), pending_.end(), [](const Record& a, const Record& b) {
      return a.sequence != b.sequence ? a.sequence < b.sequence : a.position < b.position;
    });
    for (const Record& r : pending_) {
      sequences[r.sequence].trace->Record(r.layer, r.op, r.position, r.data.data(),
                                          static_cast<int64_t>(r.data.size()));
    }
    pending_.clear();
  }

 private:
  struct Record {
    int sequence;
    int layer;
    const char* op;
    int position;
    std::vector<float> data;
  };
  std::vector<Record> pending_;
};

}  // namespace samebits::model::cpu
