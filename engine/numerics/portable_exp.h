// The constants of the portable exp (portable_math.cc, contract C3), in one
// place for the forms that must give its bits: the scalar PortableExp
// and the vector ones of the AVX-512 and AVX2 kernels (kernels/exp_avx512.cc,
// kernels/exp_avx2.cc).
#pragma once

namespace samebits::numerics::portable_exp {

// 2^(j/32) for j = 0..31, each correctly rounded to double.
constexpr double kExp2Table[32] = {
    0x1.0000000000000p+0, 0x1.059b0d3158574p+0, 0x1.0b5586cf9890fp+0, 0x1.11301d0125b51p+0,
    0x1.172b83c7d517bp+0, 0x1.1d4873168b9aap+0, 0x1.2387a6e756238p+0, 0x1.29e9df51fdee1p+0,
    0x1.306fe0a31b715p+0, 0x1.371a7373aa9cbp+0, 0x1.3dea64c123422p+0, 0x1.44e086061892dp+0,
    0x1.4bfdad5362a27p+0, 0x1.5342b569d4f82p+0, 0x1.5ab07dd485429p+0, 0x1.6247eb03a5585p+0,
    0x1.6a09e667f3bcdp+0, 0x1.71f75e8ec5f74p+0, 0x1.7a11473eb0187p+0, 0x1.82589994cce13p+0,
    0x1.8ace5422aa0dbp+0, 0x1.93737b0cdc5e5p+0, 0x1.9c49182a3f090p+0, 0x1.a5503b23e255dp+0,
    0x1.ae89f995ad3adp+0, 0x1.b7f76f2fb5e47p+0, 0x1.c199bdd85529cp+0, 0x1.cb720dcef9069p+0,
    0x1.d5818dcfba487p+0, 0x1.dfc97337b9b5fp+0, 0x1.ea4afa2a490dap+0, 0x1.f50765b6e4540p+0};
// ln2 / 32 split so that k * kLn2Over32Hi is exact for |k| < 2^21.
constexpr double kLn2Over32Hi = 0x1.62e42feep-6;
constexpr double kLn2Over32Lo = 0x1.a39ef35793c76p-38;
constexpr double k32OverLn2 = 0x1.71547652b82fep+5;

// The largest float whose e^x rounds to a finite float, and the input below
// which e^x rounds to +0 (e^-104 < 2^-150).
constexpr float kLargestFinite = 0x1.62e42ep6f;
constexpr float kSmallestNonzero = -104.0f;

}  // namespace samebits::numerics::portable_exp
