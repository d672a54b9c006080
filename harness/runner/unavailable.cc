// Leaving out what the engine can never run here (unavailable.h).
#include "harness/runner/unavailable.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "harness/runner/child.h"
#include "harness/runner/selection.h"

namespace samebits::runner {

namespace {
// A probe prints one line; longer is not a probe's answer.
constexpr double kProbeTimeoutSeconds = 30;

// The one axis of a configuration that the probe's `unavailable` entries
// name: the ISA (other axes are other engines', whose cells are not
// samebits-engine's configurations).
bool TakesUnavailableValue(const harness::Configuration& config, const protocol::Unavailable& u) {
  return u.axis == "isa" && config.isa == u.value;
}

// Runs the probe (ProbeEngine, uncached).
std::optional<protocol::Capabilities> RunProbe(const std::string& engine,
                                               const std::vector<std::string>& probe_argv,
                                               std::string* why) {
  ChildSpec spec;
  spec.program = engine;
  spec.args = probe_argv;
  spec.env = ChildEnvironment({});
  spec.timeout_seconds = kProbeTimeoutSeconds;
  spec.max_stdout_bytes = size_t{1} << 20;
  const ChildOutcome outcome = RunChild(spec);
  if (!outcome.started || outcome.timed_out || outcome.signal != 0 || outcome.exit_code != 0) {
    *why = !outcome.started ? outcome.start_error
           : outcome.timed_out
               ? "it ran past " + std::to_string(static_cast<int>(kProbeTimeoutSeconds)) + " s"
               : "it exited with code " + std::to_string(outcome.exit_code) + " (signal " +
                     std::to_string(outcome.signal) + ")";
    return std::nullopt;
  }
  std::string line = outcome.stdout_text;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (line.find('\n') != std::string::npos) {
    *why = "it printed more than one line";
    return std::nullopt;
  }
  try {
    return protocol::ParseCapabilities(line);
  } catch (const std::exception& e) {
    *why = e.what();
    return std::nullopt;
  }
}

}  // namespace

std::optional<protocol::Capabilities> ProbeEngine(const std::string& engine,
                                                  const std::vector<std::string>& probe_argv,
                                                  std::string* why) {
  // One run asks several times (the checkpoint check, the selection,
  // whether it serves): the answer is kept per program file as it is now
  // (a rebuilt file, as bisect's revisions are, is another key).
  struct stat st {};
  const std::string file_state =
      ::stat(engine.c_str(), &st) != 0
          ? std::string("missing")
          : std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
                std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  std::string key = engine + '\n' + file_state;
  for (const std::string& arg : probe_argv) key += '\n' + arg;
  struct Answer {
    std::optional<protocol::Capabilities> capabilities;
    std::string why;
  };
  static std::mutex mutex;
  static std::map<std::string, Answer> answers;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = answers.find(key);
  if (it == answers.end()) {
    Answer answer;
    answer.capabilities = RunProbe(engine, probe_argv, &answer.why);
    it = answers.emplace(key, std::move(answer)).first;
  }
  if (!it->second.capabilities) *why = it->second.why;
  return it->second.capabilities;
}

const protocol::Unavailable* UnavailableValueOf(const harness::Configuration& config,
                                                const protocol::Capabilities& capabilities) {
  for (const protocol::Unavailable& u : capabilities.unavailable) {
    if (TakesUnavailableValue(config, u)) return &u;
  }
  return nullptr;
}

void MarkUnavailable(std::vector<Cell>& cells, const protocol::Capabilities& capabilities) {
  for (Cell& cell : cells) {
    if (!cell.supported) continue;
    if (const protocol::Unavailable* u = UnavailableValueOf(cell.config, capabilities)) {
      cell.supported = false;
      cell.unsupported_reason = u->reason;
    }
  }
}

std::vector<std::string> LeaveOutUnavailable(std::vector<Cell>& cells,
                                             const protocol::Capabilities& capabilities) {
  std::vector<std::string> notes;
  for (const protocol::Unavailable& u : capabilities.unavailable) {
    std::vector<std::string> configs;
    const auto left_out = [&](const Cell& cell) { return TakesUnavailableValue(cell.config, u); };
    size_t count = 0;
    for (const Cell& cell : cells) {
      if (!left_out(cell)) continue;
      ++count;
      if (std::find(configs.begin(), configs.end(), cell.config.name) == configs.end()) {
        configs.push_back(cell.config.name);
      }
    }
    if (count == 0) continue;
    cells.erase(std::remove_if(cells.begin(), cells.end(), left_out), cells.end());
    std::string names;
    for (const std::string& c : configs) names += (names.empty() ? "" : ", ") + c;
    notes.push_back("left out " + std::to_string(count) + " cell" + (count == 1 ? "" : "s") +
                    " of " + names + ": " + u.reason);
  }
  return notes;
}

std::vector<Cell> SelectRunnableCells(const MatrixRunOptions& options,
                                      std::vector<std::string>* notes) {
  std::vector<Cell> cells = SelectCells(options.selection);
  if (options.probe.empty()) return cells;
  std::string why;
  const std::optional<protocol::Capabilities> capabilities =
      ProbeEngine(EnginePath(options), options.probe, &why);
  if (!capabilities) {
    notes->push_back("the engine's capabilities probe failed (" + why +
                     "): no configuration was left out");
    return cells;
  }
  if (!options.selection.configs.empty()) {
    MarkUnavailable(cells, *capabilities);
    return cells;
  }
  for (std::string& note : LeaveOutUnavailable(cells, *capabilities)) {
    notes->push_back(std::move(note));
  }
  return cells;
}

}  // namespace samebits::runner
