#include "engine/numerics/dtype.h"

namespace samebits::numerics {

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
  }
  return "?";
}

int DTypeSize(DType dtype) {
  return dtype == DType::kF32 ? 4 : 2;
}

bool ParseDType(const std::string& name, DType* out) {
  if (name == "f32")
    *out = DType::kF32;
  else if (name == "f16")
    *out = DType::kF16;
  else if (name == "bf16")
    *out = DType::kBF16;
  else
    return false;
  return true;
}

}  // namespace samebits::numerics
