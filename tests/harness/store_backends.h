// Store tests over both backends: a fixture parameterised by backend that
// gives each test a fresh, empty store (an SQLite file in a temporary
// folder, or a new database on the PostgreSQL server SAMEBITS_TEST_PG
// names, dropped afterwards).
//
// The PostgreSQL instances run when SAMEBITS_TEST_PG holds a libpq keyword
// string for a server where the user may CREATE DATABASE
// (ci/with-postgres.sh starts a throwaway one and sets it); otherwise they
// are reported skipped with the reason. Under SAMEBITS_REQUIRE_PG=1 (set by
// ci/with-postgres.sh) a PostgreSQL instance that cannot run fails instead.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "harness/store/location.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::store::testing {

class StoreBackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // The --db value of this test's store (created empty by SetUp).
  const std::string& db() const { return db_; }
  bool postgres() const { return GetParam() == Backend::kPostgres; }
  harness::testing::TempDir dir_;

 private:
  std::string db_;
  std::string database_;  // the PostgreSQL database made for this test
};

// Names the instances "Sqlite" and "Postgres".
std::string BackendName(const ::testing::TestParamInfo<Backend>& info);

}  // namespace samebits::store::testing

// Instantiates the TEST_Ps of `fixture` (a StoreBackendTest) on both backends.
#define SAMEBITS_ON_BOTH_STORE_BACKENDS(fixture)                                     \
  INSTANTIATE_TEST_SUITE_P(Backends, fixture,                                        \
                           ::testing::Values(::samebits::store::Backend::kSqlite,    \
                                             ::samebits::store::Backend::kPostgres), \
                           ::samebits::store::testing::BackendName)
