// `samebits-engine tokenize --vocab FILE`: text on stdin to token ids on
// stdout (one line, space-separated), or with --decode ids back to text,
// with the vocabulary of any GGUF (vocabulary-only files included) or a
// llama2.c tokenizer.bin: the same tokenizer scenarios' text goes through.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "engine/cli/commands.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/vocabulary_file.h"

namespace samebits::cli {
namespace {

struct TokenizeOptions {
  std::string vocab_path;
  bool bos = false;
  bool decode = false;
};

// Returns the ids in `text`, or throws UsageError naming the first word
// that is no id of `vocabulary`.
std::vector<int32_t> ParseIds(const std::string& text, const formats::Vocabulary& vocabulary) {
  std::vector<int32_t> ids;
  size_t at = 0;
  while (true) {
    at = text.find_first_not_of(" \t\r\n\f\v", at);
    if (at == std::string::npos) break;
    const size_t end = std::min(text.find_first_of(" \t\r\n\f\v", at), text.size());
    const std::string word = text.substr(at, end - at);
    long long id = -1;
    size_t used = 0;
    try {
      id = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || word[0] == '+') {
      throw UsageError("--decode: '" + word.substr(0, 40) + "' on stdin is not a token id");
    }
    if (id < 0 || id >= vocabulary.size()) {
      throw UsageError("--decode: token id " + word + " is outside the vocabulary of " +
                       std::to_string(vocabulary.size()) + " pieces");
    }
    ids.push_back(static_cast<int32_t>(id));
    at = end;
  }
  return ids;
}

int RunTokenize(const TokenizeOptions& options) {
  std::shared_ptr<const formats::Vocabulary> vocabulary;
  try {
    vocabulary = formats::LoadVocabularyFile(options.vocab_path);
  } catch (const formats::CheckpointError& e) {
    throw UsageError(e.what());
  }
  std::cin >> std::noskipws;
  const std::string input((std::istreambuf_iterator<char>(std::cin)),
                          std::istreambuf_iterator<char>());
  std::string out;
  if (options.decode) {
    out = vocabulary->Detokenize(ParseIds(input, *vocabulary));
  } else {
    if (options.bos && vocabulary->bos_id() < 0) {
      throw UsageError("--bos: " + options.vocab_path +
                       " has no BOS token (tokenizer.ggml.bos_token_id)");
    }
    const std::vector<int32_t> ids = vocabulary->Tokenize(input, options.bos);
    for (size_t i = 0; i < ids.size(); ++i) out += (i ? " " : "") + std::to_string(ids[i]);
    out += "\n";
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

CommandSpec SetupTokenize(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "tokenize", "Turns text on stdin into token ids (or ids into text) with a vocabulary file.");
  auto options = std::make_shared<TokenizeOptions>();
  sub->add_option("--vocab", options->vocab_path,
                  "The vocabulary: a GGUF file with tokenizer.ggml.* keys (a model or a "
                  "vocabulary-only file such as llama.cpp's ggml-vocab-*.gguf) or a llama2.c "
                  "tokenizer.bin.")
      ->option_text("FILE")
      ->required();
  sub->add_flag("--bos", options->bos,
                "Start the ids with the vocabulary's BOS token (by default there is none, "
                "as with llama.cpp's add_special=false).");
  sub->add_flag("--decode", options->decode,
                "Read token ids (separated by white space) on stdin and print their text "
                "instead.");
  sub->footer(
      "The text on stdin is taken exactly as it is, a final newline included.\n"
      "Examples:\n"
      "  printf 'Hello world' | samebits-engine tokenize --vocab ggml-vocab-qwen2.gguf\n"
      "  echo 9707 1879 | samebits-engine tokenize --vocab ggml-vocab-qwen2.gguf --decode");
  return {sub, [options] { return RunTokenize(*options); }};
}

}  // namespace
SAMEBITS_REGISTER_COMMAND(tokenize, 45, SetupTokenize);
}  // namespace samebits::cli
