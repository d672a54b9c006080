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

// The parameters whose values are secrets, or say where one is (libpq's
// `passfile`): masked in URL queries and keyword strings alike.
constexpr std::array<std::string_view, 3> kSecretKeywords = {"password", "sslpassword", "passfile"};

bool IsSecretKeyword(std::string_view word) {
  return std::find(kSecretKeywords.begin(), kSecretKeywords.end(), word) != kSecretKeywords.end();
}

// Returns the URL `value` with the password of its userinfo (user:PW@) and
// the values of its secret query parameters (?password=PW&...) masked.
std::string RedactUrl(const std::string& value) {
  std::string out = value;
  const size_t start = out.find("://") + 3;
  const size_t authority_end = out.find_first_of("/?#", start);
  const size_t at = out.rfind('@', authority_end == std::string::npos ? out.size() : authority_end);
  if (at != std::string::npos && at >= start) {
    const size_t colon = out.find(':', start);
    if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
  }
  const size_t query = out.find('?', start);
  if (query == std::string::npos) return out;
  size_t pos = query + 1;
  while (pos < out.size()) {
    size_t end = out.find_first_of("&#", pos);
    if (end == std::string::npos) end = out.size();
    const size_t equals = out.find('=', pos);
    if (equals != std::string::npos && equals < end &&
        IsSecretKeyword(std::string_view(out).substr(pos, equals - pos))) {
      out.replace(equals + 1, end - equals - 1, "***");
      end = equals + 4;
    }
    if (end >= out.size() || out[end] == '#') break;
    pos = end + 1;
  }
  return out;
}

// Returns the keyword string `value` with the values of its secret
// keywords (password=PW, password = 'P W', passfile=...) masked.
std::string RedactKeywords(const std::string& value) {
  std::string out = value;
  size_t pos = 0;
  while (pos < out.size()) {
    const size_t word = out.find_first_not_of(" \t", pos);
    if (word == std::string::npos) break;
    const size_t word_end = out.find_first_of(" \t=", word);
    if (word_end == std::string::npos) break;
    const size_t equals = out.find_first_not_of(" \t", word_end);
    if (equals == std::string::npos || out[equals] != '=') break;
    size_t start = out.find_first_not_of(" \t", equals + 1);
    if (start == std::string::npos) break;
    size_t end = start;
    if (out[start] == '\'') {
      for (end = start + 1; end < out.size() && out[end] != '\''; ++end) {
        if (out[end] == '\\') ++end;
      }
      end = std::min(end + 1, out.size());
    } else {
      for (; end < out.size() && out[end] != ' ' && out[end] != '\t'; ++end) {
        if (out[end] == '\\') ++end;
      }
      end = std::min(end, out.size());
    }
    if (IsSecretKeyword(std::string_view(out).substr(word, word_end - word))) {
      out.replace(start, end - start, "***");
      end = start + 3;
    }
    pos = end;
  }
  return out;
}

}  // namespace

Location ParseLocation(const std::string& db) {
  if (db.empty()) throw StoreError("the store's location is empty (give a file or a URL)");
  const std::string scheme = UrlScheme(db);
  if (scheme == "postgresql" || scheme == "postgres")
    return {Backend::kPostgres, db, RedactUrl(db)};
  if (!scheme.empty()) {
    throw StoreError("--db " + RedactUrl(db) + ": '" + scheme +
                     "://' is not a store samebits knows; give an SQLite file's path (as is, "
                     "without a scheme), a postgresql:// or postgres:// URL, or a libpq keyword "
                     "string (host=... dbname=...)");
  }
  if (IsKeywordString(db)) return {Backend::kPostgres, db, RedactKeywords(db)};
  return {Backend::kSqlite, db, db};
}

std::string RedactLocation(const std::string& value) {
  if (!UrlScheme(value).empty()) return RedactUrl(value);
  if (IsKeywordString(value)) return RedactKeywords(value);
  return value;
}

std::string RedactArgument(const std::string& argument) {
  // --db=VALUE, and any other --flag=VALUE that names a store.
  if (argument.rfind("--", 0) == 0) {
    const size_t equals = argument.find('=');
    if (equals != std::string::npos)
      return argument.substr(0, equals + 1) + RedactLocation(argument.substr(equals + 1));
  }
  return RedactLocation(argument);
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
