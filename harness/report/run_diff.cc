#include "harness/report/run_diff.h"

#include <map>
#include <ostream>
#include <set>
#include <tuple>

#include "harness/analysis/batch.h"
#include "harness/analysis/run_compare.h"
#include "harness/report/escape.h"
#include "harness/report/report_model.h"

namespace samebits::harness::report {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;

Key KeyOf(const CellResult& c) {
  return {c.checkpoint, c.scenario, c.config.name};
}

CellDiff NewDiff(const CellResult& c, CellDiff::Status status) {
  CellDiff d;
  d.checkpoint = c.checkpoint;
  d.scenario = c.scenario;
  d.config = c.config.name;
  d.status = status;
  return d;
}

// Returns whether two records of one step index are the same output: the
// hashes and everything else the child said about the step.
bool SameStep(const StepRecord& a, const StepRecord& b) {
  return a.fnv1a64 == b.fnv1a64 && a.xxh3_64 == b.xxh3_64 && a.kind == b.kind &&
         a.position == b.position && a.input_token == b.input_token && a.token == b.token &&
         a.argmax == b.argmax && a.nan_count == b.nan_count && a.inf_count == b.inf_count;
}

CellDiff Compare(const CellResult& a, const CellResult& b) {
  CellDiff d = NewDiff(a, CellDiff::Status::kSame);
  d.code_a = a.code;
  d.code_b = b.code;
  d.steps_a = static_cast<int>(a.steps.size());
  d.steps_b = static_cast<int>(b.steps.size());
  if (a.math) d.math_a = a.math->fingerprint;
  if (b.math) d.math_b = b.math->fingerprint;
  std::set<int> indices;
  for (const StepRecord& s : a.steps) indices.insert(s.index);
  for (const StepRecord& s : b.steps) indices.insert(s.index);
  for (int i : indices) {
    const StepRecord* sa = FindStep(a, i);
    const StepRecord* sb = FindStep(b, i);
    const bool same = sa && sb && SameStep(*sa, *sb);
    if (same) continue;
    ++d.differing_steps;
    if (d.first_index < 0) {
      d.first_index = i;
      if (sa) d.first_a = *sa;
      if (sb) d.first_b = *sb;
      d.batch_place = PlaceInRuns(DescribeBatchPlace(a.config, sa ? sa->batch : std::nullopt),
                                  DescribeBatchPlace(b.config, sb ? sb->batch : std::nullopt));
    }
  }
  d.code_differs = a.code != b.code;
  d.weights_mismatch = WeightsDifference(a, b);
  d.scenario_mismatch = ScenarioContentMismatch(a, b);
  if (d.differing_steps > 0 || d.code_differs || !d.weights_mismatch.empty() ||
      !d.scenario_mismatch.empty()) {
    d.status = CellDiff::Status::kDiffers;
  } else {
    d.status = a.steps.empty() ? CellDiff::Status::kNoOutput : CellDiff::Status::kSame;
  }
  return d;
}

std::string CodeName(const std::optional<ResultCode>& code) {
  return code ? ResultCodeName(*code) : "—";
}

// Returns what differs at the first diverging step, for a person.
std::string FirstStepDifference(const CellDiff& d) {
  const StepRecord* s = d.first_a ? &*d.first_a : &*d.first_b;
  std::string text = "step " + std::to_string(d.first_index) + " (" + s->kind + ", position " +
                     std::to_string(s->position) + ")" +
                     (d.batch_place.empty() ? "" : " \u2014 " + d.batch_place) + ": ";
  if (!d.first_a) return text + "only in B";
  if (!d.first_b) return text + "only in A";
  const StepRecord& a = *d.first_a;
  const StepRecord& b = *d.first_b;
  if (a.xxh3_64 != b.xxh3_64) {
    text += "xxh3 " + Hex16(a.xxh3_64) + " vs " + Hex16(b.xxh3_64);
  } else if (a.fnv1a64 != b.fnv1a64) {
    text += "fnv1a64 " + Hex16(a.fnv1a64) + " vs " + Hex16(b.fnv1a64);
  } else {
    text += "same hashes, other step fields (kind, position, tokens, argmax or NaN/Inf counts)";
  }
  if (d.first_a->token != d.first_b->token) {
    text +=
        ", token " + std::to_string(d.first_a->token) + " vs " + std::to_string(d.first_b->token);
  }
  return text;
}

// Returns what differs in a cell, for a person: other weights first (they
// explain everything after them), the scenario files, the first diverging
// step, then the result codes.
std::string FirstDifference(const CellDiff& d) {
  std::string text;
  const auto add = [&text](const std::string& part) {
    if (!part.empty()) text += (text.empty() ? "" : "; ") + part;
  };
  if (!d.weights_mismatch.empty())
    add(d.weights_mismatch + " (other weights under one checkpoint name)");
  add(d.scenario_mismatch);
  if (d.first_index >= 0) add(FirstStepDifference(d));
  if (d.code_differs) add("result " + CodeName(d.code_a) + " vs " + CodeName(d.code_b));
  return text;
}

void WriteSide(const char* label, const RunResult& r, std::ostream& out) {
  out << "- " << label << ": run " << r.run_id << ", " << MarkdownCell(r.started_at) << ", "
      << MarkdownCell(r.machine.arch) << " " << MarkdownCell(r.machine.cpu) << ", "
      << MarkdownCell(r.machine.libc) << "\n";
}

}  // namespace

int RunDiff::ExitCode() const {
  if (Identical()) return 0;
  return differs == 0 && only_a == 0 && only_b == 0 ? 2 : 1;
}

RunDiff DiffRuns(const RunResult& a, const RunResult& b) {
  RefuseDifferingCopies(a, "run " + std::to_string(a.run_id));
  RefuseDifferingCopies(b, "run " + std::to_string(b.run_id));
  RunDiff diff;
  diff.run_a = a.run_id;
  diff.run_b = b.run_id;
  std::map<Key, const CellResult*> in_b;
  for (const CellResult& c : b.cells) in_b.emplace(KeyOf(c), &c);
  std::set<Key> seen;
  for (const CellResult& c : a.cells) {
    const Key key = KeyOf(c);
    if (!seen.insert(key).second) continue;  // an identical copy: counted once
    auto it = in_b.find(key);
    if (it == in_b.end()) {
      CellDiff d = NewDiff(c, CellDiff::Status::kOnlyInA);
      d.code_a = c.code;
      d.steps_a = static_cast<int>(c.steps.size());
      diff.cells.push_back(d);
      continue;
    }
    diff.cells.push_back(Compare(c, *it->second));
  }
  std::set<Key> seen_b;
  for (const CellResult& c : b.cells) {
    const Key key = KeyOf(c);
    if (seen.count(key) || !seen_b.insert(key).second) continue;
    CellDiff d = NewDiff(c, CellDiff::Status::kOnlyInB);
    d.code_b = c.code;
    d.steps_b = static_cast<int>(c.steps.size());
    diff.cells.push_back(d);
  }
  for (const CellDiff& d : diff.cells) {
    switch (d.status) {
      case CellDiff::Status::kSame:
        ++diff.same;
        break;
      case CellDiff::Status::kDiffers:
        ++diff.differs;
        break;
      case CellDiff::Status::kNoOutput:
        ++diff.no_output;
        break;
      case CellDiff::Status::kOnlyInA:
        ++diff.only_a;
        break;
      case CellDiff::Status::kOnlyInB:
        ++diff.only_b;
        break;
    }
  }
  return diff;
}

void WriteRunDiffMarkdown(const RunDiff& diff, const RunResult& a, const RunResult& b,
                          std::ostream& out) {
  out << "## samebits diff: run " << diff.run_a << " vs run " << diff.run_b << ": "
      << (diff.Identical()       ? "identical"
          : diff.ExitCode() == 2 ? "NOTHING COMPARED (no cell has steps on both sides)"
                                 : "DIFFERENT")
      << "\n\n";
  WriteSide("A", a, out);
  WriteSide("B", b, out);
  out << "\n"
      << diff.same << " cells identical, " << diff.differs << " differ, " << diff.only_a
      << " only in A, " << diff.only_b << " only in B";
  if (diff.no_output > 0)
    out << ", " << diff.no_output
        << " without a step on either side (not compared: no output is no evidence)";
  out << ".\n\n";
  if (diff.differs + diff.only_a + diff.only_b > 0) {
    out << "| Checkpoint | Scenario | Configuration | A | B | Differing steps | First difference "
           "|\n|---|---|---|---|---|---:|---|\n";
    for (const CellDiff& d : diff.cells) {
      if (d.status == CellDiff::Status::kSame || d.status == CellDiff::Status::kNoOutput) continue;
      std::string first;
      if (d.status == CellDiff::Status::kOnlyInA) first = "only in A";
      if (d.status == CellDiff::Status::kOnlyInB) first = "only in B";
      if (d.status == CellDiff::Status::kDiffers) first = FirstDifference(d);
      out << "| " << MarkdownCell(d.checkpoint) << " | " << MarkdownCell(d.scenario) << " | "
          << MarkdownCell(d.config) << " | " << CodeName(d.code_a) << " (" << d.steps_a
          << " steps) | " << CodeName(d.code_b) << " (" << d.steps_b << " steps) | "
          << d.differing_steps << " | " << MarkdownCell(first) << " |\n";
    }
    out << "\n";
  }
  // Other weights under one checkpoint name explain every difference after
  // them: named first.
  std::set<std::string> weights_changes;
  for (const CellDiff& d : diff.cells) {
    if (!d.weights_mismatch.empty())
      weights_changes.insert(d.checkpoint + ": " + d.weights_mismatch);
  }
  for (const std::string& w : weights_changes)
    out << "Weights differ (one checkpoint name, other contents): " << MarkdownCell(w) << ".\n";
  if (!weights_changes.empty()) out << "\n";
  // A different math library explains differences under --math libm.
  std::set<std::pair<std::string, std::string>> math_changes;
  for (const CellDiff& d : diff.cells) {
    if (!d.math_a.empty() && !d.math_b.empty() && d.math_a != d.math_b) {
      math_changes.insert({d.math_a, d.math_b});
    }
  }
  for (const auto& [fa, fb] : math_changes) {
    out << "Math library fingerprint differs: " << MarkdownCell(fa) << " in A, " << MarkdownCell(fb)
        << " in B.\n";
  }
  if (!math_changes.empty()) out << "\n";
}

}  // namespace samebits::harness::report
