#!/usr/bin/python3
"""samebits' PyTorch adapter: a dense llama-family forward in PyTorch that
speaks the samebits child protocol (engine/protocol/PROTOCOL.md), so that
`samebits gate --engine pytorch` (engines/pytorch.json) can hold PyTorch's
logits to its own baseline bit for bit, and `samebits conform` to ours.

    pytorch_engine.py run --checkpoint SPEC --scenario FILE
                          [--threads N] [--dtype f32|bf16|f16] [--feed whole|token]
                          [--companions N] [--device cpu|cuda|cuda:N]
                          [--deterministic off|on] [--tf32 off|on]
                          [--attention eager|sdpa|sdpa-math|sdpa-flash|sdpa-efficient|sdpa-cudnn]
                          [--repeats N] [--dump-logits FILE]

SPEC is a safetensors folder as `samebits-engine export` writes it
(`safetensors:DIR` or a directory), or any checkpoint samebits loads, which
is exported into a cache first (checkpoint_source.py). The axes:
  --threads N       torch.set_num_threads(N) (intra-op threads)
  --dtype           the compute dtype of weights and activations (logits are
                    hashed as float32 either way); a dtype the device cannot
                    multiply in (torch 1.13's CPU has no f16 matmul) is
                    unsupported
  --feed            prompt and extend chunks in one forward call (whole) or
                    one call per token (token)
  --companions N    the sequence runs in one padded batch beside N seeded
                    random companion sequences, each fed longer chunks (its
                    own rows are padded and masked); 0: alone
  --device          where weights, caches and every tensor of the forward
                    live (cpu, the default; cuda: cuda:0; cudaN is read as
                    cuda:N, sdpa_math as sdpa-math); logits are copied
                    to the CPU as float32. A CUDA device torch does not see
                    is unsupported, said before the checkpoint is loaded
  --deterministic   torch.use_deterministic_algorithms(on|off) (default off);
                    on also sets CUBLAS_WORKSPACE_CONFIG=:4096:8 unless set.
                    An op with no deterministic implementation: unsupported
  --tf32            float32 matmuls (and cuDNN) may use TF32 (on) or not
                    (off, the default); on with --device cpu: unsupported
  --attention       eager (default: explicit product and float32 softmax),
                    sdpa (torch.nn.functional.scaled_dot_product_attention,
                    torch picks the backend) or sdpa-math, sdpa-flash,
                    sdpa-efficient, sdpa-cudnn (that backend alone); one this
                    torch or device cannot run here is unsupported
  --repeats N       runs the scenario N times (1..1000) in this process, each
                    from a fresh cache and fresh companions; records and
                    dump are repeat 1's, and `done` says how many distinct
                    outputs the N repeats gave (run_repeats, compare_repeats)
Records cover the scenario's sequence only.
"""
import argparse
import ctypes
import ctypes.util
import json
import os
import platform
import re
import struct
import sys
import time

# Children must not write __pycache__ into the source tree (they run in parallel).
sys.dont_write_bytecode = True



def _reexec_with_torch():
    """The shebang's /usr/bin/python3 (Debian's, with python3-torch) may lack
    torch where another python3 on PATH holds it (a GPU image's venv): run
    this script with that one, once; else say so as the protocol's error."""
    import shutil
    other = shutil.which("python3")
    # Paths compared as they are: a venv's python3 links to the very binary
    # that lacks torch, and only its own path finds the venv's packages.
    if other and os.path.abspath(other) != os.path.abspath(sys.executable) \
            and not os.environ.get("SAMEBITS_PYTORCH_REEXEC"):
        os.environ["SAMEBITS_PYTORCH_REEXEC"] = "1"
        os.execv(other, [other] + sys.argv)
    message = "torch or numpy cannot be imported by %s (Debian: python3-torch)" % sys.executable
    sys.stdout.write(json.dumps({"type": "error", "message": message}, separators=(",", ":")) + "\n")
    print("pytorch_engine: error: " + message, file=sys.stderr)
    sys.exit(2)


try:
    import torch  # noqa: E402 (after the line above, which must come first)
    import step_fields  # noqa: E402 (needs numpy)
except ImportError:
    _reexec_with_torch()

import checkpoint_source  # noqa: E402
import device_setup  # noqa: E402
import scenario as scenario_file  # noqa: E402
from llama_forward import LlamaModel, Unsupported  # noqa: E402
from safetensors_folder import CheckpointError, load_folder  # noqa: E402

VERSION = "1"


def line(record):
    """Writes one protocol record as one JSON line and flushes it."""
    sys.stdout.write(json.dumps(record, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def unsupported(reason):
    line({"type": "unsupported", "reason": reason})
    print("pytorch_engine: unsupported: " + reason, file=sys.stderr)
    sys.exit(2)


def error(message, code=2):
    line({"type": "error", "message": message})
    print("pytorch_engine: error: " + message, file=sys.stderr)
    sys.exit(code)


def load_xxh3():
    """XXH3-64 from libxxhash, else from the python xxhash module (the same
    function, seed 0), which machines without libxxhash may have."""
    path = ctypes.util.find_library("xxhash")
    if path is None:
        try:
            import xxhash
        except ImportError:
            error("libxxhash is not installed (Debian: libxxhash0), nor python's xxhash")
        return xxhash.xxh3_64_intdigest
    lib = ctypes.CDLL(path)
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lambda data: lib.XXH3_64bits(data, len(data))


def weights_hash(xxh3, stored_as):
    """XXH3-64 of every tensor (name, dtype, shape, stored bytes) in name
    order: this adapter's own checkpoint identity (not samebits' tensor order)."""
    parts = []
    for name in sorted(stored_as):
        dtype, shape, raw = stored_as[name]
        parts += [name.encode() + b"\0", dtype.encode() + b"\0",
                  struct.pack("<%dQ" % (len(shape) + 1), len(shape), *shape), raw.tobytes()]
    return "%016x" % xxh3(b"".join(parts))


def cpu_capability():
    """The ATen kernels' CPU capability (DEFAULT, AVX2, AVX512), as torch reports it."""
    found = re.search(r"CPU capability usage: (\w+)", torch.__config__.show())
    return found.group(1).lower() if found else "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for text in f:
                if text.startswith("model name"):
                    return text.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def hello(args, name, xxh3_weights, vocab_size, device):
    uname = os.uname()
    record = {"type": "hello", "protocol": 1,
              "engine": {"name": "pytorch",
                         "version": "%s (torch %s)" % (VERSION, torch.__version__)},
              "build": {"revision": "torch " + torch.__version__, "dirty": False,
                        "compiler": "python " + platform.python_version(), "flags": ""},
              "platform": {"arch": uname.machine, "isa_features": [cpu_capability()],
                           "os": uname.sysname, "kernel": uname.release,
                           "libc": " ".join(platform.libc_ver()), "cpu": cpu_model()},
              "math": {"profile": "portable", "library": "torch", "version": torch.__version__,
                       "fingerprint": "0000000000000000"},
              # threads and isa say what ran (isa: ATen's CPU capability);
              # the rest are this adapter's own axes, which
              # engines/pytorch.json's `hello` entries check.
              "config": {"checkpoint": args.checkpoint, "scenario": name,
                         "threads": torch.get_num_threads(), "isa": cpu_capability(),
                         "dtype": args.dtype, "feed": args.feed, "companions": args.companions,
                         "device": args.device, "deterministic": args.deterministic,
                         "tf32": args.tf32, "attention": args.attention, "repeats": args.repeats},
              "checkpoint": {"spec": args.checkpoint, "weights_xxh3": xxh3_weights,
                             "vocab_size": vocab_size}}
    if device.type == "cuda":  # the CPU's hello stays as it was
        record["device"] = device_setup.describe_cuda(device)
    return record


class Run:
    """The scenario's sequence (slot 0) beside its companions, one cache.
    Every output row's XXH3-64 is kept in `hashes`; a run that writes (the
    first repeat) also writes its step records and dump rows."""

    def __init__(self, model, companions, xxh3, dump, write):
        self.model, self.xxh3, self.dump, self.write = model, xxh3, dump, write
        self.cache = model.new_cache(1 + companions)
        self.companion_fed = [0] * (1 + companions)
        self.index = 0
        self.last_token = None
        self.hashes = []

    def companion_chunk(self, c, n):
        """Companion c's next chunk beside a chunk of n: n + c seeded random ids."""
        vocab = self.model.c.vocab_size
        start = self.companion_fed[c]
        self.companion_fed[c] += n + c
        return [3 % vocab + scenario_file.splitmix64(1000 + c, start + i) % (vocab - 3 % vocab)
                for i in range(n + c)]

    def call(self, chunk):
        """One forward call feeding `chunk`; returns its rows' logits (n, vocab)
        as float32 on the CPU."""
        chunks = [chunk] + [self.companion_chunk(c, len(chunk)) for c in range(1, len(self.cache["past"]))]
        return self.model.forward(chunks, self.cache)[0, :len(chunk)].cpu()

    def emit(self, kind, position, fed, row):
        """Hashes one output row; writes its step record (and dump row)."""
        values = row.contiguous().numpy()
        if self.write and self.dump:
            self.dump.write(step_fields.dump_bytes(values))
        fields, digest = step_fields.row_fields(values, self.xxh3)
        self.hashes.append(digest)
        token = fields["argmax"]  # greedy
        if self.write:
            record = {"type": "step", "index": self.index, "kind": kind, "position": position,
                      "input_token": fed, "token": token}
            record.update(fields)
            line(record)
        self.index += 1
        self.last_token = token

    def feed(self, kind, tokens, every, whole):
        """Feeds a chunk whole or token by token; emits its last row or every row."""
        start = self.cache["past"][0]
        calls = [tokens] if whole else [[t] for t in tokens]
        rows = [self.call(c) for c in calls]
        rows = rows[0] if whole else [r[0] for r in rows]
        for i in (range(len(tokens)) if every else [len(tokens) - 1]):
            self.emit(kind, start + i, tokens[i], rows[i])

    def scenario(self, steps, whole):
        """Runs every step; decode feeds the token the previous row chose."""
        for kind, what, every in steps:
            if kind == "decode":
                for _ in range(what):
                    self.feed("decode", [self.last_token], False, True)
            else:
                self.feed(kind, what, every, whole)
        return self


def run_repeats(model, args, steps, xxh3, dump):
    """Runs the scenario --repeats times. Repeat 1 writes the records and the
    dump, and alone is timed (elapsed_ms means the same whatever --repeats);
    each later repeat starts from a fresh cache and fresh companions and only
    hashes its rows. Returns (steps written, elapsed ms, every repeat's hashes)."""
    whole = args.feed == "whole"
    start = time.monotonic()
    first = Run(model, args.companions, xxh3, dump, True).scenario(steps, whole)
    if dump:
        dump.close()
    elapsed_ms = (time.monotonic() - start) * 1000.0
    outputs = [first.hashes]
    for _ in range(1, args.repeats):
        outputs.append(Run(model, args.companions, xxh3, None, False).scenario(steps, whole).hashes)
    return first.index, elapsed_ms, outputs


def compare_repeats(outputs):
    """done's `repeats`: how many distinct outputs (each the sequence of its
    rows' XXH3-64) the repeats gave, and where the first that differs from
    repeat 1 parts from it (1-based repeat, 0-based step)."""
    summary = {"count": len(outputs), "distinct": len(set(map(tuple, outputs)))}
    first = outputs[0]
    for number, output in enumerate(outputs[1:], start=2):
        if len(output) != len(first):
            error("repeat %d wrote %d rows, repeat 1 %d (an adapter bug)"
                  % (number, len(output), len(first)), 1)
        if output != first:
            step = next(i for i, (a, b) in enumerate(zip(first, output)) if a != b)
            summary.update({"first_repeat": number, "first_step": step})
            break
    return summary


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one scenario on one checkpoint")
    run.add_argument("--checkpoint", required=True, metavar="SPEC")
    run.add_argument("--scenario", required=True, metavar="FILE")
    run.add_argument("--threads", type=int, default=1, metavar="N")
    run.add_argument("--dtype", choices=list(device_setup.DTYPES), default="f32")
    run.add_argument("--feed", choices=["whole", "token"], default="whole")
    run.add_argument("--companions", type=int, default=0, metavar="N")
    # --device and --attention are echoed in hello as given; cudaN and
    # sdpa_math etc. are accepted for cuda:N and sdpa-math (profile tokens).
    run.add_argument("--device", default="cpu", metavar="cpu|cuda|cuda:N")
    run.add_argument("--deterministic", choices=["off", "on"], default="off")
    run.add_argument("--tf32", choices=["off", "on"], default="off")
    run.add_argument("--attention", default="eager", metavar="|".join(device_setup.ATTENTIONS))
    run.add_argument("--repeats", type=int, default=1, metavar="N")
    run.add_argument("--dump-logits", metavar="FILE")
    args = parser.parse_args()
    if not 1 <= args.threads <= 1024:
        error("--threads %d is outside [1, 1024]" % args.threads)
    if not 0 <= args.companions <= 63:
        error("--companions %d is outside [0, 63]" % args.companions)
    if device_setup.parse_device(args.device) is None:
        error("--device %s is not cpu, cuda or cuda:N" % args.device)
    args.attention_mode = device_setup.attention_mode(args.attention)
    if args.attention_mode is None:
        error("--attention %s is not one of %s" % (args.attention, ", ".join(device_setup.ATTENTIONS)))
    if not 1 <= args.repeats <= 1000:
        error("--repeats %d is outside [1, 1000]" % args.repeats)
    return args


def prepare_device(args):
    """Everything that decides the device's bits, checked before the
    checkpoint is exported or loaded, so a cell this machine cannot run is
    refused at once. Returns the device and the attention context."""
    try:
        device_setup.prepare_determinism(args.deterministic)  # before CUDA starts
        device = device_setup.resolve_device(args.device)
        device_setup.set_tf32(args.tf32, device)
        device_setup.set_determinism(args.deterministic)
        device_setup.probe_dtype(args.dtype, device)
        return device, device_setup.attention_context(args.attention_mode)
    except Unsupported as e:
        unsupported(str(e))


def main():
    args = parse_arguments()
    torch.set_num_threads(args.threads)
    device, attention = prepare_device(args)
    dtype = device_setup.DTYPES[args.dtype]
    xxh3 = load_xxh3()
    try:
        folder = checkpoint_source.safetensors_folder(args.checkpoint)
        config, tensors, stored_as = load_folder(folder)
        model = LlamaModel(config, tensors, dtype, device, args.attention_mode)
        name, steps = scenario_file.read_scenario(args.scenario, model.c.vocab_size,
                                                  model.c.max_seq_len)
    except Unsupported as e:
        unsupported("checkpoint %s: %s" % (args.checkpoint, e))
    except (CheckpointError, ValueError) as e:
        error("checkpoint %s: %s" % (args.checkpoint, e))
    except RuntimeError as e:  # out of device memory, say
        error("checkpoint %s: %s" % (args.checkpoint, e), 1)
    try:
        device_setup.probe_attention(args.attention_mode, attention, device, dtype, model.c.head_dim)
    except Unsupported as e:
        unsupported(str(e))
    dump = open(args.dump_logits, "wb") if args.dump_logits else None
    line(hello(args, name, weights_hash(xxh3, stored_as), model.c.vocab_size, device))

    try:
        with attention():
            steps_written, elapsed_ms, outputs = run_repeats(model, args, steps, xxh3, dump)
    except RuntimeError as e:
        reason = device_setup.runtime_unsupported(e)
        if reason:
            unsupported(reason)
        error(str(e), 1)
    done = {"type": "done", "steps": steps_written, "elapsed_ms": elapsed_ms}
    if args.repeats > 1:
        done["repeats"] = compare_repeats(outputs)
    line(done)


if __name__ == "__main__":
    main()
