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
// Any other spec behaves like fake:ok. With --batch N (N > 1) it echoes
// the batch in hello.config, as a batching engine does; its hashes never
// depend on it.
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

std::string Arg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return fallback;
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

}  // namespace

int main(int argc, char** argv) {
  const std::string checkpoint = Arg(argc, argv, "--checkpoint", "fake:ok");
  const std::string scenario = BaseName(Arg(argc, argv, "--scenario", "classic.json"));
  const std::string kernels = Arg(argc, argv, "--kernels", "cpu");
  int threads =
      static_cast<int>(std::strtol(Arg(argc, argv, "--threads", "1").c_str(), nullptr, 10));
  std::string isa = Arg(argc, argv, "--isa", "auto");
  if (isa == "auto") isa = "scalar";
  const std::string math = Arg(argc, argv, "--math", "portable");
  const std::string chunk = Arg(argc, argv, "--gemv-chunk-bytes", "262144");
  const int batch =
      static_cast<int>(std::strtol(Arg(argc, argv, "--batch", "1").c_str(), nullptr, 10));
  const std::string batch_config =
      batch > 1
          ? ",\"batch\":" + std::to_string(batch) +
                ",\"batch_seed\":" + Arg(argc, argv, "--batch-seed", "1") +
                ",\"batch_schedule\":\"" + Arg(argc, argv, "--batch-schedule", "together") + "\""
          : "";
  const std::string mode = checkpoint.rfind("fake:", 0) == 0 ? checkpoint.substr(5) : "ok";

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
  char hello[2048];
  std::snprintf(
      hello, sizeof hello,
      R"({"type":"hello","protocol":1,"engine":{"name":"fake-engine","version":"0.0.1"},)"
      R"("build":{"revision":"0123456789abcdef0123456789abcdef01234567","dirty":false,"compiler":"fake 1","flags":"-O0"},)"
      R"("platform":{"arch":"x86_64","isa_features":["avx2"],"os":"Linux","kernel":"6.1.0","libc":"glibc 2.36","cpu":"Fake CPU"},)"
      R"("math":{"profile":"%s","library":"%s","version":"%s","fingerprint":"%s"},)"
      R"("config":{"checkpoint":"%s","scenario":"%s","kernels":"%s","threads":%d,"isa":"%s","gemv_chunk_bytes":%s,"math":"%s"%s},)"
      R"("checkpoint":{"spec":"%s","weights_xxh3":"00000000deadbeef","vocab_size":256}})",
      math.c_str(), library.c_str(), version.c_str(), fingerprint.c_str(), checkpoint.c_str(),
      scenario.c_str(), kernels.c_str(), reported_threads, isa.c_str(), chunk.c_str(), math.c_str(),
      batch_config.c_str(), checkpoint.c_str());
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
  const bool trace = [&] {
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--trace") == 0) return true;
    }
    return false;
  }();
  const uint64_t seed = HashString(checkpoint + "/" + scenario + (other_libm ? "/other" : "")) ^
                        (math == "libm" ? 0x55ULL : 0);
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
  if (mode == "no-done") return 0;
  char done[128];
  std::snprintf(done, sizeof done, R"({"type":"done","steps":%d,"elapsed_ms":1.5})", steps);
  Line(done);
  return mode == "exit3" ? 3 : 0;
}
