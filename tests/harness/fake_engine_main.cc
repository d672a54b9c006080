// A tiny fake engine for the runner's and the CLI's tests: it speaks the
// child protocol (engine/protocol/PROTOCOL.md) with made-up but stable
// hashes, and misbehaves on request. The behaviour comes from the
// checkpoint spec, because the harness passes configuration on the command
// line only (the environment is controlled):
//
//   fake:ok            well-behaved; hashes depend on checkpoint and scenario only
//   fake:crash         prints hello and a step, then dies of SIGSEGV
//   fake:hang          prints hello, then sleeps forever
//   fake:hang-group    forks a grandchild that sleeps (holding the pipes),
//                      prints its pid on stderr, then sleeps forever
//   fake:garbage       prints hello, then a line that is not JSON
//   fake:no-done       prints hello and the steps, exits 0 without `done`
//   fake:exit3         prints everything, then exits with code 3
//   fake:unsupported   prints an `unsupported` record "ISA neon is not available" and
//                      exits 2
//   fake:error-says-unsupported  prints an `error` record whose text says "not
//                      supported" and exits 2 (an error, whatever it says)
//   fake:lie           claims to run 1 thread whatever it was asked
//   fake:chatty        writes 2 MiB to stderr before any stdout
//   fake:wrong-t3      well-behaved, but the hashes differ at 3 threads
//   fake:nonexistent   an error record "no such synthetic checkpoint", exit 2
//   fake:libm-other    well-behaved; with --math libm reports another libm
//                      and other hashes
//   fake:no-quant-dot  an engine older than --quant-dot: ignores it, so its
//                      hello and hashes are the exact profile's
//   fake:leave-behind  well-behaved, but leaves a sleeping process behind
//   fake:trailing-garbage  prints everything, then a line that is not JSON
// Any other spec behaves like fake:ok. With --batch N (N > 1) it echoes
// the batch in hello.config, as a batching engine does; its hashes never
// depend on it. With --quant-dot int8 it echoes `quant_dot` in hello.config
// (as samebits-engine does, only when not exact) and its hashes differ from
// the exact profile's, as a quantized checkpoint's do.
//
// Its made-up machine is an x86_64 with AVX2 and no AVX-512, whatever
// the host: `capabilities` (PROTOCOL.md) says it cannot run the ISAs neon
// and avx512, and a cell asking for either gets an `unsupported` record
// (exit 2), as samebits-engine answers for an ISA its machine lacks.
//
// With `--serve` it serves cells as samebits-engine's `run --serve` does
// (PROTOCOL.md, "Serving several cells"): one cell per line of stdin, a
// JSON array of the cell's own arguments, each answered as the command line
// with those arguments would be; a cell whose exit code would not be 0
// ends the process with it, and so do fake:no-done and fake:exit3 (which
// exits 3 right after its `done`). Its hello then says, in build.flags,
// how many cells the process served before ("-O0 served 2"), so tests see
// which cells shared a child.
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t HashString(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

using Args = std::vector<std::string>;

std::string Arg(const Args& args, const char* name, const char* fallback) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == name) return args[i + 1];
  }
  return fallback;
}

bool HasFlag(const Args& args, const char* name) {
  for (const std::string& a : args) {
    if (a == name) return true;
  }
  return false;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

void Line(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

// In serve mode, the cells this process served before the current one;
// -1 outside serve mode.
int g_served = -1;

// Runs one cell as the command line `args` asks; returns the exit code.
int RunCell(const Args& args) {
  const std::string checkpoint = Arg(args, "--checkpoint", "fake:ok");
  const std::string scenario = BaseName(Arg(args, "--scenario", "classic.json"));
  const std::string kernels = Arg(args, "--kernels", "cpu");
  int threads = static_cast<int>(std::strtol(Arg(args, "--threads", "1").c_str(), nullptr, 10));
  std::string isa = Arg(args, "--isa", "auto");
  if (isa == "auto") isa = "scalar";
  const std::string math = Arg(args, "--math", "portable");
  const std::string chunk = Arg(args, "--gemv-chunk-bytes", "262144");
  const int batch = static_cast<int>(std::strtol(Arg(args, "--batch", "1").c_str(), nullptr, 10));
  const std::string batch_config =
      batch > 1 ? ",\"batch\":" + std::to_string(batch) +
                      ",\"batch_seed\":" + Arg(args, "--batch-seed", "1") +
                      ",\"batch_schedule\":\"" + Arg(args, "--batch-schedule", "together") + "\""
                : "";
  const std::string mode = checkpoint.rfind("fake:", 0) == 0 ? checkpoint.substr(5) : "ok";
  const std::string quant_dot =
      mode == "no-quant-dot" ? "exact" : Arg(args, "--quant-dot", "exact");
  const std::string quant_dot_config =
      quant_dot == "exact" ? "" : ",\"quant_dot\":\"" + quant_dot + "\"";

  if (isa == "neon" || isa == "avx512") {
    Line(R"({"type":"unsupported","reason":"the fake engine's made-up x86_64 machine has no )" +
         isa + "\"}");
    return 2;
  }
  if (mode == "unsupported") {
    Line(R"({"type":"unsupported","reason":"ISA neon is not available on this machine"})");
    return 2;
  }
  if (mode == "error-says-unsupported") {
    Line(R"({"type":"error","message":"isa neon is not supported by this machine"})");
    return 2;
  }
  if (mode == "nonexistent") {
    // What an engine says of a checkpoint it does not know: an input error
    // before hello, exit code 2.
    Line(
        R"({"type":"error","message":"checkpoint fake:nonexistent: no such synthetic checkpoint"})");
    return 2;
  }
  if (mode == "chatty") {
    std::string block(4096, 'x');
    block.back() = '\n';
    for (int i = 0; i < 512; ++i) std::fwrite(block.data(), 1, block.size(), stderr);
  }
  const bool other_libm = mode == "libm-other" && math == "libm";
  const std::string library =
      math == "portable" ? "samebits-portable" : (other_libm ? "otherlibm" : "glibc");
  const std::string version = math == "portable" ? "1" : (other_libm ? "9.9" : "2.36");
  const std::string fingerprint =
      other_libm ? "1111111111111111"
                 : (math == "portable" ? "00000000000000aa" : "00000000000000bb");
  const int reported_threads = mode == "lie" ? 1 : threads;
  // The tuning knobs the cpu path used, as samebits-engine's hello says them
  // (PROTOCOL.md, `tuning`): its profile's axes echo them.
  const std::string tuning =
      kernels != "cpu"
          ? ""
          : R"("tuning":{"knobs":{"gemv_chunk_bytes":)" + chunk + R"(,"gemm_tile_m":)" +
                Arg(args, "--gemm-tile-m", "64") + R"(,"gemm_tile_n":)" +
                Arg(args, "--gemm-tile-n", "64") + R"(,"attention_row_block":)" +
                Arg(args, "--attention-row-block", "16") + R"(,"stream_ahead_bytes":)" +
                Arg(args, "--stream-ahead-bytes", "4096") + "}},";
  const std::string flags = g_served < 0 ? "-O0" : "-O0 served " + std::to_string(g_served);
  char hello[2048];
  std::snprintf(
      hello, sizeof hello,
      R"({"type":"hello","protocol":1,"engine":{"name":"fake-engine","version":"0.0.1"},)"
      R"("build":{"revision":"0123456789abcdef0123456789abcdef01234567","dirty":false,"compiler":"fake 1","flags":"%s"},)"
      R"("platform":{"arch":"x86_64","isa_features":["avx2"],"os":"Linux","kernel":"6.1.0","libc":"glibc 2.36","cpu":"Fake CPU"},)"
      R"("math":{"profile":"%s","library":"%s","version":"%s","fingerprint":"%s"},)"
      R"("config":{"checkpoint":"%s","scenario":"%s","kernels":"%s","threads":%d,"isa":"%s","gemv_chunk_bytes":%s,"math":"%s"%s%s},)"
      R"(%s"checkpoint":{"spec":"%s","weights_xxh3":"00000000deadbeef","vocab_size":256}})",
      flags.c_str(), math.c_str(), library.c_str(), version.c_str(), fingerprint.c_str(),
      checkpoint.c_str(), scenario.c_str(), kernels.c_str(), reported_threads, isa.c_str(),
      chunk.c_str(), math.c_str(), batch_config.c_str(), quant_dot_config.c_str(), tuning.c_str(),
      checkpoint.c_str());
  Line(hello);
  if (mode == "hang") {
    for (;;) pause();
  }
  if (mode == "hang-group") {
    const pid_t pid = fork();
    if (pid == 0) {
      for (;;) pause();
    }
    std::fprintf(stderr, "grandchild %d\n", static_cast<int>(pid));
    std::fflush(stderr);
    for (;;) pause();
  }
  if (mode == "leave-behind" && fork() == 0) {
    setsid();
    for (;;) pause();
  }
  const bool trace = HasFlag(args, "--trace");
  const uint64_t seed = HashString(checkpoint + "/" + scenario + (other_libm ? "/other" : "")) ^
                        (math == "libm" ? 0x55ULL : 0) ^ (quant_dot == "int8" ? 0x1008ULL : 0);
  const int steps = 5;
  for (int i = 0; i < steps; ++i) {
    uint64_t h = Mix(seed + static_cast<uint64_t>(i));
    // The wrong-t3 engine goes wrong from step 2 at 3 threads, in layer 1.
    const bool wrong = mode == "wrong-t3" && threads == 3 && i >= 2;
    if (trace) {
      for (int layer = -1; layer < 2; ++layer) {
        uint64_t t = Mix(seed * 31 + static_cast<uint64_t>(i * 7 + layer + 1));
        if (wrong && layer == 1) t ^= 1;
        char tr[256];
        std::snprintf(tr, sizeof tr,
                      R"({"type":"trace","position":%d,"layer":%d,"op":"%s","xxh3_64":"%016llx"})",
                      10 + i, layer, layer < 0 ? "embed" : "ffn_out",
                      static_cast<unsigned long long>(t));
        Line(tr);
      }
    }
    if (wrong) h ^= 1;
    const char* kind = i == 0 ? "prefill" : (i == 3 ? "extend" : "decode");
    char step[512];
    std::snprintf(
        step, sizeof step,
        R"({"type":"step","index":%d,"kind":"%s","position":%d,"input_token":%d,"token":%d,)"
        R"("fnv1a64":"%016llx","xxh3_64":"%016llx","argmax":%d,"nan":0,"inf":0})",
        i, kind, 10 + i, 40 + i, static_cast<int>(h % 256), static_cast<unsigned long long>(Mix(h)),
        static_cast<unsigned long long>(h), static_cast<int>(h % 256));
    Line(step);
    if (mode == "crash" && i == 0) {
      std::signal(SIGSEGV, SIG_DFL);
      std::raise(SIGSEGV);
    }
    if (mode == "garbage" && i == 1) Line("this is not a record {");
  }
  if (mode == "no-done") std::exit(0);  // served or not, the process ends
  char done[128];
  std::snprintf(done, sizeof done, R"({"type":"done","steps":%d,"elapsed_ms":1.5})", steps);
  Line(done);
  if (mode == "trailing-garbage") Line("garbage after done");
  if (mode == "exit3") std::exit(3);
  return 0;
}

// Returns the strings of a JSON array of strings (the harness's requests:
// no escapes but \" and \\), or nothing for another line.
bool ParseRequest(const std::string& line, Args* out) {
  size_t i = line.find('[');
  if (i == std::string::npos) return false;
  for (++i; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ']') return true;
    if (c == ',' || c == ' ') continue;
    if (c != '"') return false;
    std::string value;
    for (++i; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) ++i;
      value += line[i];
    }
    out->push_back(value);
  }
  return false;
}

// Serves cells read from stdin (see the top of this file).
int Serve(const Args& shared) {
  g_served = 0;
  char buffer[65536];
  while (std::fgets(buffer, sizeof buffer, stdin) != nullptr) {
    Args args = shared;
    if (!ParseRequest(buffer, &args)) {
      Line(R"({"type":"error","message":"run --serve: a request is not a JSON array"})");
      return 2;
    }
    const int code = RunCell(args);
    if (code != 0) return code;
    ++g_served;
  }
  return 0;
}

// The `capabilities` record of the made-up machine (see the top).
int Capabilities() {
  Line(
      R"({"type":"capabilities","protocol":1,"unavailable":[)"
      R"({"axis":"isa","value":"avx512","reason":"the fake engine's made-up x86_64 machine has no avx512"},)"
      R"({"axis":"isa","value":"neon","reason":"the fake engine's made-up x86_64 machine has no neon"}]})");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "capabilities") == 0) return Capabilities();
  Args args;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--serve") != 0) args.push_back(argv[i]);
  }
  return HasFlag(Args(argv + 1, argv + argc), "--serve") ? Serve(args) : RunCell(args);
}
