// samebits-standin-engine: a fake engine that speaks the child protocol
// (engine/protocol/PROTOCOL.md) and misbehaves on request, so the harness's
// handling of crashing, hanging, lying and inconsistent children can be
// tested without breaking the real engine.
//
// It accepts `samebits-engine run`'s command line and writes a `hello`, one
// `step` per output row of its scenario (scenarios/README.md's rule: a
// prefill or an extend emits one row, or one per position with
// "all_positions"; decode N emits N), or of a fixed plausible shape when
// the file is not a scenario (prefill, four decodes, an extend, two
// decodes: 8 rows), and `done`. Its hashes are
// deterministic functions of (checkpoint, scenario file name, step, math
// profile), so every configuration agrees unless a fault says otherwise.
//
// The fault comes from the environment variable SAMEBITS_STANDIN_FAULT or,
// because a harness may give children a clean environment, from the
// program's own name: a symlink called `samebits-standin-engine-crash`
// behaves as SAMEBITS_STANDIN_FAULT=crash. Faults:
//   ok                       behave (the default);
//   crash                    two steps, then SIGSEGV;
//   abort                    two steps, then abort();
//   hang                     `hello`, then sleep until killed;
//   garbage                  `hello`, one step, a line that is not JSON, then `done`;
//   no-done                  every step, then exit 0 without `done`;
//   error                    an `error` record and exit 1;
//   wrong-hash-at-3-threads  with --threads 3, step 3's hashes (and its
//                            logit dump row and trace at layer 1 `ffn_down`)
//                            differ; every other configuration is correct;
//   portable-changed         the project's own portable math changed: the
//                            portable profile's fingerprint and hashes differ;
//   libm-changed             another math library: the libm profile's
//                            fingerprint and hashes differ;
//   code-and-libm-changed    both of the above at once;
//   arch-aarch64             says it runs on aarch64, and the libm profile's
//                            hashes differ (same fingerprints, same build);
//   wrong-fnv-at-3-threads   with --threads 3, step 3's fnv1a64 alone differs
//                            (its xxh3_64 is right);
//   terminal-escapes         `hello`, then stderr and an `error` record full
//                            of terminal escape sequences, C1 controls and
//                            invalid UTF-8, and exit 1;
//   ignore-batch             accepts --batch but runs alone, as an engine
//                            older than batched runs would: its hello
//                            reports batch 1 and its steps no place;
//   batch-variant            with --batch above 1, step 3's hashes differ
//                            (a kernel whose reduction is split across the
//                            batch's rows); unbatched runs are correct;
//   gpu-h200, gpu-h100       computes on a GPU: its hello names the device
//                            (an H200 or an H100, compute capability 9.0,
//                            the same driver and libraries), and the H100's
//                            libm-profile hashes differ from the H200's (a
//                            GPU's kernels are another math library's);
//   repeats-vary-at-3-threads  says it ran each cell 4 times in one process
//                            (`done.repeats`): 1 distinct output, but 2
//                            with --threads 3 (repeat 3 differs from step 5);
//   dump-differs             its dump rows are the hashed logits + 1e-3 (the
//                            step records hash the logits, the dump lies);
//   dump-short               its dump holds only the first half of the rows;
//   dump-extra               its dump holds three floats past the last row;
//   hello-vocab              its hello claims a vocabulary of 64 ids, its
//                            rows hold 32 values;
//   no-steps                 `hello`, then `done` with no step record;
//   half-steps               only the first four of the eight rows, with a
//                            `done` that counts them.
//
// With --batch N (N > 1), --batch-seed S and --batch-schedule X it echoes
// them in hello.config and gives every step a made-up but valid place
// (`together`: the sequence in slot 0 of N; `staggered`: companions come
// and go, so the slot, the sequence count and the rows change from step to
// step). The hashes do not depend on the batch: batched runs agree with
// unbatched ones unless a fault says otherwise.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <xxhash.h>

#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

constexpr int kVocab = 32;
constexpr int kPromptLength = 6;

struct Options {
  std::string checkpoint, scenario, kernels = "cpu", isa = "auto", math = "portable";
  std::string dump_logits;
  int threads = 1;
  long long gemv_chunk_bytes = 0;
  bool trace = false;
  int batch = 1;
  long long batch_seed = 1;
  std::string batch_schedule = "together";
};

// Writes one protocol line and flushes it, so a crash after it loses nothing.
void Line(const std::string& json) {
  std::fwrite(json.data(), 1, json.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

// Returns `s` as a JSON string literal (the stand-in's inputs are paths and
// names; quotes, backslashes and control characters are escaped).
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

[[noreturn]] void Fail(int exit_code, const std::string& message) {
  Line("{\"type\":\"error\",\"message\":" + Quote(message) + "}");
  std::fprintf(stderr, "samebits-standin-engine: %s\n", message.c_str());
  std::exit(exit_code);
}

Options Parse(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "run") != 0)
    Fail(2, "usage: samebits-standin-engine run --checkpoint SPEC --scenario FILE ...");
  Options o;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) Fail(2, a + " needs a value");
      return argv[++i];
    };
    if (a == "--checkpoint")
      o.checkpoint = value();
    else if (a == "--scenario")
      o.scenario = value();
    else if (a == "--kernels")
      o.kernels = value();
    else if (a == "--threads")
      o.threads = static_cast<int>(std::strtol(value().c_str(), nullptr, 10));
    else if (a == "--isa")
      o.isa = value();
    else if (a == "--gemv-chunk-bytes")
      o.gemv_chunk_bytes = std::strtoll(value().c_str(), nullptr, 10);
    else if (a == "--math")
      o.math = value();
    else if (a == "--dump-logits")
      o.dump_logits = value();
    else if (a == "--trace")
      o.trace = true;
    else if (a == "--batch")
      o.batch = static_cast<int>(std::strtol(value().c_str(), nullptr, 10));
    else if (a == "--batch-seed")
      o.batch_seed = std::strtoll(value().c_str(), nullptr, 10);
    else if (a == "--batch-schedule")
      o.batch_schedule = value();
    else
      Fail(2, "unknown option " + a);
  }
  if (o.checkpoint.empty() || o.scenario.empty())
    Fail(2, "--checkpoint and --scenario are required");
  if (o.threads < 1) Fail(2, "--threads must be at least 1");
  if (o.batch < 1) Fail(2, "--batch must be at least 1");
  if (o.batch_schedule != "together" && o.batch_schedule != "staggered")
    Fail(2, "--batch-schedule must be together or staggered");
  return o;
}

// Returns the fault named by the environment or by the program's name.
std::string Fault(const char* argv0) {
  if (const char* env = std::getenv("SAMEBITS_STANDIN_FAULT"); env && *env) return env;
  const std::string name = std::strrchr(argv0, '/') ? std::strrchr(argv0, '/') + 1 : argv0;
  const std::string prefix = "samebits-standin-engine-";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : "ok";
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

uint64_t Fnv1a64(const void* data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<const unsigned char*>(data)[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// Returns the fake logits of output row `row`: small values derived from a
// seed, with one clear maximum so the argmax is stable.
std::vector<float> Logits(const Options& o, int row, bool perturbed, const std::string& variant) {
  const std::string seed = o.checkpoint + "|" + BaseName(o.scenario) + "|" + o.math + "|" +
                           std::to_string(row) + variant;
  uint64_t s = XXH3_64bits(seed.data(), seed.size());
  std::vector<float> logits(kVocab);
  for (float& v : logits) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;  // a fixed LCG, no time, no device
    v = static_cast<float>(static_cast<int>(s >> 40) % 2000) / 1000.0f - 1.0f;
  }
  logits[(row * 7 + 3) % kVocab] = 5.0f;
  // The fault the identity gate must catch: one value one ulp away.
  if (perturbed) logits[5] = std::bit_cast<float>(std::bit_cast<uint32_t>(logits[5]) + 1);
  return logits;
}

// One output row of the scenario: its kind and position.
struct Row {
  std::string kind;
  int position = 0;
};

// Returns the length of a token source, or 6 for text (no tokenizer here).
int SourceLength(const nlohmann::json& source) {
  if (source.contains("tokens") && source["tokens"].is_array())
    return static_cast<int>(source["tokens"].size());
  if (source.contains("random") && source["random"].is_object() &&
      source["random"].value("length", 0) > 0)
    return source["random"].value("length", 0);
  return kPromptLength;
}

// Returns the fixed 8-row shape the stand-in prints for a file that is not
// a scenario: prefill, four decodes, an extend, two decodes.
std::vector<Row> FixedRows() {
  std::vector<Row> rows;
  rows.reserve(8);
  const char* kinds[] = {"prefill", "decode", "decode", "decode",
                         "decode",  "extend", "decode", "decode"};
  for (int r = 0; r < 8; ++r)
    rows.push_back(
        {kinds[r], r == 0 ? kPromptLength - 1 : kPromptLength - 1 + r + (r >= 5 ? 3 : 0)});
  return rows;
}

// Returns the output rows of the scenario file at `path`, or FixedRows()
// when it is not a scenario.
std::vector<Row> ScenarioRows(const std::string& path) noexcept {
  try {
    std::ifstream in(path);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("steps") || !j["steps"].is_array() ||
        !j.contains("prompt")) {
      return FixedRows();
    }
    std::vector<Row> rows;
    int position = 0;
    for (const nlohmann::json& step : j["steps"]) {
      const bool all = step.value("all_positions", false);
      if (step.contains("prefill") || step.contains("extend")) {
        const char* kind = step.contains("prefill") ? "prefill" : "extend";
        const int length = SourceLength(step.contains("prefill") ? j["prompt"] : step["extend"]);
        for (int p = all ? 0 : length - 1; p < length; ++p) rows.push_back({kind, position + p});
        position += length;
      } else if (step.contains("decode")) {
        for (int d = 0; d < step["decode"].get<int>(); ++d) rows.push_back({"decode", position++});
      }
    }
    return rows;
  } catch (const std::exception&) {
    return FixedRows();
  }
}

int ArgMax(const std::vector<float>& v) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(v.size()); ++i) {
    if (v[i] > v[best]) best = i;
  }
  return best;
}

// Returns the step's place in its batched forward call as a JSON member
// (`,"batch":{...}`), or "" when the run is unbatched.
std::string BatchPlaceJson(const Options& o, int row) {
  if (o.batch <= 1) return "";
  int sequences = o.batch, slot = 0, rows = o.batch, at = 0;
  if (o.batch_schedule == "staggered") {
    // Companions join and leave: between 2 and N sequences, the scenario's
    // sequence somewhere among them, some feeding two rows.
    const long long turn = row + o.batch_seed;
    sequences = 2 + static_cast<int>(turn % (o.batch - 1));
    slot = static_cast<int>((turn * 3) % sequences);
    rows = sequences + static_cast<int>(turn % 3);
    at = slot + (rows > sequences && slot > 0 ? 1 : 0);
  }
  return ",\"batch\":{\"sequences\":" + std::to_string(sequences) +
         ",\"rows\":" + std::to_string(rows) + ",\"slot\":" + std::to_string(slot) +
         ",\"row\":" + std::to_string(at) + "}";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string fault = Fault(argv[0]);
  Options o = Parse(argc, argv);
  // An engine that ignored --batch ran the sequence alone.
  if (fault == "ignore-batch") o.batch = 1;
  const std::string batch_config = o.batch > 1
                                       ? ",\"batch\":" + std::to_string(o.batch) +
                                             ",\"batch_seed\":" + std::to_string(o.batch_seed) +
                                             ",\"batch_schedule\":" + Quote(o.batch_schedule)
                                       : "";
  const char* known[] = {"ok",
                         "crash",
                         "abort",
                         "hang",
                         "garbage",
                         "no-done",
                         "error",
                         "wrong-hash-at-3-threads",
                         "portable-changed",
                         "libm-changed",
                         "code-and-libm-changed",
                         "arch-aarch64",
                         "wrong-fnv-at-3-threads",
                         "terminal-escapes",
                         "ignore-batch",
                         "batch-variant",
                         "gpu-h200",
                         "gpu-h100",
                         "repeats-vary-at-3-threads",
                         "dump-differs",
                         "dump-short",
                         "dump-extra",
                         "hello-vocab",
                         "no-steps",
                         "half-steps"};
  bool is_known = false;
  for (const char* k : known) is_known = is_known || fault == k;
  if (!is_known) Fail(2, "unknown stand-in fault '" + fault + "'");
  if (fault == "error") Fail(1, "stand-in error requested (SAMEBITS_STANDIN_FAULT=error)");
  if (std::FILE* f = std::fopen(o.scenario.c_str(), "r")) {
    std::fclose(f);
  } else {
    Fail(2, "scenario " + o.scenario + ": cannot be read");
  }
  // A requested crash should not leave core files behind in the test tree.
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);

  const std::string isa = o.isa == "auto" ? "scalar" : o.isa;
  const bool portable_changed = fault == "portable-changed" || fault == "code-and-libm-changed";
  const bool libm_changed = fault == "libm-changed" || fault == "code-and-libm-changed";
  const bool aarch64 = fault == "arch-aarch64";
  const bool h100 = fault == "gpu-h100";
  const bool libm = o.math == "libm";
  std::string fingerprint = libm ? "1111222233334444" : "aaaabbbbccccdddd";
  if ((libm && libm_changed) || (!libm && portable_changed)) fingerprint.back() = 'f';
  // What makes this build's logits differ from the ok stand-in's.
  const std::string variant = (libm && libm_changed)        ? "|other-libm"
                              : (!libm && portable_changed) ? "|changed-code"
                              : (libm && aarch64)           ? "|aarch64"
                              : (libm && h100)              ? "|h100"
                                                            : "";
  const std::string device =
      fault.rfind("gpu-", 0) != 0
          ? ""
          : std::string(",\"device\":{\"kind\":\"cuda\",\"name\":\"NVIDIA ") +
                (h100 ? "H100 80GB HBM3" : "H200") +
                "\",\"capability\":\"9.0\",\"multiprocessors\":132" +
                ",\"driver\":\"580.159.04\",\"libraries\":\"CUDA 13.0, cuBLAS 13.1.0\"}";
  Line(std::string("{\"type\":\"hello\",\"protocol\":1,") +
       "\"engine\":{\"name\":\"samebits-standin-engine\",\"version\":\"0.0.1\"}," +
       "\"build\":{\"revision\":\"0000000000000000000000000000000000000000\",\"dirty\":false," +
       "\"compiler\":\"stand-in\",\"flags\":\"\"}," + "\"platform\":{\"arch\":\"" +
       (aarch64 ? "aarch64" : "x86_64") + "\",\"isa_features\":[],\"os\":\"stand-in\"," +
       "\"libc\":\"stand-in\",\"cpu\":\"stand-in\"}," + "\"math\":{\"profile\":" + Quote(o.math) +
       ",\"library\":\"samebits-standin\"," + "\"version\":\"1\",\"fingerprint\":\"" + fingerprint +
       "\"}," + "\"config\":{\"checkpoint\":" + Quote(o.checkpoint) +
       ",\"scenario\":" + Quote(BaseName(o.scenario)) + ",\"kernels\":" + Quote(o.kernels) +
       ",\"threads\":" + std::to_string(o.threads) + ",\"isa\":" + Quote(isa) +
       ",\"gemv_chunk_bytes\":" + std::to_string(o.gemv_chunk_bytes) + ",\"math\":" +
       Quote(o.math) + batch_config + "}," + "\"checkpoint\":{\"spec\":" + Quote(o.checkpoint) +
       ",\"weights_xxh3\":\"00000000000000aa\",\"vocab_size\":" +
       std::to_string(fault == "hello-vocab" ? 2 * kVocab : kVocab) + "}" + device + "}");
  if (fault == "terminal-escapes") {
    // Clear the screen, home the cursor, a C1 CSI, bytes that are not UTF-8,
    // and a line that would pass for a summary.
    std::fprintf(stderr,
                 "\x1b[2J\x1b[H\xc2\x9b"
                 "31m\xff\xfe stand-in\rRun 1: all PASS\n");
    std::fflush(stderr);
    Fail(1, "\x1b]0;owned\x07\x1b[2Jerror\nRun 1: 1 cells, PASS 1");
  }
  if (fault == "hang") {
    std::fprintf(stderr, "stand-in: hanging after hello as requested\n");
    for (;;) pause();
  }

  std::ofstream dump;
  if (!o.dump_logits.empty()) {
    dump.open(o.dump_logits, std::ios::binary | std::ios::trunc);
    if (!dump) Fail(1, "--dump-logits " + o.dump_logits + ": cannot be written");
  }
  const std::vector<Row> shape = ScenarioRows(o.scenario);
  const int all_rows = static_cast<int>(shape.size());
  const int rows = fault == "no-steps" ? 0 : fault == "half-steps" ? all_rows / 2 : all_rows;
  int input = 3;
  for (int r = 0; r < rows; ++r) {
    if ((fault == "crash" || fault == "abort") && r == 2) {
      std::fprintf(stderr, "stand-in: crashing at step 2 as requested <&\"'>\n");
      std::fflush(stderr);
      if (fault == "abort") std::abort();
      signal(SIGSEGV, SIG_DFL);
      raise(SIGSEGV);
    }
    if (fault == "garbage" && r == 1) Line("this is not JSON {\"type\":");
    const bool perturbed = (fault == "wrong-hash-at-3-threads" && o.threads == 3 && r == 3) ||
                           (fault == "batch-variant" && o.batch > 1 && r == 3);
    const bool wrong_fnv = fault == "wrong-fnv-at-3-threads" && o.threads == 3 && r == 3;
    const std::vector<float> logits = Logits(o, r, perturbed, variant);
    const int position = shape[r].position;
    const int token = ArgMax(logits);
    if (o.trace) {
      for (int layer = 0; layer < 2; ++layer) {
        for (const char* op : {"attn_norm", "attn_out", "ffn_norm", "ffn_down"}) {
          std::string key = std::to_string(r) + op + std::to_string(layer);
          uint64_t h = XXH3_64bits(key.data(), key.size());
          if (perturbed && layer == 1 && std::strcmp(op, "ffn_down") == 0) h ^= 1;
          Line("{\"type\":\"trace\",\"position\":" + std::to_string(position) + ",\"layer\":" +
               std::to_string(layer) + ",\"op\":\"" + op + "\",\"xxh3_64\":\"" + Hex(h) + "\"}");
        }
      }
    }
    // The hashes are over the logits' bits, as the protocol says.
    std::vector<unsigned char> bytes(static_cast<size_t>(kVocab) * 4);
    for (int i = 0; i < kVocab; ++i) {
      const uint32_t b = std::bit_cast<uint32_t>(logits[i]);
      for (int k = 0; k < 4; ++k) bytes[4 * i + k] = static_cast<unsigned char>(b >> (8 * k));
    }
    if (dump && fault == "dump-differs") {
      // Rows that are not the logits hashed below.
      for (int i = 0; i < kVocab; ++i) {
        const uint32_t b = std::bit_cast<uint32_t>(logits[i] + 1e-3f);
        for (int k = 0; k < 4; ++k) {
          const char byte = static_cast<char>(b >> (8 * k));
          dump.write(&byte, 1);
        }
      }
    } else if (dump && !(fault == "dump-short" && r >= rows / 2)) {
      dump.write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
    }
    Line("{\"type\":\"step\",\"index\":" + std::to_string(r) + ",\"kind\":\"" + shape[r].kind +
         "\",\"position\":" + std::to_string(position) + ",\"input_token\":" +
         std::to_string(input) + ",\"token\":" + std::to_string(token) + ",\"fnv1a64\":\"" +
         Hex(Fnv1a64(bytes.data(), bytes.size()) ^ (wrong_fnv ? 1 : 0)) + "\",\"xxh3_64\":\"" +
         Hex(XXH3_64bits(bytes.data(), bytes.size())) + "\",\"argmax\":" + std::to_string(token) +
         ",\"nan\":0,\"inf\":0" + BatchPlaceJson(o, r) + "}");
    input = token;
  }
  if (dump && fault == "dump-extra") {
    const char extra[12] = {};
    dump.write(extra, sizeof extra);
  }
  if (dump.is_open()) {
    dump.close();
    if (!dump) Fail(1, "--dump-logits " + o.dump_logits + ": write failed");
  }
  if (fault == "no-done") return 0;
  std::string repeats;
  if (fault == "repeats-vary-at-3-threads") {
    repeats = o.threads == 3 ? ",\"repeats\":{\"count\":4,\"distinct\":2,\"first_repeat\":3,"
                               "\"first_step\":5}"
                             : ",\"repeats\":{\"count\":4,\"distinct\":1}";
  }
  Line("{\"type\":\"done\",\"steps\":" + std::to_string(rows) + ",\"elapsed_ms\":1.5" + repeats +
       "}");
  return 0;
}
