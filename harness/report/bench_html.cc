// The bench report (bench_html.h).
#include "harness/report/bench_html.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <sstream>
#include <utility>

#include "harness/report/escape.h"

namespace samebits::harness::report {
namespace {

std::string Fixed(double value, int decimals = 2) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string BenchSideName(const harness::BenchSide& side) {
  std::string name = side.label;
  if (side.cell.config.name != side.label) name += " (" + side.cell.config.name + ")";
  return name;
}

// Returns the summary rows: side, name, counted runs, medians, steps/s.
std::vector<std::vector<std::string>> Rows(const harness::BenchRecord& b) {
  std::vector<std::vector<std::string>> rows;
  for (char side : {'A', 'B'}) {
    const harness::BenchSide& s = side == 'A' ? b.a : b.b;
    int runs = 0, steps = 0;
    for (const harness::BenchSample& x : b.samples) {
      if (x.side == side && x.round >= 0 && x.ok) {
        ++runs;
        steps = x.steps;
      }
    }
    const double median = side == 'A' ? b.summary.median_a_ms : b.summary.median_b_ms;
    const double wall = side == 'A' ? b.summary.median_a_wall_ms : b.summary.median_b_wall_ms;
    rows.push_back({std::string(1, side), BenchSideName(s), std::to_string(runs), Fixed(median),
                    Fixed(wall), median > 0 ? Fixed(steps * 1000.0 / median, 1) : "-"});
  }
  return rows;
}

std::string RatioLine(const harness::BenchRecord& b) {
  const PairedRatio& r = b.summary.ratio;
  if (r.pairs == 0) return "B/A: no complete pair of runs";
  std::string line = "B/A time: " + Fixed(r.ratio, 3);
  if (r.low) {
    line += " [95% CI " + Fixed(*r.low, 3) + ", " + Fixed(*r.high, 3) + "]";
  }
  line += " (geometric mean of " + std::to_string(r.pairs) +
          " paired ratios; Student t-interval over the paired log-ratios)";
  return line;
}

// Returns the per-token line of one phase, or why the split is unknown.
std::string PhaseLine(const char* name, const harness::PhaseSummary& p) {
  if (!p.known) return "";
  auto side = [](double ms_per_token) {
    return Fixed(ms_per_token, 4) + " ms/token (" +
           (ms_per_token > 0 ? Fixed(1000.0 / ms_per_token, 1) : std::string("-")) + " tokens/s)";
  };
  std::string line = std::string(name) + " (" + std::to_string(p.tokens) + " tokens per run): A " +
                     side(p.median_a_ms_per_token) + ", B " + side(p.median_b_ms_per_token) +
                     "; B/A " + Fixed(p.ratio.ratio, 3);
  if (p.ratio.low)
    line += " [95% CI " + Fixed(*p.ratio.low, 3) + ", " + Fixed(*p.ratio.high, 3) + "]";
  return line + " (" + std::to_string(p.ratio.pairs) + " pairs)";
}

// Returns the prefill and decode lines, or one line saying the split is
// unknown (an engine whose `done` record leaves prefill_ms/decode_ms out).
std::vector<std::string> PhaseLines(const harness::BenchRecord& b) {
  std::vector<std::string> lines;
  for (const auto& [name, phase] :
       {std::pair{"prefill", &b.summary.prefill}, std::pair{"decode", &b.summary.decode}}) {
    if (phase->known) {
      lines.push_back(PhaseLine(name, *phase));
    } else {
      lines.push_back(std::string(name) +
                      ": split unknown (a run's `done` record has no prefill_ms/decode_ms, or "
                      "the scenario has no " +
                      name + " step)");
    }
  }
  return lines;
}

std::string IdentityLine(const harness::BenchRecord& b) {
  if (b.summary.identical && b.summary.a_repeatable && b.summary.b_repeatable) {
    return "identity: every run of A and B printed the same outputs (tokens and logit hashes)";
  }
  return "identity: DIFFERS: " + b.summary.identity_detail;
}

}  // namespace

std::string BenchTable(const harness::BenchRecord& b) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-4s %-40s %5s %12s %12s %10s\n", "side", "engine", "runs",
                "median ms", "wall ms", "steps/s");
  out << line;
  for (const auto& r : Rows(b)) {
    std::snprintf(line, sizeof line, "%-4s %-40s %5s %12s %12s %10s\n", r[0].c_str(), r[1].c_str(),
                  r[2].c_str(), r[3].c_str(), r[4].c_str(), r[5].c_str());
    out << line;
  }
  out << RatioLine(b) << "\n";
  for (const std::string& phase : PhaseLines(b)) out << phase << "\n";
  out << IdentityLine(b) << "\n";
  out << "(times: the engine's `done` elapsed_ms, the forward passes only; wall: the child's "
         "wall time, loading included)\n";
  return out.str();
}

namespace {

// One panel of the plot: a row of dots per side (warm-up runs hollow) at
// the times `value` gives, both medians marked, and an axis in `unit`.
// Returns the panel's height.
double SvgPanel(std::ostringstream& svg, double top, const std::string& title,
                const std::vector<harness::BenchSample>& samples,
                const std::function<std::optional<double>(const harness::BenchSample&)>& value,
                double median_a, double median_b, const char* unit) {
  constexpr double kWidth = 640, kLeft = 60, kRight = 20, kRowHeight = 50, kTitle = 18;
  double low = 0, high = 0;
  bool any = false;
  for (const harness::BenchSample& x : samples) {
    const std::optional<double> v = x.ok ? value(x) : std::nullopt;
    if (!v) continue;
    low = any ? std::min(low, *v) : *v;
    high = any ? std::max(high, *v) : *v;
    any = true;
  }
  if (!any) return 0;
  const double span = std::max(high - low, high * 0.01 + 1e-9);
  low -= span * 0.05;
  high += span * 0.05;
  auto x_of = [&](double t) {
    return kLeft + (t - low) / (high - low) * (kWidth - kLeft - kRight);
  };
  svg << "<text x=\"4\" y=\"" << top + 13 << "\" font-weight=\"bold\">" << HtmlEscape(title)
      << "</text>\n";
  const double rows_top = top + kTitle;
  for (int row = 0; row < 2; ++row) {
    const char side = row == 0 ? 'A' : 'B';
    const double y = rows_top + kRowHeight * row + kRowHeight / 2;
    const char* color = row == 0 ? "#1f77b4" : "#d62728";
    svg << "<text x=\"4\" y=\"" << y + 4 << "\">" << side << "</text>\n";
    svg << "<line x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\"" << y << "\" y2=\""
        << y << "\" stroke=\"#ddd\"/>\n";
    const double median = row == 0 ? median_a : median_b;
    if (median > 0) {
      svg << "<line x1=\"" << x_of(median) << "\" x2=\"" << x_of(median) << "\" y1=\"" << y - 15
          << "\" y2=\"" << y + 15 << "\" stroke=\"" << color
          << "\" stroke-width=\"2\"><title>median " << Fixed(median, 4) << " " << unit
          << "</title></line>\n";
    }
    for (const harness::BenchSample& x : samples) {
      const std::optional<double> v = x.side == side && x.ok ? value(x) : std::nullopt;
      if (!v) continue;
      const bool warmup = x.round < 0;
      svg << "<circle cx=\"" << x_of(*v) << "\" cy=\"" << y << "\" r=\"4\" fill=\""
          << (warmup ? "none" : color) << "\" stroke=\"" << color << "\"><title>"
          << (warmup ? "warm-up" : "round " + std::to_string(x.round)) << ": " << Fixed(*v, 4)
          << " " << unit << "</title></circle>\n";
    }
  }
  const double axis_y = rows_top + 2 * kRowHeight + 5;
  svg << "<line x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\"" << axis_y
      << "\" y2=\"" << axis_y << "\" stroke=\"#333\"/>\n";
  for (int tick = 0; tick <= 4; ++tick) {
    const double t = low + (high - low) * tick / 4;
    svg << "<text x=\"" << x_of(t) << "\" y=\"" << axis_y + 18 << "\" text-anchor=\"middle\">"
        << Fixed(t, std::string(unit) == "ms" ? 1 : 3) << " " << unit << "</text>\n";
  }
  return kTitle + 2 * kRowHeight + 35;
}

// The per-token time of one phase of a run, when it reported the split.
std::function<std::optional<double>(const harness::BenchSample&)> PerToken(
    double protocol::PhaseTimes::*ms, int64_t protocol::PhaseTimes::*tokens) {
  return [ms, tokens](const harness::BenchSample& x) -> std::optional<double> {
    if (!x.phases || (*x.phases).*tokens <= 0) return std::nullopt;
    return (*x.phases).*ms / static_cast<double>((*x.phases).*tokens);
  };
}

}  // namespace

std::string BenchSvg(const harness::BenchRecord& b) {
  std::ostringstream body;
  double height = 10;
  height += SvgPanel(
      body, height, "whole run (done elapsed_ms)", b.samples,
      [](const harness::BenchSample& x) { return std::optional<double>(x.elapsed_ms); },
      b.summary.median_a_ms, b.summary.median_b_ms, "ms");
  // The phases only when known, so an older engine's plot is the whole alone.
  struct Phase {
    const char* title;
    const harness::PhaseSummary* summary;
    double protocol::PhaseTimes::*ms;
    int64_t protocol::PhaseTimes::*tokens;
  };
  for (const Phase& p :
       {Phase{"prefill (per token)", &b.summary.prefill, &protocol::PhaseTimes::prefill_ms,
              &protocol::PhaseTimes::prefill_tokens},
        Phase{"decode (per token)", &b.summary.decode, &protocol::PhaseTimes::decode_ms,
              &protocol::PhaseTimes::decode_tokens}}) {
    if (!p.summary->known) continue;
    height +=
        SvgPanel(body, height, p.title, b.samples, PerToken(p.ms, p.tokens),
                 p.summary->median_a_ms_per_token, p.summary->median_b_ms_per_token, "ms/token");
  }
  if (height <= 10) {
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"></svg>";
  }
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << body.str() << "</svg>";
  return svg.str();
}

void WriteBenchHtml(const harness::BenchRecord& b, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>samebits bench</title>\n"
         "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
         "td:nth-child(2){text-align:left}.differs{color:#b00;font-weight:bold}</style>"
         "</head><body>\n";
  out << "<h1>samebits bench</h1>\n<p>" << HtmlEscape(b.a.cell.checkpoint) << " "
      << HtmlEscape(b.a.cell.scenario) << "; " << HtmlEscape(b.started_at) << "; "
      << HtmlEscape(b.machine) << "</p>\n";
  out << "<p>preflight: " << HtmlEscape(b.preflight) << (b.forced ? " (--force)" : "") << "</p>\n";
  out << "<table><tr><th>side</th><th>engine</th><th>runs</th><th>median ms</th><th>wall "
         "ms</th><th>steps/s</th></tr>\n";
  for (const auto& r : Rows(b)) {
    out << "<tr>";
    for (const std::string& cell : r) out << "<td>" << HtmlEscape(cell) << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n<p>" << HtmlEscape(RatioLine(b)) << "</p>\n";
  for (const std::string& phase : PhaseLines(b)) out << "<p>" << HtmlEscape(phase) << "</p>\n";
  const bool same = b.summary.identical && b.summary.a_repeatable && b.summary.b_repeatable;
  out << "<p" << (same ? "" : " class=\"differs\"") << ">" << HtmlEscape(IdentityLine(b))
      << "</p>\n";
  out << BenchSvg(b) << "\n<p>Command: <code>" << HtmlEscape(b.command) << "</code></p>\n";
  out << "</body></html>\n";
}

}  // namespace samebits::harness::report
