// Store tests over both backends (store_backends.h).
#include "tests/harness/store_backends.h"

#include <unistd.h>

#include <cstdlib>

#include "harness/store/connection.h"
#include "harness/store/postgres.h"

namespace samebits::store::testing {

void StoreBackendTest::SetUp() {
  if (!postgres()) {
    db_ = dir_.File("store.db");
    return;
  }
  const char* server = std::getenv("SAMEBITS_TEST_PG");
  const bool required = std::getenv("SAMEBITS_REQUIRE_PG") != nullptr;
  std::string why;
  if (server == nullptr || *server == '\0') {
    why = "SAMEBITS_TEST_PG is not set (ci/with-postgres.sh starts a server and sets it)";
  } else if (!PostgresSupported()) {
    why = "this samebits was built without libpq";
  }
  if (!why.empty()) {
    if (required) {
      FAIL() << "the PostgreSQL instance cannot run under SAMEBITS_REQUIRE_PG: " << why;
    }
    GTEST_SKIP() << why;
  }
  // One database per test, named by process and a counter.
  static int counter = 0;
  database_ = "samebits_test_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
  OpenPostgres(ParseLocation(server), false)->Exec("CREATE DATABASE " + database_);
  db_ = std::string(server) + " dbname=" + database_;
}

void StoreBackendTest::TearDown() {
  if (database_.empty()) return;
  try {
    OpenPostgres(ParseLocation(std::getenv("SAMEBITS_TEST_PG")), false)
        ->Exec("DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  } catch (const StoreError& e) {
    ADD_FAILURE() << "cannot drop the test's database: " << e.what();
  }
}

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kPostgres ? "Postgres" : "Sqlite";
}

}  // namespace samebits::store::testing
