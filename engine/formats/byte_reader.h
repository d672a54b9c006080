// A bounds-checked little-endian cursor over untrusted bytes. Every read
// checks the remaining length first, so a truncated or lying file becomes a
// CheckpointError naming the file, the offset and what was being read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engine/formats/checkpoint.h"

namespace samebits::formats {

class ByteReader {
 public:
  ByteReader(std::span<const std::byte> bytes, std::string label)
      : bytes_(bytes), label_(std::move(label)) {}

  uint8_t U8(const char* what) { return static_cast<uint8_t>(Little(1, what)); }
  uint16_t U16(const char* what) { return static_cast<uint16_t>(Little(2, what)); }
  uint32_t U32(const char* what) { return static_cast<uint32_t>(Little(4, what)); }
  uint64_t U64(const char* what) { return Little(8, what); }
  int32_t I32(const char* what) { return static_cast<int32_t>(U32(what)); }
  // Returns the next 4 bytes as an IEEE binary32.
  float F32(const char* what);
  // Returns the next 8 bytes as an IEEE binary64.
  double F64(const char* what);
  // Returns the next `n` bytes; fails when fewer remain.
  std::string_view Bytes(uint64_t n, const char* what);

  uint64_t offset() const { return pos_; }
  uint64_t remaining() const { return bytes_.size() - pos_; }
  const std::string& label() const { return label_; }

  // Throws CheckpointError "LABEL: WHAT (at byte OFFSET)".
  [[noreturn]] void Fail(const std::string& what) const;

 private:
  uint64_t Little(int n, const char* what);

  std::span<const std::byte> bytes_;
  std::string label_;
  uint64_t pos_ = 0;
};

// Returns a*b, or throws CheckpointError "LABEL: WHAT overflows" when the
// product does not fit in 64 bits.
uint64_t CheckedMul(uint64_t a, uint64_t b, const std::string& label, const char* what);
// Returns a+b, or throws when the sum does not fit in 64 bits.
uint64_t CheckedAdd(uint64_t a, uint64_t b, const std::string& label, const char* what);

}  // namespace samebits::formats
