#include "engine/formats/vocabulary.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "engine/formats/bpe_tokenizer.h"
#include "engine/formats/byte_reader.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/mapped_file.h"
#include "engine/formats/pair_merge.h"
#include "engine/formats/utf8.h"

namespace samebits::formats {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// Returns `s` with every `▁` replaced by a space, so that GGUF pieces and
// llama2.c pieces (which store plain spaces) look up the same way.
std::string Normalise(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, kSpaceMark.size(), kSpaceMark) == 0) {
      out.push_back(' ');
      i += kSpaceMark.size();
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// Returns the byte of a `<0xNN>` piece, or -1 when `s` is not one.
int ByteOfPiece(std::string_view s) {
  if (s.size() != 6 || s.substr(0, 3) != "<0x" || s[5] != '>') return -1;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(s[3]), lo = hex(s[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// Returns SentencePiece options with special ids `bos_id` and `eos_id`.
VocabularyOptions OptionsWithIds(int32_t bos_id, int32_t eos_id) {
  VocabularyOptions options;
  options.bos_id = bos_id;
  options.eos_id = eos_id;
  return options;
}

}  // namespace

Vocabulary::Vocabulary(std::vector<Piece> pieces, int32_t bos_id, int32_t eos_id,
                       const std::string& label)
    : Vocabulary(std::move(pieces), OptionsWithIds(bos_id, eos_id), label) {}

Vocabulary::Vocabulary(std::vector<Piece> pieces, VocabularyOptions options,
                       const std::string& label)
    : pieces_(std::move(pieces)),
      options_(std::move(options)),
      bos_id_(options_.bos_id),
      eos_id_(options_.eos_id) {
  if (pieces_.empty()) throw CheckpointError(label + ": the vocabulary has no pieces");
  const auto n = static_cast<int64_t>(pieces_.size());
  if (n > INT32_MAX) throw CheckpointError(label + ": the vocabulary has too many pieces");
  for (int32_t id : {bos_id_, eos_id_}) {
    if (id < -1 || id >= n) {
      throw CheckpointError(label + ": special token id " + std::to_string(id) +
                            " is outside the vocabulary of " + std::to_string(n) + " pieces");
    }
  }
  std::fill(std::begin(byte_ids_), std::end(byte_ids_), -1);
  by_text_.reserve(pieces_.size());
  for (int32_t id = 0; id < static_cast<int32_t>(n); ++id) {
    const Piece& p = pieces_[id];
    // A NaN score has no place in the merge order.
    if (std::isnan(p.score)) {
      throw CheckpointError(label + ": piece " + std::to_string(id) + " has a NaN score");
    }
    if (p.type == PieceType::kUnknown && unk_id_ < 0) unk_id_ = id;
    if (p.type == PieceType::kUserDefined && !p.text.empty()) user_defined_.push_back(id);
    const int b = ByteOfPiece(p.text);
    if (b >= 0 && (p.type == PieceType::kByte || p.type == PieceType::kNormal) &&
        byte_ids_[b] < 0) {
      byte_ids_[b] = id;
    }
    // Control pieces (<s>, </s>) never come out of plain text.
    if (p.type == PieceType::kControl || p.type == PieceType::kByte) continue;
    by_text_.emplace(Normalise(p.text), id);  // keeps the lowest id
  }
  // Longer user-defined pieces are cut out first, as llama.cpp does.
  std::stable_sort(user_defined_.begin(), user_defined_.end(), [&](int32_t a, int32_t b) {
    return pieces_[a].text.size() > pieces_[b].text.size();
  });
  if (options_.model == TokenizerModel::kBytePairEncoding) {
    bpe_ = std::make_shared<const BpeTokenizer>(pieces_, options_.merges, options_.pre, label);
    add_bos_ = options_.add_bos.value_or(bpe_->patterns().add_bos);
  } else {
    add_bos_ = options_.add_bos.value_or(true);
  }
}

Vocabulary::~Vocabulary() = default;

int32_t Vocabulary::Lookup(std::string_view s) const {
  const auto it = by_text_.find(std::string(s));
  return it == by_text_.end() ? -1 : it->second;
}

std::vector<int32_t> Vocabulary::Tokenize(std::string_view text, bool add_bos) const {
  std::vector<int32_t> ids;
  if (add_bos && bos_id_ >= 0) ids.push_back(bos_id_);
  if (text.empty()) return ids;

  // Cut out the user-defined pieces, longest first, each from what the
  // longer ones left: stretches of text, and pieces (id >= 0).
  struct Fragment {
    size_t begin, size;
    int32_t id;
  };
  std::vector<Fragment> fragments{{0, text.size(), -1}}, next;
  for (int32_t id : user_defined_) {
    const std::string& t = pieces_[id].text;
    next.clear();
    for (const Fragment& f : fragments) {
      if (f.id >= 0) {
        next.push_back(f);
        continue;
      }
      const std::string_view within = text.substr(0, f.begin + f.size);
      size_t at = f.begin;
      for (size_t m; (m = within.find(t, at)) != std::string_view::npos; at = m + t.size()) {
        if (m > at) next.push_back({at, m - at, -1});
        next.push_back({m, t.size(), id});
      }
      if (at < f.begin + f.size) next.push_back({at, f.begin + f.size - at, -1});
    }
    fragments.swap(next);
  }

  bool after_special = true;  // SentencePiece's prefix space goes after these
  std::string work;
  for (const Fragment& f : fragments) {
    if (f.id >= 0) {
      ids.push_back(f.id);
      after_special = true;
      continue;
    }
    const std::string_view part = text.substr(f.begin, f.size);
    if (bpe_) {
      bpe_->Encode(part, ids, f.begin);
    } else {
      work.clear();
      if (options_.add_space_prefix && after_special) work.push_back(' ');
      work.append(part);
      EncodeSentencePiece(work, ids);
    }
    after_special = false;
  }
  return ids;
}

void Vocabulary::EncodeSentencePiece(std::string_view text, std::vector<int32_t>& out) const {
  // A pair merges when it forms a piece; the piece of highest score first
  // (negated into a rank: the order llama2.c's and llama.cpp's encoders
  // agree on, leftmost on ties).
  std::string joined;
  const auto rank_of = [&](std::string_view left, std::string_view right) -> std::optional<float> {
    // A character that is no piece has already become byte pieces, which
    // merge with nothing (llama2.c's rule, which the committed references
    // follow; llama.cpp would still merge it into a longer piece: see
    // engine/formats/README.md).
    if (Lookup(left) < 0 || Lookup(right) < 0) return std::nullopt;
    joined.assign(left);
    joined.append(right);
    const int32_t id = Lookup(joined);
    if (id < 0) return std::nullopt;
    return -pieces_[id].score;
  };
  // Every merged symbol is a piece; a single character may not be: then
  // its bytes' pieces, or the unknown piece.
  for (const MergedSymbol& m : MergePairs<float>(text, rank_of)) {
    const std::string_view s = text.substr(m.start, m.size);
    const int32_t id = Lookup(s);
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    for (char c : s) {
      const int32_t b = byte_ids_[static_cast<unsigned char>(c)];
      if (b >= 0) {
        out.push_back(b);
      } else if (unk_id_ >= 0) {
        out.push_back(unk_id_);
      }
    }
  }
}

std::string Vocabulary::DecodeToken(int32_t prev, int32_t token) const {
  if (token < 0 || token >= size()) return {};
  const Piece& p = pieces_[token];
  if (bpe_) return BpeTokenizer::Decode(p);
  if (p.type == PieceType::kControl || p.type == PieceType::kUnused) return {};
  if (p.type == PieceType::kUserDefined) return p.text;
  const int b = ByteOfPiece(p.text);
  if (b >= 0 && p.type == PieceType::kByte) return std::string(1, static_cast<char>(b));
  std::string s = Normalise(p.text);
  // The prefix space belongs to no word: drop it at the start.
  if (options_.add_space_prefix && (prev < 0 || prev == bos_id_) && !s.empty() && s[0] == ' ')
    s.erase(0, 1);
  return s;
}

std::string Vocabulary::Detokenize(std::span<const int32_t> tokens) const {
  std::string out;
  int32_t prev = -1;
  for (int32_t t : tokens) {
    out += DecodeToken(prev, t);
    prev = t;
  }
  return out;
}

std::shared_ptr<const Vocabulary> ParseTokenizerBin(std::span<const std::byte> bytes,
                                                    const std::string& label, int expected_count) {
  ByteReader r(bytes, label);
  const int32_t max_len = r.I32("max_token_length");
  if (max_len <= 0) r.Fail("max_token_length is " + std::to_string(max_len) + ", not positive");
  std::vector<Piece> pieces;
  while (expected_count < 0 ? r.remaining() > 0
                            : static_cast<int>(pieces.size()) < expected_count) {
    Piece p;
    p.score = r.F32("a piece's score");
    const int32_t len = r.I32("a piece's length");
    if (len < 0 || len > max_len) {
      r.Fail("piece " + std::to_string(pieces.size()) + " has length " + std::to_string(len) +
             " (max_token_length is " + std::to_string(max_len) + ")");
    }
    p.text = std::string(r.Bytes(static_cast<uint64_t>(len), "a piece's bytes"));
    // llama2.c's file has no types: recover the ones its encoder relies on.
    const auto id = pieces.size();
    if (id == 0) {
      p.type = PieceType::kUnknown;
    } else if (id == 1 || id == 2) {
      p.type = PieceType::kControl;
    } else if (ByteOfPiece(p.text) >= 0) {
      p.type = PieceType::kByte;
    }
    pieces.push_back(std::move(p));
  }
  if (expected_count >= 0 && r.remaining() > 0) {
    r.Fail(std::to_string(r.remaining()) + " bytes follow the last of " +
           std::to_string(expected_count) + " pieces");
  }
  if (pieces.size() < 3) r.Fail("fewer than 3 pieces (<unk>, <s>, </s> are expected first)");
  return std::make_shared<const Vocabulary>(std::move(pieces), 1, 2, label);
}

std::shared_ptr<const Vocabulary> LoadTokenizerBin(const std::string& path, int expected_count) {
  const auto file = MappedFile::Open(path);
  return ParseTokenizerBin(file->bytes(), path, expected_count);
}

std::vector<std::byte> WriteTokenizerBin(const Vocabulary& vocabulary) {
  std::vector<std::byte> out;
  auto put32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>(v >> (8 * i)));
  };
  size_t max_len = 1;
  for (const Piece& p : vocabulary.pieces()) max_len = std::max(max_len, p.text.size());
  put32(static_cast<uint32_t>(max_len));
  for (const Piece& p : vocabulary.pieces()) {
    uint32_t bits;
    std::memcpy(&bits, &p.score, 4);
    put32(bits);
    put32(static_cast<uint32_t>(p.text.size()));
    for (char c : p.text) out.push_back(static_cast<std::byte>(c));
  }
  return out;
}

}  // namespace samebits::formats
