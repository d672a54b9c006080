// The HTML determinism card (card_report.h): self-contained, one table per
// checkpoint and scenario, and for each differing row whose logits were
// measured an inline SVG plot of the NMSE by position (log scale).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "harness/report/card_grid.h"
#include "harness/report/card_report.h"
#include "harness/report/conformance_report.h"
#include "harness/report/escape.h"

namespace samebits::harness::report {
namespace {

constexpr const char* kCardStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; font-size: 13px; }
th { background: #f3f3f3; }
tr.IDENTICAL td.result { color: #17692e; } tr.KNOWN td.result { color: #8a6d00; }
tr.DIFFERS td.result, tr.FIXED td.result, tr.BROKEN td.result { color: #a31515; font-weight: bold; }
tr.UNSUPPORTED td.result { color: #666; }
svg { background: #fafafa; border: 1px solid #ddd; }
table.grid td.mark { text-align: center; font-family: ui-monospace, monospace; }
td.mark.IDENTICAL { background: #e3f4e8; } td.mark.KNOWN { background: #fff4cc; }
td.mark.DIFFERS, td.mark.FIXED, td.mark.BROKEN { background: #f8d7d7; font-weight: bold; }
td.mark.UNSUPPORTED { background: #eee; color: #666; }
)css";

// Writes the NMSE of every measured step by position, log10 on the y axis
// (an NMSE of 0, identical rows, sits on the bottom line).
void WritePlot(const CardRow& r, std::ostream& out) {
  const double width = 480, height = 140, pad = 30;
  int min_pos = r.nmse_by_position.front().first, max_pos = min_pos;
  double lo = 0, hi = -300;
  bool any = false;
  for (const auto& [pos, nmse] : r.nmse_by_position) {
    min_pos = std::min(min_pos, pos);
    max_pos = std::max(max_pos, pos);
    if (nmse > 0 && std::isfinite(nmse)) {
      const double l = std::log10(nmse);
      lo = any ? std::min(lo, l) : l;
      hi = any ? std::max(hi, l) : l;
      any = true;
    }
  }
  if (!any) return;
  lo = std::floor(lo) - 1;
  hi = std::ceil(hi);
  const auto x = [&](int pos) {
    return pad +
           (max_pos == min_pos ? 0 : (pos - min_pos) * (width - 2 * pad) / (max_pos - min_pos));
  };
  const auto y = [&](double nmse) {
    const double l = nmse > 0 && std::isfinite(nmse) ? std::log10(nmse) : lo;
    return height - pad + (lo - l) * (height - 2 * pad) / (hi - lo);
  };
  char buf[160];
  out << "<p>" << HtmlEscape(r.config) << ": NMSE by position (log scale, 1e" << lo << " to 1e"
      << hi << ")</p>\n<svg width=\"" << width << "\" height=\"" << height
      << "\" role=\"img\" aria-label=\"NMSE by position\">\n<polyline fill=\"none\" "
         "stroke=\"#a31515\" points=\"";
  for (const auto& [pos, nmse] : r.nmse_by_position) {
    std::snprintf(buf, sizeof buf, "%.1f,%.1f ", x(pos), y(nmse));
    out << buf;
  }
  out << "\"/>\n";
  std::snprintf(buf, sizeof buf,
                "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">position %d</text>"
                "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"end\">%d</text>\n",
                pad, height - 8, min_pos, width - pad, height - 8, max_pos);
  out << buf << "</svg>\n";
}

// The grid (card_grid.h): a row per varied value, a column per table, one
// coloured mark each, its full result in the cell's title.
void WriteGridHtml(const Card& card, std::ostream& out) {
  const CardGrid grid = BuildCardGrid(card);
  if (grid.rows.empty()) return;
  out << "<h2>At a glance</h2>\n<table class=\"grid\">\n<tr><th>Axis = value "
         "(configuration)</th>";
  for (const std::string& column : grid.columns) out << "<th>" << HtmlEscape(column) << "</th>";
  out << "</tr>\n";
  for (const CardGrid::Row& row : grid.rows) {
    out << "<tr><td>" << HtmlEscape(GridRowLabel(row)) << "</td>";
    for (const CardRow* cell : row.cells) {
      if (cell == nullptr) {
        out << "<td class=\"mark\"></td>";
        continue;
      }
      out << "<td class=\"mark " << OutcomeInfo(cell->outcome).name << "\" title=\""
          << HtmlEscape(CardRowSummary(*cell)) << "\">" << HtmlEscape(GridMark(cell)) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n<p>" << HtmlEscape(GridLegend(CardComparesWholeRows(card))) << "</p>\n";
}

}  // namespace

void WriteCardHtml(const Card& card, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
      << "Determinism card: " << HtmlEscape(card.engine) << "</title>\n<style>" << kCardStyle
      << "</style>\n</head>\n<body>\n<h1>Determinism card: " << HtmlEscape(card.engine) << "</h1>\n"
      << "<p>Profile " << HtmlEscape(card.profile_file)
      << "; each row varies one axis of the baseline <b>" << HtmlEscape(card.baseline)
      << "</b> and compares " << HtmlEscape(CardComparedText(card)) << " bit for bit. Verdict: "
      << (card.ExitCode() == 1 ? "<b>" + HtmlEscape(CardVerdictText(card)) + "</b>"
                               : HtmlEscape(CardVerdictText(card)))
      << ".</p>\n";
  if (const ProbePower power = MeasureProbePower(card); power.measured)
    out << "<p>" << (power.seen ? HtmlEscape(power.line) : "<b>" + HtmlEscape(power.line) + "</b>")
        << "</p>\n";
  if (const std::string machine = CardMachineLine(card); !machine.empty())
    out << "<p>" << HtmlEscape(machine) << "</p>\n";
  if (const std::string build = CardBuildLine(card); !build.empty())
    out << "<p>" << HtmlEscape(build) << "</p>\n";
  for (const std::string& device : card.devices)
    out << "<p>Device: " << HtmlEscape(device) << "</p>\n";
  WriteGridHtml(card, out);
  for (const std::string& note : card.notes) out << "<p>Note: " << HtmlEscape(note) << "</p>\n";
  for (const CardTable& t : card.tables) {
    out << "<h2>" << HtmlEscape(t.checkpoint) << " / " << HtmlEscape(t.scenario) << "</h2>\n";
    if (!t.baseline_problem.empty()) out << "<p>" << HtmlEscape(t.baseline_problem) << "</p>\n";
    if (const std::string line = ReferenceConformanceLine(t); !line.empty()) {
      out << "<p>" << HtmlEscape(line) << "</p>\n";
    }
    out << "<table>\n<tr><th>Axis</th><th>Value</th><th>Configuration</th><th>Result</th>"
           "<th>NMSE at first difference</th><th>KLD</th><th>max NMSE</th><th>Argmax moved</th>"
           "<th>Notes</th></tr>\n";
    for (const CardRow& r : t.rows) {
      out << "<tr class=\"" << OutcomeInfo(r.outcome).name << "\"><td>" << HtmlEscape(r.axis)
          << "</td><td>" << HtmlEscape(r.value) << "</td><td>" << HtmlEscape(r.config)
          << "</td><td class=\"result\">" << HtmlEscape(CardRowSummary(r)) << "</td><td>"
          << FormatOptionalMetric(r.first_nmse) << "</td><td>" << FormatOptionalMetric(r.first_kld)
          << "</td><td>" << FormatOptionalMetric(r.max_nmse) << "</td><td>"
          << (r.argmax_moved ? (*r.argmax_moved ? "yes" : "no") : "-") << "</td><td>"
          << HtmlEscape(r.known_reason.empty() ? r.detail : "declared: " + r.known_reason)
          << "</td></tr>\n";
    }
    out << "</table>\n";
    for (const CardRow& r : t.rows) {
      if ((r.outcome == CardOutcome::kDiffers || r.outcome == CardOutcome::kKnown) &&
          !r.nmse_by_position.empty())
        WritePlot(r, out);
    }
  }
  out << "</body>\n</html>\n";
}

}  // namespace samebits::harness::report
