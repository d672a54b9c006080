// Engine profiles: an engine described as data (`engines/NAME.json`), so the
// harness can drive any program that speaks engine/protocol/PROTOCOL.md
// without knowing its flags (DESIGN.md section 3a).
//
// A profile declares the engine's command, the checkpoint kinds it loads,
// its **axes** (a name, the values or integer range it takes, the argv each
// value adds, hyperfine `-L` style, and the token a value contributes to a
// configuration name), its **baseline** configuration, what its `hello`
// must echo, and its **known differences**. engines/README.md says it for a
// newcomer, with a minimal profile; `samebits profile check FILE` checks
// one. The format, key by key:
//
//   profile            1 (the format's version)
//   name               the engine's name: [a-z0-9][a-z0-9_.-]*
//   description        optional text
//   command            [PROGRAM, ARG...]: PROGRAM with a '/' is relative to
//                      the profile's folder (or absolute); without one it is
//                      looked up on PATH
//   build              optional [PROGRAM, ARG...] run in the profile's folder
//                      by `--build` of run, gate, card and conform (an argv
//                      list, never a shell: profile_build.h)
//   checkpoints        the checkpoint kinds it loads: ["synthetic", "gguf"]
//   arguments          argv templates after `command`; must use
//                      {checkpoint} and {scenario}
//   dump_logits        optional argv templates using {file}
//   trace              optional argv (no placeholders)
//   probe              optional argv after command[0] (instead of command's
//                      other elements; no placeholders) of a call that prints
//                      one `capabilities` record (PROTOCOL.md): what the
//                      engine can never run here, left out of default runs
//   axes               [AXIS...], each:
//     name             [a-z][a-z0-9_]*, unique
//     values | range   the values (each [A-Za-z0-9_.+]+: a name token cannot
//                      hold '-') or an inclusive integer range [MIN, MAX]
//     default          optional: the value when a name does not give one
//                      (without it every name must give the axis)
//     token            the name token of a value: "t{value}", "{value}"
//     units            optional, ranges only: suffixes in names, {"k": 1024}
//     name_default     optional bool: a name may spell the default value
//                      (default false: `-b1` is refused, `cpu-t1` is not
//                      when the threads axis allows it)
//     argv             argv templates the axis adds ({value}, other axes'
//                      {NAME}); [] when another axis's argv carries it
//     argv_at_default  optional bool (default true): add argv at the default
//   argv_order         optional [AXIS...], each axis at most once: the order
//                      in which the axes add their argv (those not named
//                      follow in axis order; absent: axis order), so a
//                      command line written by hand before can be written
//                      by the profile byte for byte
//   baseline           a configuration name: what every other is held to
//   hello              [{"key": "config.threads", "value": "{threads}",
//                        "unless": {"AXIS": "VALUE"}}...]: what the engine's
//                      hello must echo (one generic key/value comparison;
//                      skipped when every `unless` pair holds)
//   known_differences  optional [{"axis": AXIS, "values": [...],
//                        "checkpoints": ["synthetic:*"], "scenarios":
//                        ["window"], "reason": TEXT}...] (checkpoints and
//                      scenarios: patterns; absent, all)
//                      (AXIS may also be `feed`, values `extend` and
//                      `token`: the rows of `samebits card --feed`, for a
//                      profile without an axis of that name)
//   conformance        optional {"max_nmse": X}
//   card               optional {"baseline": NAME, "values": {"AXIS": [...]},
//                      "control": {"configuration": NAME, "reason": TEXT}}:
//                      what `samebits card` varies one at a time, from its
//                      baseline (default: `baseline`); an enumeration axis not
//                      listed takes every other value, a range axis not
//                      listed is not varied. `control` is the negative
//                      control: a configuration that must differ from the
//                      baseline, run in every table; a card that does not
//                      see it differ cannot see a difference, and fails
//   matrix             optional {"checkpoints": [SPEC...], "scenarios":
//                      [FILE...], "configurations": [NAME...]}: what `run`
//                      and `gate --engine` select when the command line does
//                      not (scenario files relative to the profile; default
//                      configurations: the baseline and, one axis at a time,
//                      what the card varies). samebits-engine's own profile
//                      (name `samebits`) must give checkpoints and
//                      configurations: they are the default matrix, and its
//                      names may be templates with placeholders
//                      (matrix_template.h: {each:threads}, {max:threads},
//                      {second:threads}, {each:isa}, {small_chunk}), the
//                      whole list expanded once per --math profile, a
//                      profile other than portable suffixing every name
//                      (`cpu-t2-libm`); no other profile may use them
//
// A configuration name is its axes' tokens in axis order, joined by '-'; an
// axis at its default contributes no token unless a name spells it (allowed
// by `name_default`). Names are parsed back into values, never regenerated
// and matched: any value in a declared range is accepted (`cpu-t4` is
// threads 4 with no other flag).
//
// Arguments are built as a list, never through a shell: each template
// element becomes exactly one argument, and the values substituted are the
// profile's own (enumerated values cannot start an option or hold a space)
// or integers, so no value can add an argument the profile did not template.
//
// A broken profile is refused when loaded, before any child runs, with the
// file, the key ("axes[2].token") and what was expected.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace samebits::runner {

// The profile format this harness reads.
inline constexpr int kEngineProfileFormat = 1;

// The name of samebits-engine's own profile (engines/samebits.json), the
// one whose matrix is the default matrix.
inline constexpr const char* kOwnEngineName = "samebits";

// A broken profile: `file`, the `key` (a path like "axes[2].token"; "" for
// the whole document) and what was expected.
class ProfileError : public std::runtime_error {
 public:
  ProfileError(const std::string& file, const std::string& key, const std::string& expected);
  std::string file, key;
};

// A configuration name the profile's grammar does not accept.
class ConfigurationNameError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The rows of the card's feed table (`samebits card --feed`, card_run.h):
// a pseudo-axis a known difference may name.
inline constexpr const char* kFeedTableAxis = "feed";
inline constexpr const char* kFeedExtend = "extend";
inline constexpr const char* kFeedToken = "token";

struct EngineAxis {
  std::string name;
  std::vector<std::string> values;  // an enumeration; empty for a range
  bool is_range = false;
  int64_t min = 0, max = 0;  // the inclusive range
  std::optional<std::string> default_value;
  std::string token;                     // contains "{value}"
  std::map<std::string, int64_t> units;  // "k" -> 1024
  bool name_default = false;
  std::vector<std::string> argv;
  bool argv_at_default = true;
};

struct HelloEcho {
  std::string key;    // a dotted path into the hello record: "config.threads"
  std::string value;  // a template: "{threads}"
  std::map<std::string, std::string> unless;  // axis -> value
};

struct KnownDifference {
  std::string axis;
  std::vector<std::string> values;       // empty: any value but the baseline's
  std::vector<std::string> checkpoints;  // patterns ('*' any run of characters); empty: all
  std::vector<std::string> scenarios;    // patterns on scenario names (file stems); empty: all
  std::string reason;
};

// A configuration of an engine: its name and every axis's value.
struct EngineConfiguration {
  std::string name;
  std::map<std::string, std::string> values;  // every axis of the profile
};

struct EngineProfile {
  std::string file;    // where it was read from
  std::string folder;  // the folder relative paths are resolved against
  std::string name, description;
  std::vector<std::string> command;  // command[0] resolved (see ResolveProgram)
  std::vector<std::string> build;
  std::vector<std::string> checkpoints;
  std::vector<std::string> arguments, dump_logits, trace;
  std::vector<std::string> probe;  // empty: the engine declares no probe
  std::vector<EngineAxis> axes;
  // Every axis's name once, in the order their argv is added (`argv_order`
  // first, then the other axes in axis order).
  std::vector<std::string> argv_order;
  EngineConfiguration baseline;
  std::vector<HelloEcho> hello;
  std::vector<KnownDifference> known_differences;
  std::optional<double> max_nmse;
  // `samebits card`: its baseline and the values it tries per axis (only
  // the axes the profile lists; canonical values).
  EngineConfiguration card_baseline;
  std::map<std::string, std::vector<std::string>> card_values;
  // The card's negative control (`card.control`), and why it must differ.
  std::optional<EngineConfiguration> card_control;
  std::string card_control_reason;
  // What `run` and `gate` select by default (the profile's `matrix`).
  std::vector<std::string> matrix_checkpoints, matrix_scenarios;
  std::vector<EngineConfiguration> matrix_configurations;
  // `matrix.configurations` as written, templates included (samebits-
  // engine's own profile: its names may hold placeholders, expanded with
  // the command line by matrix.h's DefaultConfigurations).
  std::vector<std::string> matrix_configuration_templates;

  // Returns the axis named `name`, or nullptr.
  const EngineAxis* Axis(const std::string& name) const;
};

// Returns the profile in the JSON text `text`, read from `file` (relative
// command paths resolve against its folder). Throws ProfileError.
EngineProfile ParseEngineProfile(const std::string& text, const std::string& file);

// Returns the profile in the file at `path`. Throws ProfileError (an
// unreadable file included).
EngineProfile LoadEngineProfile(const std::string& path);

// Returns the path of `engines/NAME.json` under `engines_dir` for `--engine
// NAME`, or "" when `name` is not a profile name there.
std::string FindEngineProfile(const std::string& engines_dir, const std::string& name);

// Returns the configuration `name` means. Throws ConfigurationNameError
// saying which token is wrong and what was expected there.
EngineConfiguration ParseConfigurationName(const EngineProfile& profile, const std::string& name);

// Returns the name of a configuration with `values` (axes not given take
// their defaults): each axis's token in axis order, those at their default
// left out. Throws ConfigurationNameError for a missing or invalid value.
std::string FormatConfigurationName(const EngineProfile& profile,
                                    const std::map<std::string, std::string>& values);

// Returns the program to run: command[0] resolved against the profile's
// folder, or found on PATH. Throws ProfileError naming `command` when there
// is no such executable.
std::string ResolveProgram(const EngineProfile& profile);

// Returns the child's argv after the program: command[1...], `arguments`,
// each axis's argv (in `argv_order`), then `trace` and `dump_logits` when
// asked.
std::vector<std::string> BuildArguments(const EngineProfile& profile,
                                        const EngineConfiguration& config,
                                        const std::string& checkpoint,
                                        const std::string& scenario_file, bool trace,
                                        const std::string& dump_file);

// The same argv in two parts, for a child that serves several cells of one
// configuration (shared_child.h): what they all share (command[1...], each
// axis's argv in `argv_order`, `trace` when asked) ...
std::vector<std::string> BuildConfigurationArguments(const EngineProfile& profile,
                                                     const EngineConfiguration& config, bool trace);

// ... and what is each cell's own (`arguments`, then `dump_logits` when
// `dump_file` is not "").
std::vector<std::string> BuildCellArguments(const EngineProfile& profile,
                                            const EngineConfiguration& config,
                                            const std::string& checkpoint,
                                            const std::string& scenario_file,
                                            const std::string& dump_file);

// Returns why the engine's `hello` (the whole record as JSON) does not echo
// what the profile promises for `config`, or "" when it does: "config.threads
// is 1, expected 2".
std::string HelloMismatch(const EngineProfile& profile, const EngineConfiguration& config,
                          const nlohmann::json& hello);

// Returns the known difference declared for a cell of `config` on
// `checkpoint` and the scenario named `scenario`, judged against `baseline`
// (the profile's baseline in a gate, the card's baseline in a card), or
// nullptr when none is. A declaration explains a difference only along its
// axis: it never applies where `config` keeps `baseline`'s value there (a
// declaration on `device` says nothing of two CUDA configurations). One
// limited to some scenarios never matches an empty name.
const KnownDifference* FindKnownDifference(const EngineProfile& profile,
                                           const EngineConfiguration& baseline,
                                           const EngineConfiguration& config,
                                           const std::string& checkpoint,
                                           const std::string& scenario);

// Whether `name` matches one of `patterns` ('*' any run of characters).
bool MatchesAnyPattern(const std::vector<std::string>& patterns, const std::string& name);

}  // namespace samebits::runner
