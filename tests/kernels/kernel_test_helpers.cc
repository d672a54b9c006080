#include "tests/kernels/kernel_test_helpers.h"

#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <sstream>

#include "engine/numerics/half.h"
#include "engine/numerics/lanes.h"

namespace samebits::kernels::testing {

using numerics::BF16;
using numerics::F16;

uint64_t SplitMix64::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

GuardedBuffer::GuardedBuffer(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t data_pages = (bytes + page - 1) / page;
  size_ = (data_pages + 1) * page;
  void* base = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return;
  base_ = static_cast<uint8_t*>(base);
  if (mprotect(base_ + data_pages * page, page, PROT_NONE) != 0) return;
  data_ = base_ + data_pages * page - bytes;
}

GuardedBuffer::~GuardedBuffer() {
  if (base_) munmap(base_, size_);
}

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kUnit:
      return "unit";
    case Mode::kMixed:
      return "mixed";
    case Mode::kTiny:
      return "tiny";
    case Mode::kNegZero:
      return "negzero";
  }
  return "?";
}

namespace {

// Returns +-m * 2^e with m uniform in [1, 2) (23 random mantissa bits).
float Scaled(SplitMix64& rng, int e) {
  const float m = 1.0f + static_cast<float>(rng.Next() >> 41) * 0x1p-23f;
  const float v = std::ldexp(m, e);
  return (rng.Next() & 1u) ? -v : v;
}

// Returns an exponent uniform in [lo, hi].
int Exponent(SplitMix64& rng, int lo, int hi) {
  return lo + static_cast<int>(rng.Below(static_cast<uint64_t>(int64_t{hi} - lo + 1)));
}

// `max_large_exp` keeps F16 weights below 65504 and products finite.
float Draw(SplitMix64& rng, Mode mode, bool weight, int max_large_exp) {
  switch (mode) {
    case Mode::kUnit:
      return static_cast<float>(static_cast<int64_t>(rng.Next() >> 40) - (1 << 23)) * 0x1p-23f;
    case Mode::kMixed: {
      const uint64_t category = rng.Below(16);
      if (category == 0) return 0.0f;
      if (category == 1) return -0.0f;
      if (category == 2) {
        // An f32 subnormal: zero exponent, random nonzero mantissa.
        const uint32_t mant = 1u + static_cast<uint32_t>(rng.Below(0x7fffffu));
        return std::bit_cast<float>(mant | ((rng.Next() & 1u) ? 0x80000000u : 0u));
      }
      if (category == 3) return Scaled(rng, Exponent(rng, max_large_exp - 10, max_large_exp));
      return Scaled(rng, Exponent(rng, -30, 10));
    }
    case Mode::kTiny:
      // Activations near the bottom of f32, weights small: most products
      // land below the smallest subnormal or among the subnormals.
      if (rng.Below(8) == 0) return (rng.Next() & 1u) ? -0.0f : 0.0f;
      return weight ? Scaled(rng, Exponent(rng, -30, -10)) : Scaled(rng, Exponent(rng, -149, -110));
    case Mode::kNegZero: {
      // |x * w| < 2^-135 * 2^-17 * 2 = 2^-151, below half the smallest
      // subnormal, so the product rounds to -0.0. F16 holds these weights as
      // subnormals.
      const float v =
          std::fabs(Scaled(rng, weight ? Exponent(rng, -24, -18) : Exponent(rng, -149, -136)));
      return weight ? v : -v;
    }
  }
  return 0.0f;
}

}  // namespace

std::vector<float> MakeActivations(size_t n, Mode mode, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<float> x(n);
  for (float& v : x) v = Draw(rng, mode, /*weight=*/false, 50);
  return x;
}

std::vector<uint8_t> MakeWeights(DType dtype, size_t n, Mode mode, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<uint8_t> bytes(n * static_cast<size_t>(numerics::DTypeSize(dtype)));
  for (size_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::kF32: {
        const float v = Draw(rng, mode, true, 50);
        std::memcpy(bytes.data() + 4 * i, &v, 4);
        break;
      }
      case DType::kBF16: {
        const BF16 h = numerics::ToBF16(Draw(rng, mode, true, 50));
        std::memcpy(bytes.data() + 2 * i, &h.bits, 2);
        break;
      }
      case DType::kF16: {
        const F16 h = numerics::ToF16(Draw(rng, mode, true, 15));
        std::memcpy(bytes.data() + 2 * i, &h.bits, 2);
        break;
      }
    }
  }
  return bytes;
}

float ReferenceDot(const float* x, const void* w, DType dtype, int64_t k, int64_t row) {
  const size_t n = static_cast<size_t>(k);
  switch (dtype) {
    case DType::kF32:
      return numerics::Dot(x, static_cast<const float*>(w) + row * k, n);
    case DType::kF16:
      return numerics::Dot(x, static_cast<const F16*>(w) + row * k, n);
    case DType::kBF16:
      return numerics::Dot(x, static_cast<const BF16*>(w) + row * k, n);
  }
  return 0.0f;
}

std::vector<float> LcgValues(size_t n, uint32_t seed, float amp) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = (static_cast<float>(s >> 8) * 0x1p-24f * 2.0f - 1.0f) * amp;
  }
  return v;
}

uint32_t Bits(float f) {
  return std::bit_cast<uint32_t>(f);
}

std::string Describe(const GemvCase& c) {
  std::ostringstream s;
  s << "dtype=" << numerics::DTypeName(c.dtype) << " k=" << c.k << " rows=[" << c.row_begin << ","
    << c.row_end << ") of " << c.rows << " misalign=" << c.misalign << " mode=" << ModeName(c.mode)
    << " seed=" << c.seed;
  return s.str();
}

std::string CheckGemv(GemvFn fn, const GemvCase& c) {
  const size_t esize = static_cast<size_t>(numerics::DTypeSize(c.dtype));
  const size_t k = static_cast<size_t>(c.k);
  // Copy x and W to `misalign` elements past the start of a fresh buffer, so
  // that the kernel sees unaligned pointers when misalign is odd.
  const std::vector<float> x0 = MakeActivations(k, c.mode, c.seed);
  const std::vector<uint8_t> w0 =
      MakeWeights(c.dtype, k * static_cast<size_t>(c.rows), c.mode, c.seed ^ 0x5eedull);
  std::vector<float> xbuf(k + static_cast<size_t>(c.misalign) + 1);
  std::vector<uint8_t> wbuf(w0.size() + esize * static_cast<size_t>(c.misalign + 1));
  float* x = xbuf.data() + c.misalign;
  uint8_t* w = wbuf.data() + esize * static_cast<size_t>(c.misalign);
  if (k) std::memcpy(x, x0.data(), k * sizeof(float));
  if (!w0.empty()) std::memcpy(w, w0.data(), w0.size());

  const int64_t n = c.row_end - c.row_begin;
  std::vector<float> out(static_cast<size_t>(n + int64_t{2} * kGuardFloats));
  const float canary = std::bit_cast<float>(kCanaryBits);
  for (float& v : out) v = canary;
  float* y = out.data() + kGuardFloats;
  fn(x, w, c.dtype, c.k, c.row_begin, c.row_end, y);

  for (int g = 0; g < kGuardFloats; ++g) {
    if (Bits(out[static_cast<size_t>(g)]) != kCanaryBits || Bits(y[n + g]) != kCanaryBits) {
      return "guard float overwritten (" + Describe(c) + ")";
    }
  }
  for (int64_t r = c.row_begin; r < c.row_end; ++r) {
    const float want = ReferenceDot(x, w, c.dtype, c.k, r);
    const float got = y[r - c.row_begin];
    if (Bits(want) != Bits(got)) {
      std::ostringstream s;
      s << "row " << r << ": got bits 0x" << std::hex << Bits(got) << " want 0x" << Bits(want)
        << std::dec << " (" << Describe(c) << ")";
      return s.str();
    }
  }
  return "";
}

}  // namespace samebits::kernels::testing
