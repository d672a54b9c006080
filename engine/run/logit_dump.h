// Raw logit dumps (`--dump-logits FILE`): every output row's logits as
// float32 little-endian, `vocab_size` values per row, rows in step order, no
// header, so a dump of R rows is exactly R * vocab_size * 4 bytes and any
// tool can read it for ULP-level diffs.
#pragma once

#include <cstdio>
#include <span>
#include <string>

namespace samebits::run {

class LogitDumpWriter {
 public:
  // Opens (truncates) `path`. Throws std::runtime_error naming the file.
  explicit LogitDumpWriter(const std::string& path);
  ~LogitDumpWriter();
  LogitDumpWriter(const LogitDumpWriter&) = delete;
  LogitDumpWriter& operator=(const LogitDumpWriter&) = delete;

  // Appends one row. Throws std::runtime_error when the write fails.
  void WriteRow(std::span<const float> logits);
  // Flushes and closes; throws when that fails (a full disk shows here).
  void Close();

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace samebits::run
