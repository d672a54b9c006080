#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "tests/harness/report_fixture.h"

namespace samebits::harness::report::testing {
namespace {

constexpr int kVocab = 16;

MachineInfo FixtureMachine() {
  return MachineInfo{"x86_64",        "Fixture CPU @ 2.0GHz", "Debian GNU/Linux 12",
                     "6.1.0-fixture", "glibc 2.36",           {"sse4.2", "avx2", "fma"}};
}

MathLibraryInfo PortableMath() {
  return MathLibraryInfo{"portable", "samebits-portable", "1", "0123456789abcdef"};
}

BuildInfo FixtureBuild() {
  return BuildInfo{
      "samebits-engine",       "0.1.0", "1111111111111111111111111111111111111111", "GNU 12.2.0",
      "-O3 -ffp-contract=off", true};
}

// Returns fixture hashes for step `index`: distinct per step, and changed by
// `salt` (a configuration whose numbers differ).
StepRecord FixtureStep(int index, uint64_t salt) {
  const char* kinds[] = {"prefill", "decode", "decode", "decode", "extend", "decode"};
  StepRecord s;
  s.index = index;
  s.kind = kinds[index % 6];
  s.position = 10 + index;
  s.input_token = 40 + index;
  s.token = 7 + index;
  s.argmax = s.token;
  s.fnv1a64 = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(index + 1) ^ salt;
  s.xxh3_64 = 0xc2b2ae3d27d4eb4full * static_cast<uint64_t>(index + 1) ^ salt;
  return s;
}

CellResult Cell(std::string checkpoint, std::string scenario, std::string config, int threads,
                ResultCode code, int steps) {
  CellResult c;
  c.checkpoint = std::move(checkpoint);
  c.scenario = std::move(scenario);
  c.config.name = std::move(config);
  c.config.kernels = c.config.name == "reference" ? "reference" : "cpu";
  c.config.threads = threads;
  c.code = code;
  c.elapsed_ms = 100.0 + 12.5 * threads;
  for (int i = 0; i < steps; ++i) c.steps.push_back(FixtureStep(i, 0));
  if (steps > 0) {
    c.math = PortableMath();
    c.build = FixtureBuild();
    c.weights_xxh3 = "00000000deadbeef";
    c.vocab_size = kVocab;
    c.isa_used = "avx2";
  }
  return c;
}

std::vector<float> BaseRow(int row) {
  std::vector<float> v(kVocab);
  for (int i = 0; i < kVocab; ++i) v[i] = 0.25f * static_cast<float>(i - 8) + 0.01f * row;
  v[7 + row % kVocab] += 4.0f;  // the fixture's argmax
  return v;
}

void WriteDump(const std::string& path, const std::vector<std::vector<float>>& rows) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const auto& row : rows) {
    for (float f : row) {
      const uint32_t bits = std::bit_cast<uint32_t>(f);
      const char le[4] = {static_cast<char>(bits), static_cast<char>(bits >> 8),
                          static_cast<char>(bits >> 16), static_cast<char>(bits >> 24)};
      out.write(le, 4);
    }
  }
  if (!out) throw std::runtime_error("cannot write fixture dump " + path);
}

}  // namespace

std::string ExportToString(const RunResult& run, const std::string& format,
                           const ReportOptions& options) {
  std::ostringstream out;
  WriteReport(run, format, out, options);
  return out.str();
}

RunResult MixedRun() {
  RunResult run;
  run.run_id = 42;
  run.started_at = "2026-11-29T23:00:00Z";
  run.elapsed_ms = 1234.5;
  run.machine = FixtureMachine();
  run.command = "samebits gate --checkpoint synthetic:tiny --config all";

  const std::string ck = "synthetic:tiny", sc = "classic";
  run.cells.push_back(Cell(ck, sc, "reference", 1, ResultCode::kPass, 6));
  run.cells.back().dump_path = "dumps/reference.f32";
  run.cells.push_back(Cell(ck, sc, "cpu-t1", 1, ResultCode::kPass, 6));
  CellResult t3 = Cell(ck, sc, "cpu-t3", 3, ResultCode::kFail, 6);
  for (int i = 3; i < 6; ++i) t3.steps[i] = FixtureStep(i, 0x5a5a);
  t3.steps[3].token = t3.steps[3].argmax = 8;
  t3.message = "step 3 differs from reference";
  t3.dump_path = "dumps/cpu-t3.f32";
  run.cells.push_back(t3);
  CellResult avx512 = Cell(ck, sc, "cpu-avx512", 1, ResultCode::kUnsupported, 0);
  avx512.config.isa = "avx512";
  avx512.message = "this machine lacks avx512";
  run.cells.push_back(avx512);

  const std::string hostile_sc = "chunked & <long>";
  run.cells.push_back(Cell(kHostileCheckpoint, hostile_sc, "reference", 1, ResultCode::kPass, 4));
  CellResult crashed =
      Cell(kHostileCheckpoint, hostile_sc, "cpu-t2", 2, ResultCode::kUnresolved, 2);
  crashed.exit_code = -1;
  crashed.signal = 11;
  crashed.message = "killed by signal 11 (SIGSEGV) after 2 steps, without `done`";
  crashed.stderr_tail =
      "loading <weights> & \"tokens\" 'quoted'\n\x01"
      "bell\x07 and ``` fence\n"
      "Segmentation fault\n";
  run.cells.push_back(crashed);
  CellResult hung =
      Cell(kHostileCheckpoint, hostile_sc, "cpu-t1-chunk8k", 1, ResultCode::kTimeout, 0);
  hung.config.gemv_chunk_bytes = 8192;
  hung.exit_code = -1;
  hung.signal = 9;
  hung.message = "ran past its 5 s timeout and was killed";
  run.cells.push_back(hung);

  Diagnosis& d = run.diagnosis;
  d.kind = Diagnosis::Kind::kIdentityBroken;
  d.headline = "cpu-t3 disagrees with reference from step 3: the identity is broken in this build.";
  d.details = {"Run `samebits run --config cpu-t3 --trace` to find the first diverging layer.",
               "2 children crashed or hung; see their stderr."};
  Divergence v;
  v.checkpoint = ck;
  v.scenario = sc;
  v.config_a = "reference";
  v.config_b = "cpu-t3";
  v.step_index = 3;
  v.kind = "decode";
  v.position = 13;
  v.layer = 1;
  v.op = "ffn_down";
  v.detail = "token 10 vs 8";
  d.divergences.push_back(v);
  return run;
}

void WriteMixedRunDumps(const std::string& dir) {
  constexpr int kSteps = 6;
  std::vector<std::vector<float>> reference;
  reference.reserve(kSteps);
  for (int r = 0; r < kSteps; ++r) reference.push_back(BaseRow(r));
  std::vector<std::vector<float>> t3 = reference;
  // Step 3 of cpu-t3: element 2 one ulp up; element 8 raised to three ulps
  // above the row's maximum (element 10), so the argmax moves from 10 to 8.
  t3[3][2] = std::bit_cast<float>(std::bit_cast<uint32_t>(t3[3][2]) + 1);
  t3[3][8] = std::bit_cast<float>(std::bit_cast<uint32_t>(t3[3][10]) + 3);
  // Steps 4 and 5 follow from the changed token: one value a few ulps off.
  t3[4][0] = std::bit_cast<float>(std::bit_cast<uint32_t>(t3[4][0]) - 2);
  t3[5][15] = std::bit_cast<float>(std::bit_cast<uint32_t>(t3[5][15]) + 1);
  WriteDump(dir + "/dumps/reference.f32", reference);
  WriteDump(dir + "/dumps/cpu-t3.f32", t3);
}

RunResult MathLibraryRun() {
  RunResult run;
  run.run_id = 7;
  run.started_at = "2026-11-29T23:30:00Z";
  run.elapsed_ms = 321.0;
  run.machine = FixtureMachine();
  run.command = "samebits gate --math libm";
  const MathLibraryInfo here{"libm", "glibc libm", "2.36", "fedcba9876543210"};
  for (const auto& [name, threads] : {std::pair{"cpu-t1", 1}, {"cpu-t2", 2}}) {
    CellResult c = Cell("synthetic:tiny", "classic", name, threads, ResultCode::kFail, 3);
    c.config.math = "libm";
    c.math = here;
    c.message = "all steps differ from the stored reference";
    run.cells.push_back(c);
  }
  Diagnosis& d = run.diagnosis;
  d.kind = Diagnosis::Kind::kMathLibraryDiffers;
  d.headline =
      "All configurations agree with each other but not with the reference: this environment's "
      "math library rounds differently (glibc libm 2.36, fingerprint fedcba9876543210; the "
      "reference was made with musl libm 1.2.4, fingerprint 00112233aabbccdd).";
  d.details = {"Use --math portable for hashes that do not depend on the math library."};
  Divergence v;
  v.checkpoint = "synthetic:tiny";
  v.scenario = "classic";
  v.config_a = "cpu-t1";
  v.config_b = "reference";
  v.step_index = 0;
  v.kind = "prefill";
  v.position = 10;
  d.divergences.push_back(v);
  return run;
}

}  // namespace samebits::harness::report::testing
