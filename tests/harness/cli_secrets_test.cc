// Class 2 of issue 43: a store location's secrets never reach the store, a
// bundle, a report or a message. One function redacts a location
// (store::RedactLocation: a URL's userinfo password and its `password`,
// `sslpassword` and `passfile` query parameters, the same keywords of a
// keyword string); the command line stored with runs goes through it. This
// test runs every command that takes --db, from the program's own list,
// with a secret in each form, and greps what it printed; with a PostgreSQL
// server (ci/with-postgres.sh) it also stores a run with a secret in its
// location and greps the store's `show`, `runs`, the exported bundle and
// the reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "harness/cli/commands.h"
#include "harness/cli/path_flags.h"
#include "harness/store/location.h"
#include "tests/harness/program_commands.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;
using standin::BinDir;
using standin::CommandResult;
using standin::FaultyEngine;
using standin::FileBytes;
using standin::RunCommand;
using standin::Source;
using standin::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

// Each form libpq reads a secret from, `{S}` standing for the secret.
struct Form {
  std::string name;
  std::string location;  // with {S} for the secret
};

// Returns the forms for a server whose socket folder is `host_dir`, user
// `user` and database `db`.
std::vector<Form> Forms(const std::string& host_dir, const std::string& user,
                        const std::string& db) {
  return {
      {"userinfo", "postgresql://" + user + ":{S}@/" + db + "?host=" + host_dir},
      {"query password",
       "postgresql://" + user + "@/" + db + "?host=" + host_dir + "&password={S}"},
      {"query sslpassword", "postgres://" + user + "@/" + db + "?sslpassword={S}&host=" + host_dir},
      {"query passfile",
       "postgresql://" + user + "@/" + db + "?host=" + host_dir + "&passfile=/{S}"},
      {"keyword", "host=" + host_dir + " user=" + user + " dbname=" + db + " password={S}"},
      {"keyword quoted",
       "host=" + host_dir + " user=" + user + " dbname=" + db + " password = '{S} with spaces'"},
      {"keyword passfile",
       "host=" + host_dir + " user=" + user + " dbname=" + db + " passfile=/{S}"},
  };
}

// Returns `form`'s location with the secret `secret` in it.
std::string WithSecret(const Form& form, const std::string& secret) {
  std::string out = form.location;
  for (size_t at = out.find("{S}"); at != std::string::npos; at = out.find("{S}", at))
    out.replace(at, 3, secret);
  return out;
}

TEST(Secrets, RedactLocationMasksEveryFormAndKeepsTheRest) {
  const std::string secret = "pw-7Hq2";
  for (const Form& form : Forms("/run/pg", "ci", "samebits")) {
    const std::string location = WithSecret(form, secret);
    ASSERT_THAT(location, HasSubstr(secret)) << form.name;
    const std::string redacted = store::RedactLocation(location);
    EXPECT_THAT(redacted, Not(HasSubstr(secret))) << form.name << ": " << redacted;
    EXPECT_THAT(redacted, HasSubstr("***")) << form.name;
    EXPECT_THAT(redacted, HasSubstr("/run/pg")) << form.name << ": the host stays";
    EXPECT_EQ(store::ParseLocation(location).display, redacted) << form.name;
    EXPECT_THAT(store::RedactArgument("--db=" + location), Not(HasSubstr(secret))) << form.name;
  }
  // Not a location: as it is.
  EXPECT_EQ(store::RedactLocation("runs/password=x.db"), "runs/password=x.db");
  EXPECT_EQ(store::RedactLocation("latest"), "latest");
  // Another scheme's userinfo is masked in the refusal too.
  try {
    store::ParseLocation("mysql://u:" + secret + "@h/db");
    ADD_FAILURE() << "mysql:// accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), Not(HasSubstr(secret)));
  }
}

TEST(Secrets, TheStoredCommandLineHasNoSecret) {
  const std::string secret = "pw-7Hq2";
  for (const Form& form : Forms("/run/pg", "ci", "samebits")) {
    const std::string location = WithSecret(form, secret);
    std::vector<std::string> words = {"samebits", "run",     "--db",
                                      location,   "compare", "--db=" + location};
    std::vector<char*> argv;
    argv.reserve(words.size());
    for (std::string& w : words) argv.push_back(w.data());
    SetCommandLine(static_cast<int>(argv.size()), argv.data());
    EXPECT_THAT(CommandLine(), Not(HasSubstr(secret))) << form.name << ": " << CommandLine();
  }
}

// Returns the command line for `command` with `--db location`: a value for
// each required option (an existing file for inputs, a file under `dir` for
// outputs, "1" for anything else).
std::vector<std::string> WithStore(const Command& command, const std::string& location,
                                   const fs::path& dir, const std::string& input) {
  std::vector<std::string> argv = {BinDir() + "/samebits"};
  argv.insert(argv.end(), command.words.begin(), command.words.end());
  for (const CLI::Option* option : command.app->get_options()) {
    if (!option->get_required()) continue;
    const std::optional<PathRole> role = DeclaredRole(option);
    std::string value = RequiredValueFor(option);
    if (role == PathRole::kInput) value = input;
    if (role == PathRole::kOutputFile || role == PathRole::kOutputFolder)
      value = (dir / "out").string();
    for (int i = 0; i < std::max(1, option->get_items_expected_min()); ++i) {
      if (!option->get_positional()) argv.push_back("--" + option->get_lnames().front());
      argv.push_back(value);
    }
  }
  argv.push_back("--db");
  argv.push_back(location);
  return argv;
}

// Every command that takes --db, with a secret in each form, against a
// server that is not there: nothing it prints holds the secret.
TEST(Secrets, NoCommandPrintsTheSecretOfItsStore) {
  TempDir dir("cli_secrets");
  const std::string input = (dir.path() / "input.json").string();
  std::ofstream(input) << "{}\n";
  const std::string secret = "pw-7Hq2";
  const ProgramCommands program;
  int checked = 0;
  for (const Command& command : program.all()) {
    if (!command.IsLeaf() || !command.Takes("db")) continue;
    for (const Form& form : Forms((dir.path() / "no-server").string(), "ci", "samebits")) {
      const CommandResult r =
          RunCommand(WithStore(command, WithSecret(form, secret), dir.path(), input));
      ++checked;
      EXPECT_NE(r.exit_code, 0) << r.command << "\n" << r.output;
      EXPECT_THAT(r.output, Not(HasSubstr(secret)))
          << "samebits " << command.Name() << ", " << form.name << ":\n"
          << r.output;
    }
  }
  EXPECT_GE(checked, 7 * 10);
}

// With a server: a run stored under a location holding a secret, then every
// place the run's command line or location goes.
TEST(Secrets, NothingStoredExportedOrReportedHoldsTheSecret) {
  const char* server = std::getenv("SAMEBITS_TEST_PG");
  if (server == nullptr || *server == '\0') {
    if (std::getenv("SAMEBITS_REQUIRE_PG") != nullptr) FAIL() << "SAMEBITS_TEST_PG is not set";
    GTEST_SKIP() << "no PostgreSQL server (ci/with-postgres.sh runs this)";
  }
  // The server's socket folder, from its keyword string.
  const std::string s = server;
  const size_t at = s.find("host=") + 5;
  const std::string host = s.substr(at, s.find(' ', at) - at);
  TempDir dir("cli_secrets_pg");
  const std::string secret = "pw-7Hq2";
  for (const Form& form : Forms(host, "samebits", "postgres")) {
    if (form.name.find("passfile") != std::string::npos) continue;  // a missing passfile warns
    const std::string location = WithSecret(form, secret);
    std::vector<CommandResult> results;
    const std::string bundle = (dir.path() / "run.bundle.json").string();
    const std::string md = (dir.path() / "run.md").string();
    const std::string json = (dir.path() / "run.json").string();
    results.push_back(RunCommand(
        {BinDir() + "/samebits", "run", "--engine", FaultyEngine(dir.path(), "ok"), "--checkpoint",
         "synthetic:tiny", "--scenario", Source("scenarios/classic.json"), "--config", "cpu-t1",
         "--references-dir", dir.path().string(), "--db", location, "-q"}));
    ASSERT_EQ(results.back().exit_code, 0) << form.name << ": " << results.back().output;
    results.push_back(RunCommand({BinDir() + "/samebits", "show", "latest", "--db", location}));
    results.push_back(RunCommand({BinDir() + "/samebits", "runs", "--db", location}));
    results.push_back(
        RunCommand({BinDir() + "/samebits", "export", "-o", bundle, "--db", location}));
    results.push_back(
        RunCommand({BinDir() + "/samebits", "report", "latest", "-o", md, "--db", location}));
    results.push_back(
        RunCommand({BinDir() + "/samebits", "report", "latest", "-o", json, "--db", location}));
    for (const CommandResult& r : results) {
      EXPECT_THAT(r.output, Not(HasSubstr(secret))) << form.name << ": " << r.command;
    }
    EXPECT_THAT(FileBytes(bundle), Not(HasSubstr(secret))) << form.name;
    EXPECT_THAT(FileBytes(md), Not(HasSubstr(secret))) << form.name;
    EXPECT_THAT(FileBytes(json), Not(HasSubstr(secret))) << form.name;
    EXPECT_THAT(results[1].output, HasSubstr("***")) << form.name << ": the command line is shown";
  }
}

}  // namespace
}  // namespace samebits::cli
