// The integer-profile products (C12) in AVX2 over rows repacked sixteen
// to a tile (int8_repack.h), decode's and prefill's (several activation
// rows, below): the layout AVX-512 reads sixteen rows to a
// vector, read here eight rows to a vector, rows 0-7 of a tile from the
// first 32 bytes of each 64 and rows 8-15 from the last 32. Lane r of every
// vector is one row, so each scale group's exact integer sum forms in its
// row's lane with no horizontal sum: the row-by-row loops
// (int8_group_rows.h) spent most of their time on those sums and on
// unpacking a batch to memory and reading it back.
//
// The bits are the definition's (C12.3), as in the AVX-512 kernels: group g
// of a row goes into f32 lane-vector g mod 16 by the same two fmas, and
// C1's tree adds the sixteen lane-vectors of each row at the end.
//
// The exact sums: nibbles (Q4_K, Q4_0) are unsigned and at most 15, so a
// pmaddubsw pair of products is at most 2 * 15 * 127 and eight pairs of a
// group add up in 16 bits (16 * 15 * 127 = 30480 < 2^15) before one
// pmaddwd by ones widens them; Q8_0's signed weights take pmaddubsw(|w|,
// a with w's sign), whose pairs (at most 2 * 128 * 127) are widened at once.
//
// Like every ISA file it exports only its functions (kernel_tables.h) and
// instantiates no standard-library template (isa_symbols_test).
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "engine/kernels/int8_repack.h"
#include "engine/kernels/int8_rows.h"
#include "engine/kernels/kernel_tables.h"
#include "engine/kernels/stream_prefetch.h"

namespace samebits::kernels::internal {
namespace {

using numerics::Int8Activations;
using numerics::QuantType;

// A tile's rows in two halves of eight, each half's sixteen f32
// lane-vectors (lane r: row 8 * half + r).
struct TileLanes {
  __m256 v[2][16];
};

// C1's tree over one half's sixteen lane-vectors, and the rows of tile g
// that lie in [row_begin, row_end) written to y.
inline void StoreRowSums(const TileLanes& lanes, int64_t g, int64_t row_begin, int64_t row_end,
                         float* y) {
  alignas(32) float out[16];
  for (int64_t half = 0; half < 2; ++half) {
    const __m256* l = lanes.v[half];
    __m256 s8[8], s4[4];
    for (int i = 0; i < 8; ++i) s8[i] = _mm256_add_ps(l[i], l[i + 8]);
    for (int i = 0; i < 4; ++i) s4[i] = _mm256_add_ps(s8[i], s8[i + 4]);
    _mm256_store_ps(out + 8 * half,
                    _mm256_add_ps(_mm256_add_ps(s4[0], s4[2]), _mm256_add_ps(s4[1], s4[3])));
  }
  const int64_t first = g * 16 > row_begin ? g * 16 : row_begin;
  const int64_t last = g * 16 + 16 < row_end ? g * 16 + 16 : row_end;
  std::memcpy(y + (first - row_begin), out + (first - g * 16),
              static_cast<size_t>(last - first) * sizeof(float));
}

inline void ZeroLanes(TileLanes* lanes) {
  for (auto& half : lanes->v) {
    for (__m256& lane : half) lane = _mm256_setzero_ps();
  }
}

// Four activation bytes in every 32-bit lane.
inline __m256i Broadcast4(const int8_t* a) {
  int32_t four;
  std::memcpy(&four, a, 4);
  return _mm256_set1_epi32(four);
}

// Eight F16 values of a tile, one per row of `half`, as f32 lanes.
inline __m256 HalfRowsF16(const uint8_t* at, int64_t half) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 16 * half)));
}

// Eight unsigned bytes of a tile, one per row of `half`, as f32 lanes.
inline __m256 HalfRowsU8(const uint8_t* at, int64_t half) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(at + 8 * half))));
}

// Adds, in 16-bit lanes, the products of one 64-byte quarter of repacked
// nibbles (row r's bytes at 4r..4r+3, byte t holding weight t in its low
// nibble and 4 + t in its high) with the eight activations at `a`, to each
// half's pair sums: four pmaddubsw.
inline void AddNibbleQuarter(const uint8_t* quarter, const int8_t* a, __m256i pairs[2]) {
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const __m256i lo_a = Broadcast4(a), hi_a = Broadcast4(a + 4);
  for (int64_t half = 0; half < 2; ++half) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(quarter + 32 * half));
    const __m256i lo = _mm256_maddubs_epi16(_mm256_and_si256(v, nibble), lo_a);
    const __m256i hi =
        _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), nibble), hi_a);
    pairs[half] = _mm256_add_epi16(pairs[half], _mm256_add_epi16(lo, hi));
  }
}

// Each row's 32-bit sum of its 16-bit pair sums.
inline __m256i WidenPairs(__m256i pairs) {
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

// The traversal the three kernels share: each tile of sixteen rows that
// touches [row_begin, row_end), its lanes zeroed, `block(tile, b, lanes)`
// for each of its blocks in order, then its rows' sums written to y.
template <int64_t kTileBytes, int64_t kBlockWeights, class Block>
inline void ForEachTile(const uint8_t* packed, int64_t k, int64_t row_begin, int64_t row_end,
                        float* y, Block block) {
  const int64_t blocks = k / kBlockWeights;
  TileLanes lanes;
  for (int64_t g = row_begin / 16; g * 16 < row_end; ++g) {
    ZeroLanes(&lanes);
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* tile = packed + (g * blocks + b) * kTileBytes;
      HintStreamAhead(tile, kTileBytes);
      block(tile, b, lanes);
    }
    StoreRowSums(lanes, g, row_begin, row_end, y);
  }
}

// Q4_K: scale group j of super-block b (group 8b + j of the row) forms its
// exact sum from four quarters, then C12.3's two fmas go into lane-vector
// (8b + j) mod 16.
void GemvQ4K(const uint8_t* packed, const Int8Activations& x, int64_t k, int64_t row_begin,
             int64_t row_end, float* y) {
  const auto block = [&x](const uint8_t* tile, int64_t b, TileLanes& lanes) {
    const __m256 d_a = _mm256_set1_ps(x.d[b]);
    const int8_t* a = x.q + b * 256;
    // The super-block's d and dmin, the same for its eight groups.
    const __m256 d[2] = {HalfRowsF16(tile, 0), HalfRowsF16(tile, 1)};
    const __m256 dmin[2] = {HalfRowsF16(tile + 32, 0), HalfRowsF16(tile + 32, 1)};
    for (int64_t j = 0; j < 8; ++j) {
      __m256i pairs[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
      for (int64_t c = 0; c < 4; ++c) {
        AddNibbleQuarter(tile + 320 + 64 * (4 * j + c), a + 32 * j + 8 * c, pairs);
      }
      const int64_t group = 8 * b + j;
      const __m256 minus_asum =
          _mm256_set1_ps(static_cast<float>(-(x.sums[2 * group] + x.sums[2 * group + 1])));
      for (int64_t half = 0; half < 2; ++half) {
        const __m256 sc = HalfRowsU8(tile + 64 + 32 * j, half);
        const __m256 mn = HalfRowsU8(tile + 64 + 32 * j + 16, half);
        __m256& lane = lanes.v[half][group % 16];
        // d * sc and dmin * mn are exact; each product with d_a one rounding.
        lane = _mm256_fmadd_ps(_mm256_cvtepi32_ps(WidenPairs(pairs[half])),
                               _mm256_mul_ps(_mm256_mul_ps(d[half], sc), d_a), lane);
        lane = _mm256_fmadd_ps(minus_asum, _mm256_mul_ps(_mm256_mul_ps(dmin[half], mn), d_a), lane);
      }
    }
  };
  ForEachTile<kQ4KRepackedTileBytes, 256>(packed, k, row_begin, row_end, y, block);
}

// Q4_0: block b's sums of unsigned nibbles start at -8 * asum (sum (u - 8)
// a = sum u a - 8 sum a, exact), then its fma goes into lane-vector b mod 16.
void GemvQ4_0(const uint8_t* packed, const Int8Activations& x, int64_t k, int64_t row_begin,
              int64_t row_end, float* y) {
  const auto block = [&x](const uint8_t* tile, int64_t b, TileLanes& lanes) {
    const int8_t* a = x.q + b * 32;
    __m256i pairs[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int64_t c = 0; c < 4; ++c) AddNibbleQuarter(tile + 32 + 64 * c, a + 8 * c, pairs);
    const __m256i start = _mm256_set1_epi32(-8 * (x.sums[2 * b] + x.sums[2 * b + 1]));
    const __m256 d_a = _mm256_set1_ps(x.d[b]);
    for (int64_t half = 0; half < 2; ++half) {
      const __m256i dot = _mm256_add_epi32(start, WidenPairs(pairs[half]));
      __m256& lane = lanes.v[half][b % 16];
      lane = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(HalfRowsF16(tile, half), d_a),
                             lane);
    }
  };
  ForEachTile<kQ4_0RepackedTileBytes, 32>(packed, k, row_begin, row_end, y, block);
}

// Q8_0: block b's sums of signed weights, eight four-product steps of
// pmaddubsw(|w|, a with w's sign) widened at once, then its fma goes into
// lane-vector b mod 16.
void GemvQ8(const uint8_t* packed, const Int8Activations& x, int64_t k, int64_t row_begin,
            int64_t row_end, float* y) {
  const auto block = [&x](const uint8_t* tile, int64_t b, TileLanes& lanes) {
    const __m256i ones = _mm256_set1_epi16(1);
    const int8_t* a = x.q + b * 32;
    __m256i dot[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int64_t c = 0; c < 8; ++c) {
      const __m256i act = Broadcast4(a + 4 * c);
      for (int64_t half = 0; half < 2; ++half) {
        const __m256i w =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + 32 + 64 * c + 32 * half));
        const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(act, w));
        dot[half] = _mm256_add_epi32(dot[half], _mm256_madd_epi16(pairs, ones));
      }
    }
    const __m256 d_a = _mm256_set1_ps(x.d[b]);
    for (int64_t half = 0; half < 2; ++half) {
      __m256& lane = lanes.v[half][b % 16];
      lane = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[half]),
                             _mm256_mul_ps(HalfRowsF16(tile, half), d_a), lane);
    }
  };
  ForEachTile<kQ8RepackedTileBytes, 32>(packed, k, row_begin, row_end, y, block);
}

// ------------------------------------------- several activation rows (prefill)
// A run of R activation rows (8, or 4, 2, 1 for the last rows) against
// every tile of the range, one block at a time. Each block's activations
// of the run are first broadcast, four bytes to a vector, into this
// thread's scratch, where every tile of the range reads them as the
// products' memory operands (a broadcast per product takes a vector pipe).
// Every vector of weights is loaded and unpacked once for the R rows,
// which hold their exact sums in R registers, independent of each other,
// then take C12.3's fmas into their own lane-vectors, in group order: the
// decode kernels' steps and bits, row by activation row.
//
// Measured against one tile at a time with a broadcast per product, on
// this project's Zen 3 (A/B in one process, 64 x 64 work units as the
// engine cuts them): Q4_0 1.2x, Q4_K and Q8_0 1.0-1.1x.
constexpr int64_t kRunRows = 8;

template <int64_t R>
using Rows = std::integral_constant<int64_t, R>;

// A row's lanes against one tile, padded: rows whose scratch lay a
// multiple of 4 KiB apart made loads wait on unrelated stores (the CPU
// matches a load with earlier stores by the address's low 12 bits), which
// cost a third of the GEMM's speed.
struct RunLanes {
  TileLanes lanes;
  __m256 pad[2];
};

// A GEMM's working memory: the lanes of a run's rows against each tile of
// the range (row i, tile t at lanes[i * tiles + t]), then one block's
// activations of the run broadcast (row i's at acts + i * row_vectors,
// a block's dwords and two vectors of padding, as RunLanes'), each row's
// d_a of the block broadcast, and `extra` more vectors per row. The GEMMs
// name row_vectors as a constant, so that every row's vectors lie at
// fixed offsets from one pointer.
struct RunScratch {
  RunLanes* lanes;
  __m256i* acts;
  __m256* d_a;
  __m256* extra;
};

constexpr int64_t RowVectors(int64_t dwords) {
  return dwords + 2;
}

inline RunScratch AllocateRunScratch(int64_t tiles, int64_t row_vectors, int64_t extra) {
  const int64_t vectors = kRunRows * (row_vectors + 1 + extra);
  auto* lanes =
      static_cast<RunLanes*>(Int8Scratch(static_cast<size_t>(kRunRows * tiles) * sizeof(RunLanes) +
                                         static_cast<size_t>(vectors) * sizeof(__m256i)));
  auto* acts = reinterpret_cast<__m256i*>(lanes + kRunRows * tiles);
  auto* d_a = reinterpret_cast<__m256*>(acts + kRunRows * row_vectors);
  return {lanes, acts, d_a, d_a + kRunRows};
}

// Four activation bytes broadcast to a vector, for `dwords` of them.
inline void BroadcastDwords(const int8_t* a, int64_t dwords, __m256i* out) {
  for (int64_t t = 0; t < dwords; ++t) out[t] = Broadcast4(a + 4 * t);
}

// The number of tiles of sixteen rows that touch [row_begin, row_end).
inline int64_t TilesOf(int64_t row_begin, int64_t row_end) {
  return (row_end - 1) / 16 - row_begin / 16 + 1;
}

// The traversal the three GEMMs share: for each run of activation rows,
// the lanes of its rows against every tile that touches [row_begin,
// row_end) zeroed, `block(Rows<R>, i0, b, tile0, stride, tiles)` for each
// block in order (tile t of the block at tile0 + t * stride), then the outputs
// written to y. The first run reads the tiles from memory, hinted; the
// others find them in cache.
template <int64_t kTileBytes, int64_t kBlockWeights, class Block>
inline void ForEachRunOfRows(const uint8_t* packed, int64_t m, int64_t k, int64_t row_begin,
                             int64_t row_end, RunLanes* lanes, float* y, int64_t ldy, Block block) {
  const int64_t blocks = k / kBlockWeights, stride = blocks * kTileBytes;
  const int64_t first = row_begin / 16, tiles = TilesOf(row_begin, row_end);
  int64_t i0 = 0;
  const auto run = [&](auto rows) {
    constexpr int64_t R = decltype(rows)::value;
    for (int64_t l = 0; l < R * tiles; ++l) ZeroLanes(&lanes[l].lanes);
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* tile0 = packed + first * stride + b * kTileBytes;
      if (i0 == 0) {
        for (int64_t t = 0; t < tiles; ++t) HintStreamAhead(tile0 + t * stride, kTileBytes);
      }
      block(rows, i0, b, tile0, stride, tiles);
    }
    for (int64_t i = 0; i < R; ++i) {
      for (int64_t t = 0; t < tiles; ++t) {
        StoreRowSums(lanes[i * tiles + t].lanes, first + t, row_begin, row_end, y + (i0 + i) * ldy);
      }
    }
    i0 += R;
  };
  while (m - i0 >= kRunRows) run(Rows<kRunRows>{});
  if (m - i0 >= 4) run(Rows<4>{});
  if (m - i0 >= 2) run(Rows<2>{});
  if (m - i0 >= 1) run(Rows<1>{});
}

// Adds to each of R rows' 16-bit pair sums the products of one 64-byte
// quarter of repacked nibbles (`half`'s rows) with that row's eight
// activations, broadcast at acts[i * row_vectors] and the vector after
// (AddNibbleQuarter's steps and bound).
template <int64_t R>
inline void AddNibbleQuarterRows(const uint8_t* quarter, int64_t half, const __m256i* acts,
                                 int64_t row_vectors, __m256i* pairs) {
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(quarter + 32 * half));
  const __m256i lo = _mm256_and_si256(v, nibble);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
  for (int64_t i = 0; i < R; ++i) {
    const __m256i* a = acts + i * row_vectors;
    pairs[i] = _mm256_add_epi16(
        pairs[i], _mm256_add_epi16(_mm256_maddubs_epi16(lo, a[0]), _mm256_maddubs_epi16(hi, a[1])));
  }
}

// The loops over a block's quarters (and Q8_0's eight steps) stay rolled
// (`#pragma GCC unroll 1`): unrolled, GCC reassociates each row's sums
// into a tree of all the products and spills them to the stack.

void GemmQ4K(const uint8_t* packed, const Int8Activations* x, int64_t m, int64_t k,
             int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
  // Per row, the block's 64 dwords; then, as `extra`, its eight groups'
  // -asum (exact in f32).
  constexpr int64_t row_vectors = RowVectors(64);
  const RunScratch s = AllocateRunScratch(TilesOf(row_begin, row_end), row_vectors, 8);
  const auto block = [&](auto rows, int64_t i0, int64_t b, const uint8_t* tile0, int64_t stride,
                         int64_t tiles) {
    constexpr int64_t R = decltype(rows)::value;
    // Locals and parameters, which no store of a vector can alias: a store
    // through __m256 may alias anything, so what the lambda captures would
    // be reloaded after each one.
    RunLanes* const lanes = s.lanes;
    __m256i* const acts = s.acts;
    __m256* const d_a = s.d_a;
    __m256* const minus_asum = s.extra;
    for (int64_t i = 0; i < R; ++i) {
      const Int8Activations& xi = x[i0 + i];
      BroadcastDwords(xi.q + 256 * b, 64, acts + i * row_vectors);
      d_a[i] = _mm256_set1_ps(xi.d[b]);
      for (int64_t j = 0; j < 8; ++j) {
        const int64_t g = 8 * b + j;
        minus_asum[8 * i + j] =
            _mm256_set1_ps(static_cast<float>(-(xi.sums[2 * g] + xi.sums[2 * g + 1])));
      }
    }
    for (int64_t t = 0; t < tiles; ++t) {
      const uint8_t* tile = tile0 + t * stride;
      for (int64_t half = 0; half < 2; ++half) {
        const __m256 d = HalfRowsF16(tile, half), dmin = HalfRowsF16(tile + 32, half);
        for (int64_t j = 0; j < 8; ++j) {
          __m256i pairs[R];
          for (__m256i& p : pairs) p = _mm256_setzero_si256();
#pragma GCC unroll 1
          for (int64_t c = 0; c < 4; ++c) {
            AddNibbleQuarterRows<R>(tile + 320 + 64 * (4 * j + c), half, acts + 8 * j + 2 * c,
                                    row_vectors, pairs);
          }
          const __m256 d_sc = _mm256_mul_ps(d, HalfRowsU8(tile + 64 + 32 * j, half));
          const __m256 dmin_mn = _mm256_mul_ps(dmin, HalfRowsU8(tile + 64 + 32 * j + 16, half));
          const int64_t group = 8 * b + j;
          for (int64_t i = 0; i < R; ++i) {
            __m256& lane = lanes[i * tiles + t].lanes.v[half][group % 16];
            // GemvQ4K's two fmas: (d * sc) * d_a and (dmin * mn) * d_a.
            lane = _mm256_fmadd_ps(_mm256_cvtepi32_ps(WidenPairs(pairs[i])),
                                   _mm256_mul_ps(d_sc, d_a[i]), lane);
            lane = _mm256_fmadd_ps(minus_asum[8 * i + j], _mm256_mul_ps(dmin_mn, d_a[i]), lane);
          }
        }
      }
    }
  };
  ForEachRunOfRows<kQ4KRepackedTileBytes, 256>(packed, m, k, row_begin, row_end, s.lanes, y, ldy,
                                               block);
}

void GemmQ4_0(const uint8_t* packed, const Int8Activations* x, int64_t m, int64_t k,
              int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
  // Per row, the block's 8 dwords; then, as `extra`, its sums' start,
  // -8 * asum, in every int32 lane.
  constexpr int64_t row_vectors = RowVectors(8);
  const RunScratch s = AllocateRunScratch(TilesOf(row_begin, row_end), row_vectors, 1);
  const auto block = [&](auto rows, int64_t i0, int64_t b, const uint8_t* tile0, int64_t stride,
                         int64_t tiles) {
    constexpr int64_t R = decltype(rows)::value;
    RunLanes* const lanes = s.lanes;  // locals, as in GemmQ4K
    __m256i* const acts = s.acts;
    __m256* const d_a = s.d_a;
    auto* const start = reinterpret_cast<__m256i*>(s.extra);
    for (int64_t i = 0; i < R; ++i) {
      const Int8Activations& xi = x[i0 + i];
      BroadcastDwords(xi.q + 32 * b, 8, acts + i * row_vectors);
      d_a[i] = _mm256_set1_ps(xi.d[b]);
      start[i] = _mm256_set1_epi32(-8 * (xi.sums[2 * b] + xi.sums[2 * b + 1]));
    }
    for (int64_t t = 0; t < tiles; ++t) {
      const uint8_t* tile = tile0 + t * stride;
      for (int64_t half = 0; half < 2; ++half) {
        __m256i pairs[R];
        for (__m256i& p : pairs) p = _mm256_setzero_si256();
#pragma GCC unroll 1
        for (int64_t c = 0; c < 4; ++c) {
          AddNibbleQuarterRows<R>(tile + 32 + 64 * c, half, acts + 2 * c, row_vectors, pairs);
        }
        const __m256 d = HalfRowsF16(tile, half);
        for (int64_t i = 0; i < R; ++i) {
          // GemvQ4_0's sum: -8 * asum, then the unsigned nibbles' products.
          const __m256i dot = _mm256_add_epi32(start[i], WidenPairs(pairs[i]));
          __m256& lane = lanes[i * tiles + t].lanes.v[half][b % 16];
          lane = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(d, d_a[i]), lane);
        }
      }
    }
  };
  ForEachRunOfRows<kQ4_0RepackedTileBytes, 32>(packed, m, k, row_begin, row_end, s.lanes, y, ldy,
                                               block);
}

void GemmQ8(const uint8_t* packed, const Int8Activations* x, int64_t m, int64_t k,
            int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
  constexpr int64_t row_vectors = RowVectors(8);
  const RunScratch s = AllocateRunScratch(TilesOf(row_begin, row_end), row_vectors, 0);
  const __m256i ones = _mm256_set1_epi16(1);
  const auto block = [&](auto rows, int64_t i0, int64_t b, const uint8_t* tile0, int64_t stride,
                         int64_t tiles) {
    constexpr int64_t R = decltype(rows)::value;
    RunLanes* const lanes = s.lanes;  // locals, as in GemmQ4K
    __m256i* const acts = s.acts;
    __m256* const d_a = s.d_a;
    for (int64_t i = 0; i < R; ++i) {
      BroadcastDwords(x[i0 + i].q + 32 * b, 8, acts + i * row_vectors);
      d_a[i] = _mm256_set1_ps(x[i0 + i].d[b]);
    }
    for (int64_t t = 0; t < tiles; ++t) {
      const uint8_t* tile = tile0 + t * stride;
      for (int64_t half = 0; half < 2; ++half) {
        __m256i dot[R];
        for (__m256i& v : dot) v = _mm256_setzero_si256();
#pragma GCC unroll 1
        for (int64_t c = 0; c < 8; ++c) {
          // GemvQ8's step: |w| against the activations with w's sign.
          const __m256i w =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + 32 + 64 * c + 32 * half));
          const __m256i magnitude = _mm256_abs_epi8(w);
          for (int64_t i = 0; i < R; ++i) {
            const __m256i pairs =
                _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(acts[i * row_vectors + c], w));
            dot[i] = _mm256_add_epi32(dot[i], _mm256_madd_epi16(pairs, ones));
          }
        }
        const __m256 d = HalfRowsF16(tile, half);
        for (int64_t i = 0; i < R; ++i) {
          __m256& lane = lanes[i * tiles + t].lanes.v[half][b % 16];
          lane = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[i]), _mm256_mul_ps(d, d_a[i]), lane);
        }
      }
    }
  };
  ForEachRunOfRows<kQ8RepackedTileBytes, 32>(packed, m, k, row_begin, row_end, s.lanes, y, ldy,
                                             block);
}

}  // namespace

void Avx2GemvQuantRepacked(const float* x, const std::byte* packed, QuantType type, int64_t k,
                           int64_t row_begin, int64_t row_end, float* y) {
  const Int8Activations& acts = QuantizedRows(type, x, 1, k)[0];
  const auto* p = reinterpret_cast<const uint8_t*>(packed);
  if (type == QuantType::kQ4_K) GemvQ4K(p, acts, k, row_begin, row_end, y);
  if (type == QuantType::kQ4_0) GemvQ4_0(p, acts, k, row_begin, row_end, y);
  if (type == QuantType::kQ8_0) GemvQ8(p, acts, k, row_begin, row_end, y);
}

void Avx2GemmQuantRepackedRows(const Int8Activations* x, int64_t m, const std::byte* packed,
                               QuantType type, int64_t k, int64_t row_begin, int64_t row_end,
                               float* y, int64_t ldy) {
  const auto* p = reinterpret_cast<const uint8_t*>(packed);
  if (type == QuantType::kQ4_K) GemmQ4K(p, x, m, k, row_begin, row_end, y, ldy);
  if (type == QuantType::kQ4_0) GemmQ4_0(p, x, m, k, row_begin, row_end, y, ldy);
  if (type == QuantType::kQ8_0) GemmQ8(p, x, m, k, row_begin, row_end, y, ldy);
}

void Avx2GemmQuantRepacked(const float* x, int64_t m, const std::byte* packed, QuantType type,
                           int64_t k, int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
  Avx2GemmQuantRepackedRows(QuantizedRows(type, x, m, k), m, packed, type, k, row_begin, row_end, y,
                            ldy);
}

}  // namespace samebits::kernels::internal
