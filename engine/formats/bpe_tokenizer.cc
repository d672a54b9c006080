#include "engine/formats/bpe_tokenizer.h"

#include <array>
#include <cstdio>
#include <optional>

#include "engine/formats/checkpoint.h"
#include "engine/formats/pair_merge.h"
#include "engine/formats/utf8.h"

namespace samebits::formats {
namespace {

// GPT-2's `bytes_to_unicode`: printable Latin-1 bytes stand for themselves,
// the other bytes for U+0100 onwards in byte order, so that every piece is
// printable text without spaces.
struct ByteSpelling {
  std::array<std::string, 256> of_byte;  // byte -> UTF-8 of its stand-in
  std::array<int, 512> byte_of{};        // stand-in code point -> byte, or -1

  ByteSpelling() {
    byte_of.fill(-1);
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const uint32_t cp = printable ? static_cast<uint32_t>(b) : next++;
      AppendUtf8(cp, of_byte[b]);
      byte_of[cp] = b;
    }
  }
};

const ByteSpelling& Spelling() {
  static const ByteSpelling spelling;
  return spelling;
}

// Returns the code point of the UTF-8 character `s` (at most 4 bytes), or
// -1 when it is not a well-formed one.
int64_t CodePoint(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  if (s.size() == 1 && b(0) < 0x80) return b(0);
  if (s.empty() || s.size() != Utf8Length(b(0))) return -1;
  int64_t cp = b(0) & (0x7F >> s.size());
  for (size_t i = 1; i < s.size(); ++i) {
    if ((b(i) & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (b(i) & 0x3F);
  }
  return cp;
}

// Returns the byte of a `<0xNN>` piece, or -1.
int HexBytePiece(std::string_view s) {
  if (s.size() != 6 || s.substr(0, 3) != "<0x" || s[5] != '>') return -1;
  const auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  };
  const int hi = hex(s[3]), lo = hex(s[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

}  // namespace

const std::string& ByteStandIn(uint8_t b) {
  return Spelling().of_byte[b];
}

BpeTokenizer::BpeTokenizer(const std::vector<Piece>& pieces, const std::vector<std::string>& merges,
                           const std::string& pre, const std::string& label) {
  patterns_ = FindPreTokenizer(pre);
  if (patterns_ == nullptr) {
    throw CheckpointError(
        label + ": tokenizer.ggml.pre '" + pre +
        "' is not a pre-tokenizer this engine knows (known: " + KnownPreTokenizers() + ")");
  }
  pre_ = std::make_unique<PreTokenizer>(*patterns_, label);
  label_ = label;

  ids_.reserve(pieces.size());
  for (size_t id = 0; id < pieces.size(); ++id) {
    // Control pieces (<|endoftext|>) never come out of plain text.
    if (pieces[id].type == PieceType::kControl) continue;
    ids_.emplace(pieces[id].text, static_cast<int32_t>(id));  // keeps the lowest id
  }
  // Several widely used vocabularies lack a few bytes (control characters):
  // they load, as in llama.cpp, and only a text that needs one is refused.
  for (int b = 0; b < 256; ++b) {
    const auto it = ids_.find(Spelling().of_byte[b]);
    byte_ids_[b] = it == ids_.end() ? -1 : it->second;
  }

  ranks_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string& m = merges[i];
    // The first space after the first byte separates the pair (llama.cpp's
    // rule, so that a left part may itself be a space).
    const size_t space = m.size() < 2 ? std::string::npos : m.find(' ', 1);
    if (space == std::string::npos || space + 1 >= m.size()) {
      throw CheckpointError(label + ": tokenizer.ggml.merges[" + std::to_string(i) + "] '" +
                            m.substr(0, 64) + "' is not two pieces separated by a space");
    }
    if (i > static_cast<size_t>(INT32_MAX)) {
      throw CheckpointError(label + ": tokenizer.ggml.merges has too many entries");
    }
    ranks_.emplace(m, static_cast<int32_t>(i));  // keeps the lowest rank
  }
}

int32_t BpeTokenizer::Rank(std::string_view left, std::string_view right,
                           std::string& scratch) const {
  scratch.assign(left);
  scratch.push_back(' ');
  scratch.append(right);
  const auto it = ranks_.find(scratch);
  return it == ranks_.end() ? -1 : it->second;
}

void BpeTokenizer::Encode(std::string_view text, std::vector<int32_t>& out, size_t offset) const {
  std::string word;
  for (std::string_view raw : pre_->Split(text)) {
    word.clear();
    for (char c : raw) word += Spelling().of_byte[static_cast<unsigned char>(c)];
    EncodeWord(word, out, offset + static_cast<size_t>(raw.data() - text.data()));
  }
}

void BpeTokenizer::EncodeWord(const std::string& word, std::vector<int32_t>& out,
                              size_t offset) const {
  if (patterns_->ignore_merges) {
    const auto it = ids_.find(word);
    if (it != ids_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  // One symbol per stand-in character (one per byte of the raw text) to begin with.
  std::string scratch;
  const std::string_view w(word);
  const auto rank_of = [&](std::string_view left, std::string_view right) {
    const int32_t rank = Rank(left, right, scratch);
    return rank < 0 ? std::nullopt : std::optional<int32_t>(rank);
  };
  for (const MergedSymbol& s : MergePairs<int32_t>(w, rank_of)) {
    const auto it = ids_.find(std::string(w.substr(s.start, s.size)));
    if (it != ids_.end()) {
      out.push_back(it->second);
      continue;
    }
    // A merge whose result is no piece: spell the symbol byte by byte.
    for (size_t at = s.start; at < s.start + s.size;) {
      const size_t n = Utf8CharAt(word, at);
      const int64_t cp = CodePoint(w.substr(at, n));
      if (cp >= 0 && cp < 512 && Spelling().byte_of[cp] >= 0) {
        const int b = Spelling().byte_of[cp];
        if (byte_ids_[b] < 0) {
          // Each stand-in character is one byte of the text: count them.
          size_t position = offset;
          for (size_t i = 0; i < at; i += Utf8CharAt(word, i)) ++position;
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(b));
          throw CheckpointError(label_ + ": the text needs byte " + hex + " at byte offset " +
                                std::to_string(position) +
                                ", for which the byte-level vocabulary has no piece ('" +
                                Spelling().of_byte[b] + "'), so it cannot be encoded");
        }
        out.push_back(byte_ids_[b]);
      }
      at += n;
    }
  }
}

std::string BpeTokenizer::Decode(const Piece& piece) {
  switch (piece.type) {
    case PieceType::kControl:
    case PieceType::kUnknown:
    case PieceType::kUnused:
      return {};
    case PieceType::kUserDefined:
      return piece.text;
    case PieceType::kByte: {
      const int b = HexBytePiece(piece.text);
      if (b >= 0) return std::string(1, static_cast<char>(b));
      break;
    }
    case PieceType::kNormal:
      break;
  }
  std::string out;
  const std::string_view t(piece.text);
  for (size_t at = 0; at < t.size();) {
    const size_t n = Utf8CharAt(t, at);
    const int64_t cp = CodePoint(t.substr(at, n));
    if (cp >= 0 && cp < 512 && Spelling().byte_of[cp] >= 0) {
      out.push_back(static_cast<char>(Spelling().byte_of[cp]));
    } else {
      out.append(t.substr(at, n));  // not a stand-in: keep it as it is
    }
    at += n;
  }
  return out;
}

}  // namespace samebits::formats
