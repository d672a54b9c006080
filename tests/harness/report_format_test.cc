// Structural checks of the reports beyond the goldens: the JSON parses and
// carries its schema version and every cell; the JUnit XML is well formed
// (a small strict parser below) and its counts add up; no hostile string
// survives unescaped in the HTML, the Markdown or the XML.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/report/exporter.h"
#include "tests/harness/report_fixture.h"

namespace samebits::harness::report {
namespace {

// A minimal, strict XML reader: enough to prove that a document is well
// formed (one root, balanced and properly nested tags, quoted attributes,
// no raw '<' or stray '&' in text or attribute values, no forbidden control
// characters) and to collect elements with their attributes.
struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
};

class TinyXml {
 public:
  explicit TinyXml(std::string text) : s_(std::move(text)) {}

  // Returns every element in document order. Throws std::runtime_error at
  // the first problem, naming the offset.
  std::vector<XmlElement> Parse() {
    if (s_.rfind("<?xml", 0) == 0) i_ = s_.find("?>") + 2;
    std::vector<std::string> open;
    int roots = 0;
    while (i_ < s_.size()) {
      if (s_[i_] != '<') {
        Text('<');
        continue;
      }
      ++i_;
      if (Peek('/')) {
        ++i_;
        const std::string name = Name();
        Skip();
        Expect('>');
        if (open.empty() || open.back() != name) Fail("unbalanced </" + name + ">");
        open.pop_back();
        continue;
      }
      XmlElement e;
      e.name = Name();
      if (open.empty() && ++roots > 1) Fail("a second root element");
      while (true) {
        Skip();
        if (Peek('/') || Peek('>')) break;
        const std::string attr = Name();
        Skip();
        Expect('=');
        Skip();
        const char quote = s_[i_];
        if (quote != '"' && quote != '\'') Fail("unquoted attribute " + attr);
        ++i_;
        const size_t start = i_;
        Text(quote);
        e.attributes[attr] = s_.substr(start, i_ - start);
        Expect(quote);
      }
      const bool self_closing = Peek('/');
      if (self_closing) ++i_;
      Expect('>');
      if (!self_closing) open.push_back(e.name);
      elements_.push_back(e);
    }
    if (!open.empty()) Fail("<" + open.back() + "> never closed");
    if (roots != 1) Fail("no root element");
    return elements_;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) {
    throw std::runtime_error("XML offset " + std::to_string(i_) + ": " + what);
  }
  bool Peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
  void Expect(char c) {
    if (!Peek(c)) Fail(std::string("expected '") + c + "'");
    ++i_;
  }
  void Skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t')) ++i_;
  }
  std::string Name() {
    const size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' ||
                              s_[i_] == '_' || s_[i_] == ':')) {
      ++i_;
    }
    if (i_ == start) Fail("expected a name");
    return s_.substr(start, i_ - start);
  }
  // Consumes character data up to `end`; entity references must be known.
  void Text(char end) {
    while (i_ < s_.size() && s_[i_] != end) {
      const auto u = static_cast<unsigned char>(s_[i_]);
      if (s_[i_] == '<') Fail("raw '<' in text or attribute");
      if ((u < 0x20 && u != '\n' && u != '\t' && u != '\r') || u == 0x7F) {
        Fail("control character " + std::to_string(u));
      }
      if (s_[i_] == '&') {
        const size_t semi = s_.find(';', i_);
        if (semi == std::string::npos) Fail("unterminated entity");
        const std::string ent = s_.substr(i_ + 1, semi - i_ - 1);
        const bool known = ent == "amp" || ent == "lt" || ent == "gt" || ent == "quot" ||
                           ent == "apos" || (ent.size() > 1 && ent[0] == '#');
        if (!known) Fail("unknown entity &" + ent + ";");
        i_ = semi + 1;
        continue;
      }
      ++i_;
    }
  }

  std::string s_;
  size_t i_ = 0;
  std::vector<XmlElement> elements_;
};

TEST(TinyXml, RejectsMalformedDocuments) {
  EXPECT_THROW(TinyXml("<a><b></a></b>").Parse(), std::runtime_error);
  EXPECT_THROW(TinyXml("<a>1 < 2</a>").Parse(), std::runtime_error);
  EXPECT_THROW(TinyXml("<a x=\"<\"/>").Parse(), std::runtime_error);
  EXPECT_THROW(TinyXml("<a>&bogus;</a>").Parse(), std::runtime_error);
  EXPECT_THROW(TinyXml("<a>\x01</a>").Parse(), std::runtime_error);
  EXPECT_THROW(TinyXml("<a/><b/>").Parse(), std::runtime_error);
  EXPECT_EQ(TinyXml("<a x='1'><b/>t &amp; &#10;</a>").Parse().size(), 2u);
}

TEST(ReportFormats, ListsTheFourFormatsAndRejectsOthers) {
  EXPECT_EQ(ReportFormats(), (std::vector<std::string>{"md", "html", "json", "junit"}));
  std::ostringstream out;
  EXPECT_THROW(WriteReport(testing::MixedRun(), "pdf", out), std::invalid_argument);
  EXPECT_TRUE(out.str().empty());
}

TEST(JsonReport, ParsesAndCarriesSchemaVersionAndEveryCell) {
  const RunResult run = testing::MixedRun();
  const auto j = nlohmann::json::parse(testing::ExportToString(run, "json"));
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("run_id"), 42);
  EXPECT_EQ(j.at("verdict"), "FAIL");
  EXPECT_EQ(j.at("diagnosis").at("kind"), "identity-broken");
  ASSERT_EQ(j.at("cells").size(), run.cells.size());
  EXPECT_EQ(j.at("cells")[0].at("checkpoint"), "synthetic:tiny");
  EXPECT_EQ(j.at("cells")[4].at("checkpoint"), testing::kHostileCheckpoint);
  // JSON carries control characters escaped (\u0001), so the tail stays whole.
  EXPECT_NE(j.at("cells")[5].at("stderr_tail").get<std::string>().find('\x01'), std::string::npos);
  EXPECT_EQ(j.at("cells")[2].at("steps")[3].at("xxh3_64").get<std::string>().size(), 16u);
  int total = 0;
  for (const auto& [code, n] : j.at("counts").items()) total += n.get<int>();
  EXPECT_EQ(total, static_cast<int>(run.cells.size()));
  EXPECT_EQ(j.at("counts").at("UNRESOLVED"), 1);
}

// A configuration's dot-product profile is exported when it is int8, and
// left out when exact, so exact reports read as before.
TEST(JsonReport, NamesTheQuantDotProfileOnlyWhenNotExact) {
  RunResult run = testing::MixedRun();
  run.cells[1].config.quant_dot = "int8";
  const auto j = nlohmann::json::parse(testing::ExportToString(run, "json"));
  EXPECT_EQ(j.at("cells")[1].at("config").at("quant_dot"), "int8");
  EXPECT_FALSE(j.at("cells")[0].at("config").contains("quant_dot"));
}

TEST(JsonReport, InvalidUtf8FromAChildBecomesReplacementCharacters) {
  RunResult run = testing::MixedRun();
  run.cells[5].stderr_tail = "bad \xff\xfe bytes";
  const auto j = nlohmann::json::parse(testing::ExportToString(run, "json"));
  EXPECT_EQ(j.at("cells")[5].at("stderr_tail"), "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
}

TEST(JunitReport, IsWellFormedAndCountsAddUp) {
  const std::vector<XmlElement> elements =
      TinyXml(testing::ExportToString(testing::MixedRun(), "junit")).Parse();
  ASSERT_FALSE(elements.empty());
  const XmlElement& root = elements[0];
  EXPECT_EQ(root.name, "testsuites");
  EXPECT_EQ(root.attributes.at("tests"), "7");
  EXPECT_EQ(root.attributes.at("failures"), "1");  // FAIL
  EXPECT_EQ(root.attributes.at("errors"), "2");    // UNRESOLVED and TIMEOUT
  EXPECT_EQ(root.attributes.at("skipped"), "1");   // UNSUPPORTED
  std::map<std::string, int> seen;
  int suites = 0, suite_tests = 0;
  for (const XmlElement& e : elements) {
    ++seen[e.name];
    if (e.name == "testsuite") {
      ++suites;
      suite_tests += std::stoi(e.attributes.at("tests"));
    }
  }
  EXPECT_EQ(suites, 2);
  EXPECT_EQ(suite_tests, 7);
  EXPECT_EQ(seen["testcase"], 7);
  EXPECT_EQ(seen["failure"], 1);
  EXPECT_EQ(seen["error"], 2);
  EXPECT_EQ(seen["skipped"], 1);
}

TEST(HtmlReport, NeverContainsAHostileStringUnescaped) {
  const std::string html = testing::ExportToString(testing::MixedRun(), "html");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("alert(1)</"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;&quot;quoted&#39; &amp; co"),
            std::string::npos);
  EXPECT_EQ(html.find("<weights>"), std::string::npos);
  EXPECT_EQ(html.find('\x01'), std::string::npos);
  EXPECT_EQ(html.find('\x07'), std::string::npos);
  // Self-contained: no external references.
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
}

TEST(HtmlReport, EscapesAHostileConfigurationNameInAttributes) {
  RunResult run = testing::MixedRun();
  run.cells[1].config.name = "\" onmouseover=\"alert(2)";
  const std::string html = testing::ExportToString(run, "html");
  EXPECT_EQ(html.find("\" onmouseover=\""), std::string::npos);
  EXPECT_NE(html.find("&quot; onmouseover=&quot;alert(2)"), std::string::npos);
}

TEST(HtmlReport, HighlightsTheFirstDivergence) {
  const std::string html = testing::ExportToString(testing::MixedRun(), "html");
  // cpu-t3 differs from step 3 on; only step 3 carries the outline.
  EXPECT_NE(html.find("class=\"differs first\" title=\"cpu-t3, step 3"), std::string::npos);
  EXPECT_EQ(html.find("class=\"differs first\" title=\"cpu-t3, step 4"), std::string::npos);
  // The steps after it that also differ are one cell spanning them.
  EXPECT_NE(html.find("class=\"differs\" title=\"cpu-t3, steps 4 to "), std::string::npos);
}

TEST(MarkdownReport, EscapesHostileStringsAndNamesTheDivergence) {
  const std::string md = testing::ExportToString(testing::MixedRun(), "md");
  // Markdown renders inline HTML; a backslash before < makes it text.
  EXPECT_NE(md.find("\\<script"), std::string::npos);
  for (size_t at = md.find("<script"); at != std::string::npos; at = md.find("<script", at + 1)) {
    EXPECT_TRUE(at > 0 && md[at - 1] == '\\') << "an unescaped <script at " << at;
  }
  EXPECT_EQ(md.find('\x01'), std::string::npos);
  EXPECT_NE(md.find("## samebits run 42: FAIL"), std::string::npos);
  EXPECT_NE(md.find("| cpu-t3 | FAIL | step 3 (decode, position 13) vs reference |"),
            std::string::npos);
  // The stderr tail holds ``` so its fence must be longer.
  EXPECT_NE(md.find("````\nloading <weights>"), std::string::npos);
}

// The report's verdict is the gate's: a run whose cells all passed but that
// had no reference to check against is not reported as PASS.
TEST(MarkdownReport, NoReferenceIsNotReportedAsPass) {
  RunResult run = testing::MathLibraryRun();
  for (CellResult& cell : run.cells) cell.code = ResultCode::kPass;
  run.diagnosis = Diagnosis{};
  run.diagnosis.kind = Diagnosis::Kind::kNoReference;
  run.diagnosis.headline = "No reference for this platform and math profile.";
  const std::string md = testing::ExportToString(run, "md");
  EXPECT_NE(md.find(": FAIL\n"), std::string::npos) << md.substr(0, 200);
  run.diagnosis.kind = Diagnosis::Kind::kAllAgree;
  EXPECT_NE(testing::ExportToString(run, "md").find(": PASS\n"), std::string::npos);
}

TEST(Reports, UlpStatisticsFromDumps) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("samebits_report_ulp_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  testing::WriteMixedRunDumps(dir.string());
  ReportOptions options;
  options.dump_base_dir = dir.string();
  const auto j =
      nlohmann::json::parse(testing::ExportToString(testing::MixedRun(), "json", options));
  ASSERT_EQ(j.at("logit_comparisons").size(), 1u);
  const auto& c = j.at("logit_comparisons")[0];
  EXPECT_EQ(c.at("config_a"), "reference");
  EXPECT_EQ(c.at("config_b"), "cpu-t3");
  EXPECT_TRUE(c.at("error").is_null());
  EXPECT_EQ(c.at("vocab_size"), 16);
  // Steps 3, 4 and 5 have different hashes, so each is compared.
  ASSERT_EQ(c.at("steps").size(), 3u);
  EXPECT_EQ(c.at("steps")[0].at("step_index"), 3);
  EXPECT_EQ(c.at("steps")[0].at("differing"), 2);
  EXPECT_EQ(c.at("steps")[0].at("argmax_a"), 10);
  EXPECT_EQ(c.at("steps")[0].at("argmax_b"), 8);
  EXPECT_EQ(c.at("steps")[0].at("argmax_changed"), true);
  EXPECT_EQ(c.at("steps")[1].at("differing"), 1);
  EXPECT_EQ(c.at("steps")[1].at("max_ulp"), 2);
  EXPECT_EQ(c.at("steps")[1].at("argmax_changed"), false);
  EXPECT_EQ(c.at("steps")[2].at("max_ulp"), 1);

  // A truncated dump is reported, not thrown.
  std::filesystem::resize_file(dir / "dumps/cpu-t3.f32", 6 * 16 * 4 - 2);
  const auto broken =
      nlohmann::json::parse(testing::ExportToString(testing::MixedRun(), "json", options));
  const std::string error = broken.at("logit_comparisons")[0].at("error");
  EXPECT_NE(error.find("cpu-t3.f32"), std::string::npos) << error;
  EXPECT_NE(error.find("not a whole number of float32 values"), std::string::npos) << error;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace samebits::harness::report
