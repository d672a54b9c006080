#include "engine/formats/hf_rope.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>

#include "engine/numerics/portable_math.h"

namespace samebits::formats {
namespace {

// Returns the wavelength of frequency i (2 pi base^(2i / rot_dim)) in
// double: only to solve for candidate parameters, which are then checked
// with the exact float computation.
double WavelengthApprox(float base, int rot_dim, int i) {
  return 2.0 * std::numbers::pi * std::pow(double{base}, 2.0 * i / rot_dim);
}

// A candidate (low_freq_factor, high_freq_factor).
struct Band {
  double low, high;
};

// Returns `v`, then `v` rounded to a few grids (config files hold round
// numbers; the solved value is only near them).
std::vector<double> RoundedVariants(double v) {
  std::vector<double> out{v};
  for (const double grid : {1.0, 64.0, 1024.0}) out.push_back(std::round(v * grid) / grid);
  return out;
}

// Returns the bands that the divisors strictly between 1 and `factor`
// suggest for original context `context`. In that band the smoothing
// s = (1/d - 1/factor) / (1 - 1/factor) is (context / wavelength - low) /
// (high - low): two such divisors give low and high; one gives high for
// a usual low, or low for a usual high.
std::vector<Band> SolvedBands(std::span<const float> divisors, double factor, float base,
                              int rot_dim, double context) {
  std::vector<double> x, s;  // context / wavelength, smoothing
  for (size_t i = 0; i < divisors.size(); ++i) {
    const double d = divisors[i];
    if (!(d > 1.0 && d < factor)) continue;
    x.push_back(context / WavelengthApprox(base, rot_dim, static_cast<int>(i)));
    s.push_back((1.0 / d - 1.0 / factor) / (1.0 - 1.0 / factor));
  }
  std::vector<Band> solved;
  if (x.size() >= 2 && s.front() != s.back()) {
    const double span = (x.front() - x.back()) / (s.front() - s.back());
    const double low = x.front() - s.front() * span;
    solved.push_back({low, low + span});
  } else if (x.size() == 1) {
    // One equation for two unknowns: anchor one end at a usual value.
    for (const double low : {1.0, 0.5, 1.5, 2.0, 3.0}) {
      if (s[0] > 0.0) solved.push_back({low, low + (x[0] - low) / s[0]});
    }
    for (const double high : {4.0, 2.0, 3.0, 6.0, 8.0}) {
      if (s[0] < 1.0) solved.push_back({(x[0] - high * s[0]) / (1.0 - s[0]), high});
    }
  }
  std::vector<Band> out;
  for (const Band& b : solved) {
    for (const double low : RoundedVariants(b.low)) {
      for (const double high : RoundedVariants(b.high)) {
        if (low > 0.0 && high > low && high < 1e30) out.push_back({low, high});
      }
    }
  }
  return out;
}

// Returns true when `s` gives exactly `divisors`' bits.
bool Reproduces(const Llama3RopeScaling& s, std::span<const float> divisors, float base,
                int rot_dim) {
  const std::vector<float> got = Llama3FreqDivisors(s, base, rot_dim);
  return std::equal(got.begin(), got.end(), divisors.begin(), divisors.end(), [](float a, float b) {
    return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
  });
}

}  // namespace

std::vector<float> Llama3FreqDivisors(const Llama3RopeScaling& s, float base, int rot_dim) {
  // The converter's Python doubles (old / low, old / high, high - low,
  // 2 * math.pi) meet float32 tensors, which round them to float32.
  const double old_context = static_cast<double>(s.original_max_position_embeddings);
  const float low_wavelen = static_cast<float>(old_context / s.low_freq_factor);
  const float high_wavelen = static_cast<float>(old_context / s.high_freq_factor);
  const float two_pi = static_cast<float>(2.0 * std::numbers::pi);
  const float factor = static_cast<float>(s.factor);
  const float low = static_cast<float>(s.low_freq_factor);
  const float band = static_cast<float>(s.high_freq_factor - s.low_freq_factor);
  const float context = static_cast<float>(s.original_max_position_embeddings);
  std::vector<float> divisors;
  for (int i = 0; i < rot_dim; i += 2) {
    // freqs = 1.0 / (base ** (arange(0, dim, 2) / dim)), in float32.
    const float exponent = static_cast<float>(i) / static_cast<float>(rot_dim);
    const float freq = 1.0f / numerics::PortablePow(base, exponent);
    // torch computes `a / tensor` as reciprocal(tensor) * a.
    const float wavelen = (1.0f / freq) * two_pi;
    if (wavelen < high_wavelen) {
      divisors.push_back(1.0f);
    } else if (wavelen > low_wavelen) {
      divisors.push_back(factor);
    } else {
      const float smooth = ((1.0f / wavelen) * context - low) / band;
      divisors.push_back(1.0f / ((1.0f - smooth) / factor + smooth));
    }
  }
  return divisors;
}

std::optional<Llama3RopeScaling> FitLlama3RopeScaling(std::span<const float> divisors, float base,
                                                      int rot_dim, int context_length) {
  if (divisors.empty() || rot_dim <= 0 || divisors.size() != static_cast<size_t>(rot_dim / 2))
    return std::nullopt;
  const float largest = *std::max_element(divisors.begin(), divisors.end());
  if (!(largest >= 1.0f) || std::isinf(largest)) return std::nullopt;
  std::vector<int64_t> contexts;
  for (int k = 0; k <= 20; ++k) contexts.push_back(int64_t{1} << k);
  if (context_length > 0) contexts.push_back(context_length);
  const double factor = largest;
  // Llama 3.1's band first, at every context, then the solved ones.
  for (const int64_t context : contexts) {
    const Llama3RopeScaling s{factor, 1.0, 4.0, context};
    if (Reproduces(s, divisors, base, rot_dim)) return s;
  }
  for (const int64_t context : contexts) {
    for (const Band& b :
         SolvedBands(divisors, factor, base, rot_dim, static_cast<double>(context))) {
      const Llama3RopeScaling s{factor, b.low, b.high, context};
      if (Reproduces(s, divisors, base, rot_dim)) return s;
    }
  }
  return std::nullopt;
}

void PermuteHeadRows(std::span<const std::byte> in, std::span<std::byte> out, int64_t n_heads,
                     int head_dim, int rot_dim, size_t row_bytes, QkRows to) {
  const int half = rot_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    const size_t head = static_cast<size_t>(h) * static_cast<size_t>(head_dim);
    for (int r = 0; r < head_dim; ++r) {
      // The GGUF row 2j + k and the HF row k * half + j are one row.
      int from = r;
      if (r < rot_dim) {
        from = to == QkRows::kToHf ? 2 * (r % half) + r / half : (r % 2) * half + r / 2;
      }
      std::memcpy(out.data() + (head + static_cast<size_t>(r)) * row_bytes,
                  in.data() + (head + static_cast<size_t>(from)) * row_bytes, row_bytes);
    }
  }
}

}  // namespace samebits::formats
