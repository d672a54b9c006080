// A fresh folder under the system's temporary folder, removed with its files
// when the object goes (a run's synthetic-checkpoint cache, the logit dumps
// `card` and `conform` measure and then throw away).
#pragma once

#include <string>

namespace samebits::runner {

class TempFolder {
 public:
  // Makes <tmp>/<prefix>-XXXXXX; path() is "" when none could be made.
  explicit TempFolder(const std::string& prefix);
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace samebits::runner
