// Bundle signatures (bundle_signature.h).
#include "harness/exchange/bundle_signature.h"

#include <sodium.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>

#include "harness/exchange/bundle.h"

namespace samebits::exchange {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kAlgorithm = "hmac-sha256";
constexpr uint64_t kMinKeyBytes = 32;
constexpr uint64_t kMaxKeyBytes = uint64_t{64} * 1024;

void InitSodium() {
  if (sodium_init() < 0) throw BundleError("libsodium could not be initialised");
}

std::string Hex(const unsigned char* bytes, size_t n) {
  std::string out(2 * n + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), bytes, n);
  out.pop_back();
  return out;
}

// Returns the MAC of `bundle` (without its signature) under `key`, raw.
std::string Mac(const json& bundle, const BundleKey& key) {
  const std::string text = bundle.dump();
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key.bytes.data()),
                              key.bytes.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(text.data()),
                                text.size());
  std::string mac(crypto_auth_hmacsha256_BYTES, '\0');
  crypto_auth_hmacsha256_final(&state, reinterpret_cast<unsigned char*>(mac.data()));
  return mac;
}

std::string SignatureField(const json& signature, const std::string& file, const char* key,
                           const std::regex& form, const char* expected) {
  if (!signature.contains(key) || !signature[key].is_string() ||
      !std::regex_match(signature[key].get<std::string>(), form))
    throw BundleError(file + ": signature." + key + ": expected " + expected);
  return signature[key].get<std::string>();
}

}  // namespace

BundleKey ReadBundleKey(const std::string& path) {
  InitSodium();
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw BundleError(path + ": no such key file");
  if (!fs::is_regular_file(status)) throw BundleError(path + ": a key file must be a regular file");
  const uint64_t size = fs::file_size(path, ec);
  if (ec || size < kMinKeyBytes || size > kMaxKeyBytes)
    throw BundleError(path + ": a key file holds 32 bytes to 64 KiB (this one: " +
                      (ec ? "unreadable" : std::to_string(size) + " bytes") +
                      "); make one with `head -c 32 /dev/urandom > " + path + "`");
  BundleKey key;
  key.file = path;
  key.bytes.resize(size);
  std::ifstream in(path, std::ios::binary);
  if (!in.read(key.bytes.data(), static_cast<std::streamsize>(size)))
    throw BundleError(path + ": cannot be read");
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(key.bytes.data()),
                     key.bytes.size());
  key.id = Hex(digest, 8);
  const fs::perms perms = status.permissions();
  if ((perms & (fs::perms::group_read | fs::perms::others_read)) != fs::perms::none) {
    key.warning =
        "the signing key " + path + " can be read by " +
        ((perms & fs::perms::others_read) != fs::perms::none ? "every user" : "its group") +
        ", and whoever can read it can sign bundles; make it the owner's alone: chmod "
        "600 " +
        path;
  }
  return key;
}

void SignBundle(json& bundle, const BundleKey& key) {
  InitSodium();
  const std::string mac = Mac(bundle, key);
  bundle["signature"] = {
      {"algorithm", kAlgorithm},
      {"key_id", key.id},
      {"mac", Hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size())}};
}

void CheckBundleSignature(json& doc, const std::string& file, const BundleKey* verify) {
  if (!doc.contains("signature")) {
    if (verify != nullptr)
      throw BundleError(file + ": not signed, and --verify " + verify->file +
                        " asks for a signature (sign it with `samebits export --sign KEY`)");
    return;
  }
  const json signature = doc["signature"];
  doc.erase("signature");
  if (!signature.is_object() || signature.size() != 3)
    throw BundleError(file + ": signature: expected an object of algorithm, key_id and mac");
  const std::string algorithm =
      SignatureField(signature, file, "algorithm", std::regex("[a-z0-9-]{1,32}"), "a name");
  if (algorithm != kAlgorithm)
    throw BundleError(file + ": signature.algorithm: \"" + algorithm +
                      "\" is not supported (this samebits signs with " + kAlgorithm + ")");
  const std::string key_id =
      SignatureField(signature, file, "key_id", std::regex("[0-9a-f]{16}"), "16 hex digits");
  const std::string mac_hex =
      SignatureField(signature, file, "mac", std::regex("[0-9a-f]{64}"), "64 hex digits");
  if (verify == nullptr) return;
  if (key_id != verify->id)
    throw BundleError(file + ": signed with another key (key id " + key_id + "; " + verify->file +
                      " has id " + verify->id + ")");
  InitSodium();
  const std::string mac = Mac(doc, *verify);
  unsigned char claimed[crypto_auth_hmacsha256_BYTES];
  if (sodium_hex2bin(claimed, sizeof claimed, mac_hex.data(), mac_hex.size(), nullptr, nullptr,
                     nullptr) != 0 ||
      sodium_memcmp(claimed, mac.data(), sizeof claimed) != 0)
    throw BundleError(file +
                      ": the signature does not match the content: the bundle was changed "
                      "after it was signed with " +
                      verify->file);
}

}  // namespace samebits::exchange
