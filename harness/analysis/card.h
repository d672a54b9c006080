// A determinism card (`samebits card`): one axis of an engine varied at a
// time against its baseline configuration, each variant judged against the
// baseline bit for bit (DESIGN.md section 3a). One table per checkpoint and
// scenario; a row per varied value: identical, or where it first differs
// (step and position) and, when both sides dumped their logits, how much
// (NMSE and KL divergence at that step, the largest NMSE, whether the argmax
// moved) and the NMSE of every compared step, by position.
//
// Expectations belong to the engine: a variant its profile declares to
// differ (a known difference) is KNOWN when it differs and FIXED when it no
// longer does (lit's XFAIL and XPASS): FIXED fails the card, so the
// declaration is removed rather than left to hide a later regression.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/analysis/run_conformance.h"

namespace samebits::harness {

enum class CardOutcome : uint8_t {
  kIdentical,  // every step's hashes equal the baseline's
  kDiffers,    // a step differs, and the profile does not expect it
  kKnown,      // a step differs, as the profile declares
  kFixed,      // identical, though the profile declares a difference
  kNotRun,     // UNSUPPORTED: the engine cannot run it here
  kBroken,     // the child failed (crashed, hung, broke the protocol)
};

struct CardOutcomeInfo {
  CardOutcome outcome;
  const char* name;  // "IDENTICAL", stable
  bool failure;
};

inline constexpr std::array<CardOutcomeInfo, 6> kCardOutcomes = {{
    {CardOutcome::kIdentical, "IDENTICAL", false},
    {CardOutcome::kDiffers, "DIFFERS", true},
    {CardOutcome::kKnown, "KNOWN", false},
    {CardOutcome::kFixed, "FIXED", true},
    {CardOutcome::kNotRun, "UNSUPPORTED", false},
    {CardOutcome::kBroken, "BROKEN", true},
}};

const CardOutcomeInfo& OutcomeInfo(CardOutcome outcome);

// One varied value.
struct CardRow {
  std::string axis, value;  // "threads", "3"
  std::string config;       // the configuration's name
  CardOutcome outcome = CardOutcome::kIdentical;
  std::string detail;        // why not run, what broke, or what differs at the first step
  std::string known_reason;  // the profile's reason, for KNOWN and FIXED
  // What the engine's repeats in one process gave ("8 repeats in one
  // process: 1 distinct output"), when it ran the cell more than once.
  std::string repeats;
  // What the engine's sampling at a temperature above 0 showed ("4 seeds at
  // temperature 1, 16 tokens: 4 distinct samples, ..."), when it sampled.
  std::string sampling;
  int first_step = -1;  // the first differing step
  int first_position = 0;
  // From both sides' dumps, when there are any.
  std::optional<double> first_nmse, first_kld, max_nmse;
  std::optional<bool> argmax_moved;                      // at the first differing step
  std::vector<std::pair<int, double>> nmse_by_position;  // every compared step
  // The card's negative control (Card::control): its axis is
  // kCardControlAxis, and it must differ (KNOWN) for the card to count.
  bool control = false;
};

// The axis a card's negative-control row names.
inline constexpr const char* kCardControlAxis = "control";

// One checkpoint and scenario.
struct CardTable {
  std::string checkpoint, scenario;
  // The feed table (`card --feed`): the prompt fed three ways, not a
  // scenario of the card's.
  bool feed = false;
  std::string baseline;  // the baseline configuration's name
  // Why the baseline gave nothing to compare with (it did not pass); then
  // every row is BROKEN or UNSUPPORTED with this reason.
  std::string baseline_problem;
  std::vector<CardRow> rows;
  // How close the baseline's logits are to samebits-engine's reference pass
  // on the same checkpoint and scenario (run_conformance.h), when the card
  // measured it: the pair, with A the reference pass.
  std::optional<PairConformance> reference_conformance;
  std::string reference_problem;  // why it could not be measured, when it could not
};

struct Card {
  std::string engine;        // the profile's name
  std::string profile_file;  // where it was read
  std::string baseline;
  // The machine, as the first child that said hello describes it, and the
  // devices its cells computed on ("NVIDIA H200 (...): t1-cuda, t1-cuda-bf16"),
  // one line per device; empty when every cell ran on the CPU.
  std::optional<MachineInfo> machine;
  // The engine's build, as the first child that said hello describes it.
  std::optional<BuildInfo> build;
  // The narrowest read-back any cell's hello reported (PROTOCOL.md
  // `readback`); unset: every cell hashed whole logit rows. A card never
  // claims more than this proves.
  std::optional<protocol::Readback> readback;
  std::vector<std::string> devices;
  std::vector<CardTable> tables;
  std::vector<std::string> notes;  // axes not varied, and why
  // The negative control the profile names (its `card.control`): a
  // configuration run in every table that must differ from the baseline,
  // so a card that sees no difference anywhere is known to be able to see
  // one. Empty when the profile names none.
  std::string control;

  // 0 no row fails; 1 a row fails (DIFFERS, FIXED, BROKEN) or the control
  // was not seen to differ (ProbePower); 2 nothing ran.
  // (Conformance to samebits' reference pass is reported, not judged: other
  // engines are not held to samebits' bits, and their tolerance is theirs.)
  int ExitCode() const;
};

// Whether a card could see a difference: its negative control's rows.
struct ProbePower {
  bool measured = false;  // the card has a control
  bool seen = false;      // it differed in every table whose baseline ran
  // For the top of a report: "probe power: the control t1-kvf16 differs
  // from the baseline in 12 of 12 tables, from step 0", or why the card is
  // invalid: "probe power: NONE: the control ... is identical to the
  // baseline on FILE / SCENARIO; this card could not see a difference, so
  // its verdict is invalid". "" without a control.
  std::string line;
};
ProbePower MeasureProbePower(const Card& card);

// Returns the row of `variant` judged against `baseline` (both cells of one
// checkpoint and scenario). `known_reason` is the profile's reason when it
// declares this variant to differ, else empty. Dumps are read from each
// cell's `dump_path` (relative to `dump_base_dir`) or bundled rows.
CardRow JudgeCardRow(const CellResult& baseline, const CellResult& variant,
                     const std::string& known_reason, const std::string& dump_base_dir);

}  // namespace samebits::harness
