// What transformers' rotary embedding states differently from GGUF: the
// order of q/k rows (llama.cpp's converter permutes them so that RoPE can
// rotate adjacent pairs; transformers' `rotate_half` rotates the halves of
// unpermuted rows, the same model) and Llama 3.1's frequency scaling (a
// `rope_freqs` tensor of divisors in GGUF, `rope_scaling` parameters in
// config.json from which both llama.cpp's converter and transformers derive
// them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace samebits::formats {

// Llama 3.1's `rope_scaling` (rope_type "llama3") as config.json holds it.
struct Llama3RopeScaling {
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;

  bool operator==(const Llama3RopeScaling&) const = default;
};

// Returns the divisor of each of the rot_dim / 2 rotary frequencies, bit
// for bit as llama.cpp's convert_hf_to_gguf.py computes `rope_freqs`
// (LlamaModel.generate_extra_tensors): 1 where the wavelength is shorter
// than original / high_freq_factor, `factor` where it is longer than
// original / low_freq_factor, the smoothed value in between. The converter
// computes in float32 torch tensors, not Python doubles (each Python
// constant rounded to float32 where it meets a tensor, `a / tensor` as
// reciprocal(tensor) * a), and so does this; its `base ** (2i / dim)` is
// PortablePow here, where torch's float pow (SLEEF or libm) can differ by
// an ulp. rot_dim is even and positive, base > 0.
std::vector<float> Llama3FreqDivisors(const Llama3RopeScaling& s, float base, int rot_dim);

// Returns llama3 parameters whose Llama3FreqDivisors equal `divisors` bit
// for bit (every one recomputed and compared), or nothing when none found
// does. factor is the largest divisor; original_max_position_embeddings is
// searched over the powers of two up to 2^20 and `context_length`; the
// low/high frequency factors are Llama 3.1's 1 and 4, else solved from the
// divisors between 1 and factor (linear in original / wavelength there).
std::optional<Llama3RopeScaling> FitLlama3RopeScaling(std::span<const float> divisors, float base,
                                                      int rot_dim, int context_length);

// Which way PermuteHeadRows moves rows.
enum class QkRows {
  kToHf,    // from llama.cpp's permuted order to transformers' (unpermuted)
  kToGguf,  // back: convert_hf_to_gguf.py's LlamaModel.permute
};

// Copies `in` (n_heads heads of head_dim rows of row_bytes each) to `out`
// (the same size) with the first rot_dim rows of each head reordered:
// llama.cpp's row 2j + k (pair j, member k) is transformers' row
// k * rot_dim / 2 + j. The other rows keep their place. Whole rows move,
// so the element type and byte order do not matter.
void PermuteHeadRows(std::span<const std::byte> in, std::span<std::byte> out, int64_t n_heads,
                     int head_dim, int rot_dim, size_t row_bytes, QkRows to);

}  // namespace samebits::formats
