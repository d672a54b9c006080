#include "engine/formats/pretokenizer_patterns.h"

#include <array>

namespace samebits::formats {
namespace {

// GPT-2's own split: contractions, letters, digits, other symbols, spaces.
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";

// llama-3's split; llama.cpp spells `(?i:'s|...)` out as character classes.
constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Qwen2's: llama-3's with single digits.
constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Tekken's and GPT-4o's: a word is an upper-case run then a lower-case run.
constexpr const char* kTekken =
    R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kGpt4o =
    R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// DeepSeek LLM's cased-letter class, as its tokenizer.json lists it.
constexpr const char* kDeepseekLetters =
    R"(\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+)";

struct Family {
  std::vector<std::string> names;
  PreTokenizerPatterns patterns;
};

const std::vector<Family>& Families() {
  static const std::vector<Family> families = {
      {{"default", ""},
       {{R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}, false, false}},
      {{"gpt-2", "phi-2", "mpt", "olmo", "jais", "gigachat", "exaone4"}, {{kGpt2}, false, false}},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral"}, {{kLlama3}, true, true}},
      {{"dbrx", "smaug-bpe", "chatglm-bpe", "glm4"}, {{kLlama3}, false, false}},
      {{"qwen2", "stablelm2", "deepseek-r1-qwen", "megrez"}, {{kQwen2}, false, false}},
      {{"deepseek-llm"},
       {{R"([\r\n])", kDeepseekLetters, R"(\s?[!-/:-~！-／：-～‘-‟　-。]+)", R"(\s+$)",
         R"([一-龥ࠀ-一가-퟿]+)", R"(\p{N}+)"},
        false,
        false}},
      {{"deepseek-coder"},
       {{R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", R"([一-龥ࠀ-一가-퟿]+)", R"(\p{N})"},
        false,
        false}},
      {{"falcon"}, {{R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}, false, false}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"},
       {{R"(\p{N})", kGpt2}, false, false}},
      {{"poro-chat", "bloom", "gpt3-finnish"}, {{R"( ?[^(\s|.,!?…。，、।۔،)]+)"}, false, false}},
      {{"viking"}, {{R"( ?[^(\s|.,!?…。，、।۔،)]+)", R"(\p{N})"}, false, false}},
      {{"tekken"}, {{kTekken}, true, true}},
      {{"gpt-4o", "llama4"}, {{kGpt4o}, false, false}},
  };
  return families;
}

}  // namespace

const PreTokenizerPatterns* FindPreTokenizer(std::string_view name) {
  for (const Family& f : Families()) {
    for (const std::string& n : f.names) {
      if (n == name) return &f.patterns;
    }
  }
  return nullptr;
}

std::string KnownPreTokenizers() {
  std::string out;
  for (const Family& f : Families()) {
    for (const std::string& n : f.names) {
      if (n.empty()) continue;
      if (!out.empty()) out += ", ";
      out += n;
    }
  }
  return out;
}

}  // namespace samebits::formats
