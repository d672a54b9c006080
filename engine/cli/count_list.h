// Lists of counts on the command line ("1,2,4"): --threads-list of `bench`
// and `tune`, --batch-list of `bench`.
#pragma once

#include <string>
#include <vector>

namespace samebits::cli {

// Returns the distinct counts of `text` ("1,2,4"), each in [1, max]; a bad
// one is a usage error naming `flag` and `what` a count is.
std::vector<int> ParseCountList(const std::string& text, const std::string& flag,
                                const std::string& what, int max);

// Returns --threads-list's thread counts: those of `text`, or, when it is
// empty, 1 and one per core (SAMEBITS_THREADS' default).
std::vector<int> ParseThreadsList(const std::string& text);

}  // namespace samebits::cli
