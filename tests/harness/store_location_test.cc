// What a --db value names (harness/store/location.h): the one decision
// every command and the store itself take.
#include <gtest/gtest.h>

#include "harness/store/connection.h"
#include "harness/store/location.h"

namespace samebits::store {
namespace {

TEST(StoreLocation, PostgresUrlsAndKeywordStringsNameAServer) {
  for (const std::string value :
       {"postgresql://h/db", "postgres://u@h:5432/db?sslmode=disable", "postgresql:///db",
        "host=/tmp dbname=samebits", "  dbname = samebits", "service=fleet",
        "user=ci host=db.example"}) {
    const Location l = ParseLocation(value);
    EXPECT_EQ(l.backend, Backend::kPostgres) << value;
    EXPECT_EQ(l.value, value);
  }
}

TEST(StoreLocation, AnythingElseWithoutASchemeIsAnSqliteFile) {
  for (const std::string value :
       {"runs.db", "/tmp/x/runs.db", "./host=x.db", "a:b.db", "C:runs.db", "hostname=x.db",
        "dir/postgresql:/x.db", "postgresql:x.db", "3://x"}) {
    const Location l = ParseLocation(value);
    EXPECT_EQ(l.backend, Backend::kSqlite) << value;
    EXPECT_EQ(l.value, value);
    EXPECT_EQ(l.display, value);
  }
}

TEST(StoreLocation, AnotherUrlSchemeIsRefusedNamingIt) {
  for (const std::string scheme : {"xyz", "sqlite", "mysql", "file", "http", "pg+ssl"}) {
    const std::string value = scheme + "://somewhere/runs.db";
    try {
      ParseLocation(value);
      ADD_FAILURE() << value << " was accepted";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + scheme + "://' is not a store samebits knows"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(ParseLocation(""), StoreError);
}

TEST(StoreLocation, MessagesNeverShowAPassword) {
  EXPECT_EQ(ParseLocation("postgresql://ci:s3cret@db:5432/x").display,
            "postgresql://ci:***@db:5432/x");
  EXPECT_EQ(ParseLocation("postgresql://ci@db/x").display, "postgresql://ci@db/x");
  EXPECT_EQ(ParseLocation("host=db password=s3cret dbname=x").display,
            "host=db password=*** dbname=x");
  EXPECT_EQ(ParseLocation("host=db password = 'a b\\' c' dbname=x").display,
            "host=db password = *** dbname=x");
}

TEST(StoreLocation, SideFilesGoBesideAFileOrToTheFallbackForAServer) {
  EXPECT_EQ(SideFolder(ParseLocation("/tmp/a/runs.db"), "/fallback"), "/tmp/a");
  EXPECT_EQ(SideFolder(ParseLocation("postgresql://h/db"), "/fallback"), "/fallback");
}

TEST(StoreLocation, AServerIsUsableExactlyWhenBuiltWithLibpq) {
  if (PostgresSupported()) {
    EXPECT_EQ(UsableLocation("postgresql://h/db").backend, Backend::kPostgres);
  } else {
    try {
      UsableLocation("postgresql://ci:s3cret@h/db");
      ADD_FAILURE() << "accepted without libpq";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("built without libpq"), std::string::npos);
      EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(UsableLocation("runs.db").backend, Backend::kSqlite);
}

}  // namespace
}  // namespace samebits::store
