// The report formats (report_formats.h).
#include "harness/report/report_formats.h"

#include <filesystem>

namespace samebits::harness::report {

const ReportFormat* ReportFormatForPath(std::string_view path) {
  std::string extension = std::filesystem::path(path).extension().string();
  if (extension.empty()) return nullptr;
  extension.erase(0, 1);  // the dot
  if (extension == "htm") extension = "html";
  for (const ReportFormat& f : kReportFormats) {
    if (extension == f.extension) return &f;
  }
  return nullptr;
}

}  // namespace samebits::harness::report
