// Signing bundles with a shared key (`samebits export --sign KEY`,
// `samebits import --verify KEY`, `samebits compare --verify KEY`).
//
// A bundle's content id (bundle.h) is an unkeyed hash: it detects damage
// (a flipped byte, a truncated file, a field edited by hand whose id was
// left as it was), not a deliberate edit, since whoever edits a hash can
// recompute the id. A signature adds what the id cannot: HMAC-SHA256
// (libsodium's crypto_auth_hmacsha256) under a secret key file that the
// machines exchanging bundles share, over the whole bundle (every run,
// every step's hashes, every dump row), so that a bundle that verifies was
// written by a holder of the key and not changed since. Anyone holding the
// key can sign; keep it where the store's writers are trusted.
//
// A key file is any file of 32 bytes to 64 KiB, used whole as the key
// (`head -c 32 /dev/urandom > team.key`); its id is the first 8 bytes of
// its SHA-256, in hex. A signed bundle carries
//
//   "signature": {"algorithm": "hmac-sha256", "key_id": "<16 hex>",
//                 "mac": "<64 hex>"}
//
// beside "format", "version" and "runs"; the MAC is over the bundle without
// it, as compact JSON with sorted keys (nlohmann::json's dump()), which
// reading the file back reproduces exactly. Readers that do not verify
// ignore the signature.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace samebits::exchange {

struct BundleKey {
  std::string file;   // where it was read, for messages
  std::string bytes;  // the key
  std::string id;     // 16 hex digits
  // Not empty when the file may be read by others than its owner (its group
  // or everyone): whoever can read it can sign. Says what to do.
  std::string warning;
};

// Returns the key in the file `path`. Throws BundleError when it is missing,
// not a regular file, shorter than 32 bytes or longer than 64 KiB.
BundleKey ReadBundleKey(const std::string& path);

// Adds the signature of `bundle` (which must have none) under `key`.
void SignBundle(nlohmann::json& bundle, const BundleKey& key);

// Removes and checks the signature of the bundle `doc` read from `file`:
// malformed, it is refused; with `verify` set, a bundle without one, signed
// with another key, or changed since it was signed is refused, each with
// its own message. Throws BundleError.
void CheckBundleSignature(nlohmann::json& doc, const std::string& file, const BundleKey* verify);

}  // namespace samebits::exchange
