// The greedy pair merging both tokenizers share: text starts as one symbol
// per UTF-8 character, and the adjacent pair of best rank merges into one
// symbol, again and again, until no adjacent pair has a rank. SentencePiece
// ranks a pair by the score of the piece it forms (higher is better),
// byte-level BPE by its merge's position (lower is better); both take the
// leftmost pair on ties, as llama.cpp does.
#pragma once

#include <cstddef>
#include <optional>
#include <queue>
#include <string_view>
#include <vector>

#include "engine/formats/utf8.h"

namespace samebits::formats {

struct MergedSymbol {
  size_t start = 0;  // in the text
  size_t size = 0;
};

// Returns the symbols `text` ends as, in order. `rank_of(left, right)`
// returns the rank of merging two adjacent symbols (lower merges first),
// or std::nullopt when they do not merge. Runs in O(n log n) lookups.
template <typename Rank, typename RankOf>
std::vector<MergedSymbol> MergePairs(std::string_view text, RankOf rank_of) {
  // Symbols are linked so that merged-away ones drop out.
  struct Symbol {
    size_t start = 0, size = 0;
    int prev = -1, next = -1;
  };
  std::vector<Symbol> symbols;
  for (size_t at = 0; at < text.size();) {
    Symbol s;
    s.start = at;
    s.size = Utf8CharAt(text, at);
    s.prev = static_cast<int>(symbols.size()) - 1;
    at += s.size;
    s.next = at < text.size() ? static_cast<int>(symbols.size()) + 1 : -1;
    symbols.push_back(s);
  }
  // A candidate is stale once either side has merged with another symbol
  // (its size changed, or it is gone).
  struct Candidate {
    Rank rank;
    int left, right;
    size_t left_size, right_size;
  };
  const auto later = [](const Candidate& a, const Candidate& b) {
    return b.rank < a.rank || (!(a.rank < b.rank) && a.left > b.left);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
  const auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[left];
    const Symbol& r = symbols[right];
    const std::optional<Rank> rank =
        rank_of(text.substr(l.start, l.size), text.substr(r.start, r.size));
    if (rank) queue.push({*rank, left, right, l.size, r.size});
  };
  for (size_t i = 1; i < symbols.size(); ++i)
    consider(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& l = symbols[c.left];
    Symbol& r = symbols[c.right];
    if (l.size != c.left_size || r.size != c.right_size || l.next != c.right) continue;
    l.size += r.size;
    r.size = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[r.next].prev = c.left;
    consider(l.prev, c.left);
    consider(c.left, l.next);
  }
  std::vector<MergedSymbol> out;
  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    out.push_back({symbols[i].start, symbols[i].size});
  }
  return out;
}

}  // namespace samebits::formats
