// Reading a `--sign` or `--verify` key file (export, import, compare), with
// one warning when others than its owner can read it.
#pragma once

#include <optional>
#include <string>

#include "harness/exchange/bundle_signature.h"

namespace samebits::cli {

// Returns the key in the file `path`, or nothing when `path` is empty; prints
// the key's warning (a file others can read) on stderr. Throws BundleError
// as exchange::ReadBundleKey does.
std::optional<exchange::BundleKey> ReadKeyFile(const std::string& path);

}  // namespace samebits::cli
