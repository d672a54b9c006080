// A read-only memory map of a whole file. Loaders keep views into the
// mapping, so `ModelWeights::storage` holds a `shared_ptr` to it and the
// mapping lives exactly as long as the last view.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace samebits::formats {

class MappedFile {
 public:
  // Returns the mapped file. Throws CheckpointError naming `path` when it
  // cannot be opened, is not a regular file or cannot be mapped.
  static std::shared_ptr<const MappedFile> Open(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Returns the file's bytes (empty for an empty file).
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  // Returns the path the file was opened with.
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const std::byte* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace samebits::formats
