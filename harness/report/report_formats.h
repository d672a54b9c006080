// The report formats, listed once. Every report kind (a run's, a
// conformance run's, a card's) writes some of these formats; each kind's
// table of writers names its formats from this list (checked when it
// compiles, FormatsAreListed below), and what users see of a format (the
// `--format` values, the `--report-<name>` flags and their help, the file
// extension `samebits report -o FILE` guesses from, the "known formats" of
// an error) is generated from it.
#pragma once

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace samebits::harness::report {

struct ReportFormat {
  std::string_view name;         // as `--format` takes it; the flag is --report-<name>
  std::string_view alias;        // another name `--format` takes, or ""
  std::string_view extension;    // the file's usual extension, without the dot
  std::string_view description;  // what --report-<name> writes, "a JSON report"
};

// Every format, in the order help texts list them.
inline constexpr std::array<ReportFormat, 4> kReportFormats{{
    {"md", "markdown", "md", "a Markdown report (for a pull request)"},
    {"html", "", "html", "a self-contained HTML report"},
    {"json", "", "json", "a JSON report"},
    {"junit", "", "xml", "a JUnit XML report (for CI systems)"},
}};

// Returns the index in kReportFormats of the format called `name` (its name
// or its alias), or kReportFormats.size(). An index, not a pointer, because
// comparing a pointer into the list with nullptr is not a constant
// expression under GCC's sanitizers, and FormatsAreListed runs in a
// static_assert.
constexpr std::size_t FindReportFormatIndex(std::string_view name) {
  for (std::size_t i = 0; i < kReportFormats.size(); ++i) {
    const ReportFormat& f = kReportFormats[i];
    if (name == f.name || (!f.alias.empty() && name == f.alias)) return i;
  }
  return kReportFormats.size();
}

// Returns the format called `name` (its name or its alias), or nullptr.
inline const ReportFormat* FindReportFormat(std::string_view name) {
  const std::size_t i = FindReportFormatIndex(name);
  return i < kReportFormats.size() ? &kReportFormats[i] : nullptr;
}

// Whether every row of a writer table (rows with a `name` member) names a
// listed format by its name, so a table cannot grow a format the list lacks.
template <typename Row, std::size_t N>
constexpr bool FormatsAreListed(const Row (&table)[N]) {
  for (const Row& row : table) {
    const std::size_t i = FindReportFormatIndex(row.name);
    if (i == kReportFormats.size() || kReportFormats[i].name != row.name) return false;
  }
  return true;
}

// Returns the format whose extension `path` ends with (".htm" counts as
// HTML), or nullptr: what `samebits report -o FILE` writes by default.
const ReportFormat* ReportFormatForPath(std::string_view path);

// Returns the rows' names joined by `separator` ("md, html").
template <typename Row, std::size_t N>
std::string FormatNames(const Row (&table)[N], std::string_view separator) {
  std::string names;
  for (const Row& row : table) {
    if (!names.empty()) names += separator;
    names += row.name;
  }
  return names;
}

// Returns the row of `table` for `format` (a name or an alias). Throws
// std::invalid_argument naming `format` and the table's formats when the
// table has no row for it: "unknown report format 'pdf' (known formats: md,
// html, json, junit)".
template <typename Row, std::size_t N>
const Row& FindFormatRow(const Row (&table)[N], std::string_view format) {
  if (const ReportFormat* f = FindReportFormat(format)) {
    for (const Row& row : table) {
      if (row.name == f->name) return row;
    }
  }
  throw std::invalid_argument("unknown report format '" + std::string(format) +
                              "' (known formats: " + FormatNames(table, ", ") + ")");
}

}  // namespace samebits::harness::report
