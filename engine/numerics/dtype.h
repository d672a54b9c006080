// The element types a weight tensor may have.
#pragma once

#include <cstdint>
#include <string>

namespace samebits::numerics {

enum class DType : uint8_t { kF32, kF16, kBF16 };

// Returns "f32", "f16" or "bf16".
const char* DTypeName(DType dtype);
// Returns the size of one element in bytes.
int DTypeSize(DType dtype);
// Returns true and sets `*out` for "f32", "f16" or "bf16".
bool ParseDType(const std::string& name, DType* out);

}  // namespace samebits::numerics
