// Reports of a determinism card (harness/analysis/card.h): Markdown for a
// pull request or a README, self-contained HTML with a plot of the NMSE by
// position wherever a row differs and both sides dumped their logits. One
// file per format (card_markdown.cc, card_html.cc); every string from
// outside is escaped (escape.h).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "harness/analysis/card.h"

namespace samebits::harness::report {

// Writes the card in `format` ("md" or "markdown", "html"). Throws
// std::invalid_argument for another format, naming the known ones.
void WriteCardReport(const Card& card, std::string_view format, std::ostream& out);

// The formats WriteCardReport knows, in the order `--help` lists them.
std::vector<std::string> CardReportFormats();

// Returns what a row says in the table's "result" column: "identical",
// "differs from step 3 (position 14)", "KNOWN: differs from step 3 ...",
// "FIXED: identical", "UNSUPPORTED: ...".
std::string CardRowSummary(const CardRow& row);

// Returns the card's machine in one line ("Machine: x86_64, AMD EPYC ...,
// Linux 6.1.0, glibc 2.36"), or "" when no child described it.
std::string CardMachineLine(const Card& card);

// Returns the engine's build in one line ("Build: llama.cpp 0.5.0, revision
// 5e0558ab7794 (dirty), GNU 12.2.0."), or "" when no child described it.
std::string CardBuildLine(const Card& card);

// Returns what the card's rows compare bit for bit: "every step's logits",
// or what a partial read-back covers (a served engine's top K), so the card
// never claims whole rows it did not see.
std::string CardComparedText(const Card& card);

// Returns whether every cell of the card hashed whole logit rows.
bool CardComparesWholeRows(const Card& card);

// Returns the card's verdict for a person: "no unexpected difference",
// "unexpected results" or "nothing ran".
std::string CardVerdictText(const Card& card);

// Returns what a table says of its baseline's conformance to samebits-
// engine's reference pass ("" when the card did not measure it):
// "CONFORMS (stable) over steps 0-8 of 9: NMSE max 3.2e-12, mean ...; KLD
// mean 1.2e-13 ± 3e-14, median ..., p99 ..., max ...; Δp mean ... %, RMS Δp
// ... %; same top-1 on 9 of 9 steps; max |a - b| ...", or why it was not
// measured.
std::string ReferenceConformanceLine(const CardTable& table);

// Each format's writer (card_markdown.cc, card_html.cc).
void WriteCardMarkdown(const Card& card, std::ostream& out);
void WriteCardHtml(const Card& card, std::ostream& out);

}  // namespace samebits::harness::report
