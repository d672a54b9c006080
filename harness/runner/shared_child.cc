// Cells in shared children (shared_child.h).
#include "harness/runner/shared_child.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "engine/protocol/records.h"
#include "harness/runner/cell_arguments.h"
#include "harness/runner/child.h"

namespace samebits::runner {
namespace {

// Reads one served cell's stdout line by line, as the transcript's reader
// judges it: a valid `done` ends the cell, a line that breaks the protocol
// (or an `error` or `unsupported` record, after which the engine exits)
// gives the rest of the child's life to the cell. Remembers whether the
// child answered the cell: its first line was a record.
class ServedCellReader {
 public:
  ChildLine operator()(std::string_view line) {
    reader_.FeedLine(line);
    const protocol::Transcript& so_far = reader_.so_far();
    if (++lines_ == 1) {
      answered_ = !reader_.failed() || so_far.error.has_value() || so_far.unsupported.has_value();
    }
    if (reader_.failed()) return ChildLine::kBreaksRequest;
    return so_far.done ? ChildLine::kEndsRequest : ChildLine::kMore;
  }
  bool answered() const { return answered_; }

 private:
  protocol::TranscriptReader reader_;
  int64_t lines_ = 0;
  bool answered_ = false;
};

// A cell a shared child answered: its index, outcome and dump file.
struct Served {
  size_t index;
  ChildOutcome outcome;
  std::string dump_file;
};

// Whether a child whose input closed ended as a child of its own must end
// after its `done`: exit code 0, within its deadline, nothing more printed
// and nothing left behind.
bool EndedCleanly(const ChildOutcome& end) {
  return end.started && !end.timed_out && end.signal == 0 && end.exit_code == 0 &&
         end.stdout_text.empty() && end.left_running.empty() && !end.output_held_open;
}

}  // namespace

std::string ServeRequest(const EngineProfile& profile, const Cell& cell,
                         const std::string& dump_file) {
  return nlohmann::json(CellOwnArguments(profile, cell, dump_file)).dump();
}

void RunCellsShared(const std::vector<Cell>& cells, const std::vector<size_t>& group,
                    const RunnerOptions& options, harness::MachineInfo* platform,
                    const GroupProgress& progress) {
  if (group.empty()) return;
  std::vector<std::string> args;
  try {
    if (options.own_profile == nullptr) throw std::invalid_argument("no profile");
    args = ConfigurationArguments(*options.own_profile, cells[group.front()].config, options.trace);
  } catch (const std::invalid_argument&) {
    // No command line to serve them with: each cell alone says why.
    for (size_t index : group) {
      progress.started(index);
      progress.finished(index, RunCell(cells[index], options, platform));
    }
    return;
  }
  args.push_back(kServeFlag);
  const size_t per_child = static_cast<size_t>(std::max(1, options.cells_per_child));
  size_t next = 0;  // in `group`
  while (next < group.size()) {
    ChildSession session(CellChildSpec(cells[group[next]], options, args));
    std::vector<Served> served;
    std::vector<size_t> alone;  // cells whose end is in doubt: run again alone
    // A child that could not start still gives its first cell an outcome.
    while (next < group.size() && served.size() < per_child &&
           (served.empty() || session.alive())) {
      const size_t index = group[next++];
      progress.started(index);
      const std::string dump_file = CellDumpFile(cells[index], options);
      ServedCellReader reader;
      ChildOutcome outcome = session.Serve(
          ServeRequest(*options.own_profile, cells[index], dump_file), std::ref(reader));
      if (!session.alive() && !reader.answered() && !outcome.timed_out && !served.empty()) {
        // It ended or broke before answering: perhaps of the previous cell.
        alone.push_back(served.back().index);
        served.pop_back();
        alone.push_back(index);
        break;
      }
      served.push_back({index, std::move(outcome), dump_file});
    }
    if (session.alive()) {
      const ChildOutcome end = session.Finish();
      if (!end.left_running.empty() || end.output_held_open) {
        // Which cell left them is unknown: each is run again alone.
        for (const Served& s : served) alone.push_back(s.index);
        served.clear();
      } else if (!EndedCleanly(end)) {
        alone.push_back(served.back().index);
        served.pop_back();
      } else {
        served.back().outcome.elapsed_ms += end.elapsed_ms;  // the child's exit
      }
    }
    for (Served& s : served) {
      progress.finished(s.index, JudgeCellChild(cells[s.index], s.outcome, s.dump_file,
                                                options.own_profile, platform));
    }
    for (size_t index : alone) progress.finished(index, RunCell(cells[index], options, platform));
  }
}

}  // namespace samebits::runner
