#include "engine/formats/byte_reader.h"

#include <bit>

namespace samebits::formats {

uint64_t ByteReader::Little(int n, const char* what) {
  if (remaining() < static_cast<uint64_t>(n)) {
    Fail(std::string("file ends while reading ") + what + " (" + std::to_string(n) +
         " bytes needed, " + std::to_string(remaining()) + " left)");
  }
  // Assembled byte by byte so that the value is the same on any host.
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{std::to_integer<uint8_t>(bytes_[pos_ + i])} << (8 * i);
  pos_ += n;
  return v;
}

float ByteReader::F32(const char* what) {
  return std::bit_cast<float>(U32(what));
}

double ByteReader::F64(const char* what) {
  return std::bit_cast<double>(U64(what));
}

std::string_view ByteReader::Bytes(uint64_t n, const char* what) {
  if (remaining() < n) {
    Fail(std::string("file ends inside ") + what + " (" + std::to_string(n) + " bytes declared, " +
         std::to_string(remaining()) + " left)");
  }
  std::string_view s(reinterpret_cast<const char*>(bytes_.data()) + pos_, n);
  pos_ += n;
  return s;
}

void ByteReader::Fail(const std::string& what) const {
  throw CheckpointError(label_ + ": " + what + " (at byte " + std::to_string(pos_) + ")");
}

uint64_t CheckedMul(uint64_t a, uint64_t b, const std::string& label, const char* what) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw CheckpointError(label + ": " + what + " overflows");
  return r;
}

uint64_t CheckedAdd(uint64_t a, uint64_t b, const std::string& label, const char* what) {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw CheckpointError(label + ": " + what + " overflows");
  return r;
}

}  // namespace samebits::formats
