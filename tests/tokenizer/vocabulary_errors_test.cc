// Vocabularies are untrusted: every id, merge entry and pre-tokenizer name
// of `tokenizer.ggml.*` is checked, with an error naming the file and key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/formats/bpe_tokenizer.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf.h"
#include "engine/formats/gguf_config.h"
#include "engine/formats/vocabulary.h"

namespace samebits::formats {
namespace {

using ::testing::HasSubstr;

GgufValue Str(const std::string& s) {
  GgufValue v;
  v.type = GgufType::kString;
  v.s = s;
  return v;
}
GgufValue U32(uint64_t x) {
  GgufValue v;
  v.type = GgufType::kU32;
  v.u = x;
  return v;
}
GgufValue Strings(const std::vector<std::string>& items) {
  GgufValue v;
  v.type = GgufType::kArray;
  v.elem = GgufType::kString;
  for (const std::string& s : items) v.items.push_back(Str(s));
  return v;
}

// The 256 byte stand-ins of GPT-2, in byte order.
std::vector<std::string> ByteTokens() {
  std::vector<std::string> out;
  for (int b = 0; b < 256; ++b) out.push_back(ByteStandIn(static_cast<uint8_t>(b)));
  return out;
}

// A small valid byte-level BPE vocabulary file: bytes, "he", "Ġhe".
GgufFile BpeFile() {
  GgufFile f;
  f.label = "tiny-bpe.gguf";
  std::vector<std::string> tokens = ByteTokens();
  tokens.push_back("he");
  tokens.push_back("Ġhe");
  f.metadata["tokenizer.ggml.model"] = Str("gpt2");
  f.metadata["tokenizer.ggml.pre"] = Str("gpt-2");
  f.metadata["tokenizer.ggml.tokens"] = Strings(tokens);
  f.metadata["tokenizer.ggml.merges"] = Strings({"h e", "Ġ he"});
  return f;
}

std::string ErrorOf(const GgufFile& f) {
  try {
    GgufVocabulary(f, -1);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(BpeVocabulary, MergesByRankAndDecodesBytes) {
  const auto v = GgufVocabulary(BpeFile(), -1);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->model(), TokenizerModel::kBytePairEncoding);
  EXPECT_FALSE(v->add_bos());  // gpt-2's default without add_bos_token
  EXPECT_EQ(v->Tokenize(" he", false), (std::vector<int32_t>{257}));
  EXPECT_EQ(v->Tokenize("he", false), (std::vector<int32_t>{256}));
  EXPECT_EQ(v->Tokenize("eh", false), (std::vector<int32_t>{'e', 'h'}));  // byte b is piece b
  EXPECT_EQ(v->Detokenize(v->Tokenize("a\xFF\n he", false)), "a\xFF\n he");
}

TEST(BpeVocabulary, MalformedMergeIsNamed) {
  GgufFile f = BpeFile();
  f.metadata["tokenizer.ggml.merges"] = Strings({"h e", "nospace"});
  EXPECT_THAT(ErrorOf(f), HasSubstr("tiny-bpe.gguf: tokenizer.ggml.merges[1] 'nospace' is not two "
                                    "pieces separated by a space"));
  f.metadata["tokenizer.ggml.merges"] = Strings({"h "});
  EXPECT_THAT(ErrorOf(f), HasSubstr("tokenizer.ggml.merges[0]"));
  f.metadata.erase("tokenizer.ggml.merges");
  EXPECT_THAT(ErrorOf(f), HasSubstr("'tokenizer.ggml.merges' is missing"));
}

TEST(BpeVocabulary, UnknownPreTokenizerListsTheKnownOnes) {
  GgufFile f = BpeFile();
  f.metadata["tokenizer.ggml.pre"] = Str("klingon");
  EXPECT_THAT(ErrorOf(f), HasSubstr("tokenizer.ggml.pre 'klingon' is not a pre-tokenizer"));
  EXPECT_THAT(ErrorOf(f), HasSubstr("qwen2"));
  // A model file with that vocabulary still loads, without a vocabulary.
  EXPECT_EQ(GgufVocabulary(f, 258), nullptr);
}

TEST(BpeVocabulary, MissingBytePieceRefusesOnlyATextThatNeedsIt) {
  GgufFile f = BpeFile();
  std::vector<std::string> tokens = ByteTokens();
  tokens[65] = "not-A";
  f.metadata["tokenizer.ggml.tokens"] = Strings(tokens);
  f.metadata["tokenizer.ggml.merges"] = Strings({});
  // It loads, as llama.cpp loads such vocabularies, and encodes other text.
  const auto vocabulary = GgufVocabulary(f, -1);
  ASSERT_NE(vocabulary, nullptr);
  EXPECT_FALSE(vocabulary->Tokenize("bcd", false).empty());
  try {
    vocabulary->Tokenize("xyzA", false);
    FAIL() << "a text needing the missing byte was encoded";
  } catch (const CheckpointError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the text needs byte 0x41 at byte offset 3"));
  }
}

TEST(BpeVocabulary, SpecialIdsAreChecked) {
  GgufFile f = BpeFile();
  f.metadata["tokenizer.ggml.bos_token_id"] = U32(258);
  EXPECT_THAT(ErrorOf(f), HasSubstr("tokenizer.ggml.bos_token_id' is 258, outside [0, 257]"));
  f.metadata["tokenizer.ggml.bos_token_id"] = U32(0xFFFFFFFFu);
  EXPECT_THAT(ErrorOf(f), HasSubstr("tokenizer.ggml.bos_token_id"));
  f.metadata.erase("tokenizer.ggml.bos_token_id");
  GgufValue yes;
  yes.type = GgufType::kBool;
  yes.b = true;
  f.metadata["tokenizer.ggml.add_bos_token"] = yes;
  EXPECT_THAT(ErrorOf(f),
              HasSubstr("add_bos_token is true but tokenizer.ggml.bos_token_id is missing"));
}

TEST(BpeVocabulary, MergesMustBeStrings) {
  GgufFile f = BpeFile();
  GgufValue numbers;
  numbers.type = GgufType::kArray;
  numbers.elem = GgufType::kU32;
  numbers.items = {U32(1)};
  f.metadata["tokenizer.ggml.merges"] = numbers;
  EXPECT_THAT(ErrorOf(f), HasSubstr("'tokenizer.ggml.merges' has type array of uint32"));
}

TEST(SentencePieceVocabulary, UserDefinedPiecesAreCutOutFirst) {
  // phi-3's rule (llama.cpp): user-defined pieces are matched in the text
  // before encoding, and the text after one gets the prefix space again.
  std::vector<Piece> pieces = {
      {"<unk>", 0, PieceType::kUnknown}, {"<s>", 0, PieceType::kControl},
      {"</s>", 0, PieceType::kControl},  {"<|user|>", 0, PieceType::kUserDefined},
      {"▁", -1, PieceType::kNormal},     {"a", -2, PieceType::kNormal},
      {"▁a", -1, PieceType::kNormal}};
  const Vocabulary v(std::move(pieces), 1, 2, "spm");
  EXPECT_EQ(v.Tokenize("a<|user|>a", false), (std::vector<int32_t>{6, 3, 6}));
  EXPECT_EQ(v.Tokenize("a", true), (std::vector<int32_t>{1, 6}));
  EXPECT_EQ(v.Detokenize(std::vector<int32_t>{1, 6, 3}), "a<|user|>");
}

}  // namespace
}  // namespace samebits::formats
