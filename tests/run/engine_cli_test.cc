// The samebits-engine program end to end: it speaks the protocol (the
// strict reader accepts its output), two runs print identical steps, and bad
// arguments exit with 2 and an `error` record.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/formats/gguf.h"
#include "engine/kernels/kernels.h"
#include "engine/protocol/records.h"
#include "tests/support/data_folder.h"
#include "tests/support/engine_process.h"

namespace samebits {
namespace {

using ::testing::HasSubstr;

using Result = testing::EngineResult;
using testing::RunEngine;

std::string Scenario(const std::string& name) {
  return std::string("'") + SAMEBITS_SOURCE_DIR + "/scenarios/" + name + ".json'";
}

TEST(EngineCliTest, RunPrintsHelloStepsAndDone) {
  const Result r = RunEngine("run --checkpoint synthetic:tiny --scenario " + Scenario("classic") +
                             " --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const protocol::Transcript t = protocol::ReadTranscript(r.out);
  ASSERT_TRUE(t.ok) << t.failure << "\n" << r.out;
  EXPECT_EQ(t.hello->engine.name, "samebits-engine");
  EXPECT_EQ(t.hello->config.checkpoint, "synthetic:tiny");
  EXPECT_EQ(t.hello->config.scenario, "classic");
  EXPECT_EQ(t.hello->config.kernels, "cpu");
  EXPECT_EQ(t.hello->config.threads, 2);
  EXPECT_EQ(t.hello->config.math, "portable");
  EXPECT_EQ(t.hello->math.profile, "portable");
  EXPECT_EQ(t.hello->checkpoint.vocab_size, 256);
  EXPECT_EQ(t.hello->checkpoint.weights_xxh3.size(), 16u);
  EXPECT_FALSE(t.hello->platform.arch.empty());
  ASSERT_EQ(t.steps.size(), 8u);
  EXPECT_EQ(t.steps[5].kind, "extend");
  EXPECT_TRUE(t.traces.empty());
}

TEST(EngineCliTest, TwoRunsAndBothKernelPathsPrintIdenticalSteps) {
  const std::string base = "run --checkpoint synthetic:tiny --scenario " + Scenario("classic");
  const protocol::Transcript a = protocol::ReadTranscript(RunEngine(base).out);
  const protocol::Transcript b = protocol::ReadTranscript(RunEngine(base).out);
  const protocol::Transcript ref =
      protocol::ReadTranscript(RunEngine(base + " --kernels reference").out);
  ASSERT_TRUE(a.ok && b.ok && ref.ok) << a.failure << b.failure << ref.failure;
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.steps, ref.steps) << "cpu and reference must agree bit for bit";
  EXPECT_EQ(ref.hello->config.kernels, "reference");
  EXPECT_EQ(ref.hello->config.threads, 1);
}

TEST(EngineCliTest, TraceAndDumpAreWritten) {
  const std::string dump =
      ::testing::TempDir() + "/engine_cli_dump.f32." + std::to_string(getpid());
  const Result r = RunEngine("run --checkpoint synthetic:tiny --scenario " + Scenario("classic") +
                             " --trace --dump-logits '" + dump + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const protocol::Transcript t = protocol::ReadTranscript(r.out);
  ASSERT_TRUE(t.ok) << t.failure;
  EXPECT_FALSE(t.traces.empty());
  std::ifstream in(dump, std::ios::binary | std::ios::ate);
  EXPECT_EQ(static_cast<size_t>(in.tellg()), 8u * 256u * 4u);
  std::remove(dump.c_str());
}

void ExpectUsageError(const std::string& args, const std::string& message) {
  const Result r = RunEngine(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  const protocol::Transcript t = protocol::ReadTranscript(r.out);
  EXPECT_FALSE(t.ok) << args;
  ASSERT_TRUE(t.error.has_value()) << args << ": stdout was '" << r.out << "'";
  EXPECT_FALSE(t.hello.has_value()) << args << ": refused only after hello";
  EXPECT_THAT(t.error->message, HasSubstr(message)) << args;
  EXPECT_THAT(r.err, HasSubstr(message)) << args;
}

// `run --serve`: each stdin line is a cell answered as `run` answers it (the
// same hello and steps), the process waits for the next after `done`, a
// cell that fails ends it with run's exit code, and a bad request line or a
// cell's argument on the command line is an error with exit code 2.
TEST(EngineCliTest, ServeAnswersEachLineAsRunWould) {
  auto request = [](const std::string& checkpoint, const std::string& scenario) {
    return std::string("[\"--checkpoint\",\"") + checkpoint + "\",\"--scenario\",\"" +
           SAMEBITS_SOURCE_DIR + "/scenarios/" + scenario + ".json\"]\n";
  };
  const std::string cells = request("synthetic:tiny", "classic") +
                            request("synthetic:gemma", "window") +
                            request("synthetic:tiny", "window");
  const Result served = RunEngine("run --serve --threads 2", cells);
  ASSERT_EQ(served.exit_code, 0) << served.err;
  std::vector<protocol::Transcript> alone;
  for (const auto& [checkpoint, scenario] :
       std::vector<std::pair<std::string, std::string>>{{"synthetic:tiny", "classic"},
                                                        {"synthetic:gemma", "window"},
                                                        {"synthetic:tiny", "window"}}) {
    alone.push_back(
        protocol::ReadTranscript(RunEngine("run --threads 2 --checkpoint " + checkpoint +
                                           " --scenario " + Scenario(scenario))
                                     .out));
  }
  // Split the served output after each `done`.
  std::vector<std::string> parts(1);
  for (size_t start = 0, end; (end = served.out.find('\n', start)) != std::string::npos;
       start = end + 1) {
    const std::string line = served.out.substr(start, end - start + 1);
    parts.back() += line;
    if (line.rfind(R"({"type":"done")", 0) == 0) parts.emplace_back();
  }
  ASSERT_EQ(parts.size(), 4u) << served.out;
  EXPECT_TRUE(parts.back().empty());
  for (size_t i = 0; i < alone.size(); ++i) {
    const protocol::Transcript t = protocol::ReadTranscript(parts[i]);
    ASSERT_TRUE(t.ok && alone[i].ok) << t.failure << alone[i].failure;
    EXPECT_EQ(t.hello->config, alone[i].hello->config);
    EXPECT_EQ(t.hello->checkpoint.weights_xxh3, alone[i].hello->checkpoint.weights_xxh3);
    EXPECT_EQ(t.steps, alone[i].steps);
  }

  const Result failing = RunEngine(
      "run --serve", request("synthetic:nope", "classic") + request("synthetic:tiny", "classic"));
  EXPECT_EQ(failing.exit_code, 2);
  EXPECT_THAT(failing.out, HasSubstr(R"("type":"error")"));
  EXPECT_THAT(failing.out, ::testing::Not(HasSubstr(R"("type":"hello")")));

  const Result bad_line = RunEngine("run --serve", "--checkpoint synthetic:tiny\n");
  EXPECT_EQ(bad_line.exit_code, 2);
  EXPECT_THAT(bad_line.out, HasSubstr("stdin line 1"));
  const Result cell_flag = RunEngine("run --serve --checkpoint synthetic:tiny", "");
  EXPECT_EQ(cell_flag.exit_code, 2);
  EXPECT_THAT(cell_flag.out, HasSubstr("--checkpoint is a cell's argument"));
}

TEST(EngineCliTest, BadArgumentsExitWithTwoAndAnErrorRecord) {
  const std::string classic = " --scenario " + Scenario("classic");
  ExpectUsageError("run --checkpoint synthetic:nope" + classic, "synthetic:nope");
  ExpectUsageError("run --checkpoint synthetic:tiny --scenario /nonexistent.json",
                   "scenario /nonexistent.json: cannot open");
  ExpectUsageError("run --checkpoint synthetic:tiny" + classic + " --kernels fast", "--kernels");
  ExpectUsageError("run --checkpoint synthetic:tiny" + classic + " --threads 0", "--threads");
  ExpectUsageError("run --checkpoint synthetic:tiny" + classic + " --batch 0", "--batch");
  ExpectUsageError("run --checkpoint synthetic:tiny" + classic + " --batch 65", "--batch");
  ExpectUsageError("run --checkpoint synthetic:tiny" + classic + " --batch-schedule x",
                   "--batch-schedule");
  ExpectUsageError("run --checkpoint synthetic:tiny" + classic + " --bogus", "--bogus");
  ExpectUsageError("run --scenario " + Scenario("classic"), "--checkpoint");
  ExpectUsageError("run --checkpoint synthetic:tiny" + classic + " --dump-logits /nonexistent/x",
                   "logit dump /nonexistent/x");
}

// A scenario path that is no regular file (a device that never ends, a
// folder, a FIFO, nothing) is refused at once, with a reason, before hello.
TEST(EngineCliTest, AScenarioThatIsNoRegularFileIsRefusedAtOnce) {
  const std::string run = "run --checkpoint synthetic:tiny --scenario ";
  ExpectUsageError(run + "/dev/zero", "scenario /dev/zero: is not a regular file");
  ExpectUsageError(run + "/tmp", "scenario /tmp: is a folder, not a file");
  ExpectUsageError(run + "''", "scenario '': no file named (the path is empty)");
  const std::string fifo = ::testing::TempDir() + "/engine_cli_fifo." + std::to_string(getpid());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ExpectUsageError(run + "'" + fifo + "'", "is not a regular file");
  ::unlink(fifo.c_str());
}

// Returns the path of a scenario file holding `json` (a fresh temporary file).
std::string ScenarioFile(const std::string& name, const std::string& json) {
  std::string path =
      ::testing::TempDir() + "/engine_cli_" + name + "." + std::to_string(getpid()) + ".json";
  std::ofstream(path) << json;
  return path;
}

// Values the parser used to let through, to fail after hello (a temperature
// that overflows a float) or sample junk (one that underflows it), and keys
// given twice, are refused before hello with the field named.
TEST(EngineCliTest, ScenarioValuesAreCheckedBeforeHello) {
  auto run_args = [](const std::string& file) {
    return "run --checkpoint synthetic:tiny --scenario '" + file + "'";
  };
  const std::string head = R"({"name": "t", "prompt": {"tokens": [1, 2]}, )";
  const std::string steps = R"("steps": [{"prefill": "prompt"}, {"decode": 2}]})";
  auto sampler = [&](const std::string& fields) {
    return head + R"("sampler": {"kind": "sample", "seed": 1, )" + fields + "}, " + steps;
  };
  const struct {
    std::string name, json, message;
  } cases[] = {
      {"overflow", sampler(R"("temperature": 1e39)"), "'temperature' is 1e+39, outside the range"},
      {"underflow", sampler(R"("temperature": 1e-40)"),
       "'temperature' is 1e-40, outside the range"},
      {"zero_after_rounding", sampler(R"("temperature": 1e-50)"), "'temperature'"},
      {"top_p_underflow", sampler(R"("top_p": 1e-46)"), "'top_p' is 1e-46, too small"},
      {"duplicate_top", head + R"("name": "u", )" + steps, "the key 'name' is given twice"},
      {"duplicate_nested", sampler(R"("seed": 2)"), "the key 'seed' is given twice"},
  };
  for (const auto& c : cases) {
    const std::string file = ScenarioFile(c.name, c.json);
    ExpectUsageError(run_args(file), c.message);
    std::remove(file.c_str());
  }
  // Negative control: the same scenario with sane values runs.
  const std::string good = ScenarioFile("good", sampler(R"("temperature": 0.7, "top_p": 0.9)"));
  const Result r = RunEngine(run_args(good));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::remove(good.c_str());
}

// An ISA the machine lacks is the engine's to declare: an `unsupported`
// record (PROTOCOL.md), never an `error`, and exit code 2. Every machine
// lacks one of these (neon on x86, the x86 ones elsewhere).
TEST(EngineCliTest, AnUnavailableIsaIsReportedUnsupported) {
  int lacking = 0;
  for (const char* name : {"avx2", "avx512", "neon"}) {
    kernels::Isa isa;
    ASSERT_TRUE(kernels::ParseIsa(name, &isa));
    if (kernels::IsaAvailable(isa)) continue;
    ++lacking;
    const Result r = RunEngine("run --checkpoint synthetic:tiny --scenario " + Scenario("classic") +
                               " --isa " + name);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    const protocol::Transcript t = protocol::ReadTranscript(r.out);
    EXPECT_FALSE(t.ok);
    EXPECT_FALSE(t.error.has_value()) << r.out;
    ASSERT_TRUE(t.unsupported.has_value()) << r.out;
    EXPECT_THAT(t.unsupported->reason, HasSubstr(std::string("ISA ") + name + " is not available"));
    EXPECT_FALSE(t.hello.has_value()) << "refused before hello";
  }
  EXPECT_GT(lacking, 0);
}

TEST(EngineCliTest, DescribeAndListWork) {
  const Result text = RunEngine("describe synthetic:tiny");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("vocab 256"));
  EXPECT_THAT(text.out, HasSubstr("weights xxh3 "));
  const Result json = RunEngine("describe synthetic:tiny --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"parameters\""));
  const Result list = RunEngine("list --names");
  ASSERT_EQ(list.exit_code, 0);
  EXPECT_THAT(list.out, HasSubstr("synthetic:tiny\n"));
  const Result bad = RunEngine("describe synthetic:nope");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(bad.out.empty()) << "describe does not speak the protocol";
  EXPECT_THAT(bad.err, HasSubstr("synthetic:nope"));
  EXPECT_EQ(RunEngine("run --help").exit_code, 0);
  EXPECT_EQ(RunEngine("").exit_code, 2);
}

// Returns the bytes of the file at `path` (empty when unreadable).
std::vector<std::byte> FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

// `export --type` of llama.cpp's F32 file writes llama-quantize's bytes for
// Q8_0 and Q6_K, tensor by tensor (norms stay F32, as llama-quantize keeps
// 1-D tensors; token_embd and output are quantized, as in its files).
TEST(EngineCliTest, ExportTypeWritesLlamaQuantizesBytes) {
  const std::string dir = data_folder::Path("checkpoints") + "/";
  SAMEBITS_SKIP_WITHOUT_DATA(dir + "small_dense_qwen3_f32.gguf");
  for (const std::string type : {"q8_0", "q6_k"}) {
    SCOPED_TRACE(type);
    const std::string out = ::testing::TempDir() + "/export_" + type + ".gguf";
    std::string command = "export gguf:'" + dir;
    command += "small_dense_qwen3_f32.gguf' '";
    command += out;
    command += "' --type ";
    command += type;
    const Result r = RunEngine(command);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<std::byte> ours = FileBytes(out);
    std::string file = dir + "small_dense_qwen3_";
    file += type;
    file += ".gguf";
    const std::vector<std::byte> theirs = FileBytes(file);
    const formats::GgufFile a = formats::ParseGguf(ours, out);
    const formats::GgufFile b = formats::ParseGguf(theirs, type);
    ASSERT_EQ(a.tensors.size(), b.tensors.size());
    int equal = 0;
    for (const formats::GgufTensorInfo& t : b.tensors) {
      for (const formats::GgufTensorInfo& u : a.tensors) {
        if (u.name != t.name) continue;
        EXPECT_EQ(u.ggml_type, t.ggml_type) << t.name;
        const auto* p = ours.data() + a.data_offset + u.offset;
        const auto* q = theirs.data() + b.data_offset + t.offset;
        const bool same = u.nbytes == t.nbytes && std::equal(p, p + u.nbytes, q);
        EXPECT_TRUE(same) << t.name;
        equal += same;
      }
    }
    EXPECT_EQ(equal, static_cast<int>(b.tensors.size()));
  }
  const Result bad =
      RunEngine("export synthetic:tiny '" + ::testing::TempDir() + "/x.gguf' --type q2_k");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("unknown type 'q2_k'"));
}

// Gemma 2/3's operations are written to GGUF as llama.cpp states them (the
// architecture name implies post-norms, GELU and the embedding scale; the
// soft-caps and the local RoPE base are `{arch}.*` keys): the export of
// synthetic:gemma, in BF16, F32 and Q8_0, runs every step of the scenarios
// with the same hashes as the synthetic spec itself.
TEST(EngineCliTest, ExportGemmaToGgufRunsTheSameSteps) {
  for (const std::string spec :
       {"synthetic:gemma", "synthetic:gemma-f32", "synthetic:gemma-q8_0"}) {
    SCOPED_TRACE(spec);
    const std::string out = ::testing::TempDir() + "/export_" + spec.substr(10) + "." +
                            std::to_string(getpid()) + ".gguf";
    std::string command = "export " + spec;
    command += " '";
    command += out;
    command += "'";
    const Result e = RunEngine(command);
    ASSERT_EQ(e.exit_code, 0) << e.err;
    for (const std::string scenario : {"classic", "window"}) {
      SCOPED_TRACE(scenario);
      const std::string args = " --scenario " + Scenario(scenario);
      std::string run_spec = "run --checkpoint " + spec;
      run_spec += args;
      std::string run_export = "run --checkpoint gguf:'" + out;
      run_export += "'";
      run_export += args;
      const protocol::Transcript a = protocol::ReadTranscript(RunEngine(run_spec).out);
      const protocol::Transcript b = protocol::ReadTranscript(RunEngine(run_export).out);
      ASSERT_TRUE(a.ok && b.ok) << a.failure << b.failure;
      ASSERT_FALSE(a.steps.empty());
      EXPECT_EQ(a.steps, b.steps) << "the GGUF export must run as the synthetic model, bit for bit";
      EXPECT_EQ(a.hello->checkpoint.weights_xxh3, b.hello->checkpoint.weights_xxh3);
    }
    std::remove(out.c_str());
  }
}

// Safetensors states the Gemma operations through Gemma3ForCausalLM, but
// not synthetic:gemma's Llama 3.1 frequency factors (a GGUF tensor with no
// transformers form): the export is refused, naming them, and no file is
// left behind (it would load as another model).
TEST(EngineCliTest, ExportGemmaToSafetensorsIsRefused) {
  const std::string out = ::testing::TempDir() + "/gemma_export_st." + std::to_string(getpid());
  const Result r = RunEngine("export synthetic:gemma '" + out + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("synthetic:gemma uses rope_freq_factors, which the "
                               "safetensors writer"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace samebits
