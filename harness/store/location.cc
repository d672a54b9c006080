// What a --db value names (location.h).
#include "harness/store/location.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <string_view>

#include "harness/store/connection.h"

namespace samebits::store {
namespace {

// libpq's connection keywords (PostgreSQL 15, "Parameter Key Words"): a
// value that starts with one of them and `=` is a keyword string.
constexpr std::array<std::string_view, 40> kLibpqKeywords = {
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "require_auth",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "requiressl",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
};

// Returns the URL scheme `value` starts with ("postgresql" of
// "postgresql://h/db"), or "" when it does not start with `scheme://`.
std::string UrlScheme(const std::string& value) {
  const size_t colon = value.find("://");
  if (colon == std::string::npos || colon == 0) return "";
  if (!std::isalpha(static_cast<unsigned char>(value[0]))) return "";
  for (size_t i = 1; i < colon; ++i) {
    const char c = value[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return "";
  }
  return value.substr(0, colon);
}

// Returns whether `value` starts with a libpq keyword and `=` (spaces
// allowed around both).
bool IsKeywordString(const std::string& value) {
  size_t i = value.find_first_not_of(" \t");
  if (i == std::string::npos) return false;
  const size_t end = value.find_first_of(" \t=", i);
  if (end == std::string::npos) return false;
  const std::string_view word = std::string_view(value).substr(i, end - i);
  const size_t equals = value.find_first_not_of(" \t", end);
  if (equals == std::string::npos || value[equals] != '=') return false;
  return std::find(kLibpqKeywords.begin(), kLibpqKeywords.end(), word) != kLibpqKeywords.end();
}

// Returns `value` with the password of a URL (user:PASSWORD@) or of a
// keyword string (password=PASSWORD) replaced by ***.
std::string HidePassword(const std::string& value, bool url) {
  std::string out = value;
  if (url) {
    const size_t start = out.find("://") + 3;
    const size_t at = out.find('@', start);
    const size_t slash = out.find('/', start);
    if (at == std::string::npos || (slash != std::string::npos && slash < at)) return out;
    const size_t colon = out.find(':', start);
    if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    return out;
  }
  for (size_t pos = out.find("password"); pos != std::string::npos;
       pos = out.find("password", pos + 1)) {
    if (pos > 0 && out[pos - 1] != ' ' && out[pos - 1] != '\t') continue;
    size_t equals = out.find_first_not_of(" \t", pos + 8);
    if (equals == std::string::npos || out[equals] != '=') continue;
    size_t start = out.find_first_not_of(" \t", equals + 1);
    if (start == std::string::npos) break;
    size_t end = start;
    if (out[start] == '\'') {
      for (end = start + 1; end < out.size() && out[end] != '\''; ++end) {
        if (out[end] == '\\') ++end;
      }
      end = std::min(end + 1, out.size());
    } else {
      end = out.find_first_of(" \t", start);
      if (end == std::string::npos) end = out.size();
    }
    out.replace(start, end - start, "***");
  }
  return out;
}

}  // namespace

Location ParseLocation(const std::string& db) {
  if (db.empty()) throw StoreError("the store's location is empty (give a file or a URL)");
  const std::string scheme = UrlScheme(db);
  if (scheme == "postgresql" || scheme == "postgres")
    return {Backend::kPostgres, db, HidePassword(db, true)};
  if (!scheme.empty()) {
    throw StoreError("--db " + db + ": '" + scheme +
                     "://' is not a store samebits knows; give an SQLite file's path (as is, "
                     "without a scheme), a postgresql:// or postgres:// URL, or a libpq keyword "
                     "string (host=... dbname=...)");
  }
  if (IsKeywordString(db)) return {Backend::kPostgres, db, HidePassword(db, false)};
  return {Backend::kSqlite, db, db};
}

bool PostgresSupported() {
#ifdef SAMEBITS_WITH_LIBPQ
  return true;
#else
  return false;
#endif
}

Location UsableLocation(const std::string& db) {
  Location location = ParseLocation(db);
  if (location.backend == Backend::kPostgres && !PostgresSupported()) {
    throw StoreError("--db " + location.display +
                     ": a PostgreSQL store, but this samebits was built without libpq (install "
                     "libpq-dev and rebuild); nothing was written");
  }
  return location;
}

std::string SideFolder(const Location& location, const std::string& server_fallback) {
  if (location.backend != Backend::kSqlite) return server_fallback;
  std::error_code ec;
  return std::filesystem::absolute(location.value, ec).parent_path().string();
}

}  // namespace samebits::store
