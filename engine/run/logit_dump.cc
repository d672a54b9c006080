#include "engine/run/logit_dump.h"

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace samebits::run {

LogitDumpWriter::LogitDumpWriter(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) {
    throw std::runtime_error("logit dump " + path +
                             ": cannot open for writing: " + std::strerror(errno));
  }
}

LogitDumpWriter::~LogitDumpWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void LogitDumpWriter::WriteRow(std::span<const float> logits) {
  if (file_ == nullptr) throw std::runtime_error("logit dump " + path_ + ": already closed");
  // Serialise byte by byte from the IEEE bits so that a big-endian machine
  // writes the same file as a little-endian one.
  std::vector<unsigned char> bytes(logits.size() * 4);
  for (size_t i = 0; i < logits.size(); ++i) {
    const uint32_t bits = std::bit_cast<uint32_t>(logits[i]);
    for (int b = 0; b < 4; ++b) bytes[i * 4 + b] = static_cast<unsigned char>(bits >> (8 * b));
  }
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    throw std::runtime_error("logit dump " + path_ + ": write failed: " + std::strerror(errno));
  }
}

void LogitDumpWriter::Close() {
  if (file_ == nullptr) return;
  const bool failed = std::fflush(file_) != 0 || std::ferror(file_) != 0;
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (failed || closed != 0) {
    throw std::runtime_error("logit dump " + path_ + ": write failed: " + std::strerror(errno));
  }
}

}  // namespace samebits::run
