#include "tests/tokenizer/vocab_cases_helpers.h"

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace samebits::testing {
namespace {

std::string Strip(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string Ids(const std::vector<int32_t>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? " " : "") + std::to_string(ids[i]);
  return out + "]";
}

}  // namespace

std::vector<VocabCase> ParseVocabCases(const std::string& inp_text, const std::string& out_text) {
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  for (size_t pos = 0; pos < inp_text.size();) {
    const size_t next = inp_text.find(sep, pos);
    if (next == std::string::npos) {
      inputs.push_back(inp_text.substr(pos));
      break;
    }
    inputs.push_back(inp_text.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::vector<std::string> lines;
  std::istringstream out_stream(out_text);
  for (std::string line; std::getline(out_stream, line);) lines.push_back(line);
  if (inputs.size() != lines.size()) {
    throw std::runtime_error(std::to_string(inputs.size()) + " inputs but " +
                             std::to_string(lines.size()) + " output lines");
  }
  std::vector<VocabCase> cases(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    cases[i].input = inputs[i];
    std::istringstream ids(Strip(lines[i]));
    for (std::string word; ids >> word;) {
      size_t used = 0;
      const int id = std::stoi(word, &used);
      if (used != word.size())
        throw std::runtime_error("output line " + std::to_string(i + 1) + ": '" + word +
                                 "' is not an id");
      cases[i].expected.push_back(id);
    }
  }
  return cases;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);  // UTF-8 stays readable
    }
  }
  return "\"" + out + "\"";
}

std::vector<std::string> CheckVocabCases(const formats::Vocabulary& vocabulary,
                                         const std::vector<VocabCase>& cases, int* roundtrips) {
  std::vector<std::string> failures;
  *roundtrips = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const VocabCase& c = cases[i];
    const std::vector<int32_t> actual = vocabulary.Tokenize(c.input, false);
    if (actual != c.expected) {
      failures.push_back("case " + std::to_string(i) + " " + Escape(c.input) + ": expected " +
                         Ids(c.expected) + ", got " + Ids(actual));
    }
    bool representable = true;
    for (int32_t id : c.expected) {
      if (id < 0 || id >= vocabulary.size() ||
          vocabulary.piece(id).type == formats::PieceType::kUnknown)
        representable = false;
    }
    if (!representable) continue;
    ++*roundtrips;
    const std::string decoded = vocabulary.Detokenize(c.expected);
    if (decoded != c.input) {
      failures.push_back("case " + std::to_string(i) + " " + Escape(c.input) + ": ids " +
                         Ids(c.expected) + " decode to " + Escape(decoded));
    }
  }
  return failures;
}

}  // namespace samebits::testing
