#!/usr/bin/python3
"""samebits' PyTorch adapter: a dense llama-family forward in PyTorch that
speaks the samebits child protocol (engine/protocol/PROTOCOL.md), so that
`samebits gate --engine pytorch` (engines/pytorch.json) can hold PyTorch's
logits to its own baseline bit for bit, and `samebits conform` to ours.

    pytorch_engine.py run --checkpoint SPEC --scenario FILE
                          [--threads N] [--dtype f32|bf16] [--feed whole|token]
                          [--companions N] [--dump-logits FILE]

SPEC is a safetensors folder as `samebits-engine export` writes it
(`safetensors:DIR` or a directory), or any checkpoint samebits loads, which
is exported into a cache first (checkpoint_source.py). The axes:
  --threads N       torch.set_num_threads(N) (intra-op threads)
  --dtype           the compute dtype of weights and activations (logits are
                    hashed as float32 either way)
  --feed            prompt and extend chunks in one forward call (whole) or
                    one call per token (token)
  --companions N    the sequence runs in one padded batch beside N seeded
                    random companion sequences, each fed longer chunks (its
                    own rows are padded and masked); 0: alone
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

import numpy  # noqa: E402 (after the line above, which must come first)
import torch  # noqa: E402

import checkpoint_source  # noqa: E402
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
    path = ctypes.util.find_library("xxhash")
    if path is None:
        error("libxxhash is not installed (Debian: libxxhash0)")
    lib = ctypes.CDLL(path)
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lambda data: lib.XXH3_64bits(data, len(data))


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


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


def hello(args, name, xxh3_weights, vocab_size):
    uname = os.uname()
    return {"type": "hello", "protocol": 1,
            "engine": {"name": "pytorch", "version": "%s (torch %s)" % (VERSION, torch.__version__)},
            "build": {"revision": "torch " + torch.__version__, "dirty": False,
                      "compiler": "python " + platform.python_version(), "flags": ""},
            "platform": {"arch": uname.machine, "isa_features": [cpu_capability()], "os": uname.sysname,
                         "kernel": uname.release, "libc": " ".join(platform.libc_ver()),
                         "cpu": cpu_model()},
            "math": {"profile": "portable", "library": "torch", "version": torch.__version__,
                     "fingerprint": "0000000000000000"},
            # threads and isa say what ran (isa: ATen's CPU capability);
            # dtype, feed and companions are this adapter's own axes, which
            # engines/pytorch.json's `hello` entries check.
            "config": {"checkpoint": args.checkpoint, "scenario": name,
                       "threads": torch.get_num_threads(), "isa": cpu_capability(),
                       "dtype": args.dtype, "feed": args.feed, "companions": args.companions},
            "checkpoint": {"spec": args.checkpoint, "weights_xxh3": xxh3_weights,
                           "vocab_size": vocab_size}}


class Run:
    """The scenario's sequence (slot 0) beside its companions, one cache."""

    def __init__(self, model, companions, xxh3, dump):
        self.model, self.xxh3, self.dump = model, xxh3, dump
        self.cache = model.new_cache(1 + companions)
        self.companion_fed = [0] * (1 + companions)
        self.index = 0
        self.last_token = None

    def companion_chunk(self, c, n):
        """Companion c's next chunk beside a chunk of n: n + c seeded random ids."""
        vocab = self.model.c.vocab_size
        start = self.companion_fed[c]
        self.companion_fed[c] += n + c
        return [3 % vocab + scenario_file.splitmix64(1000 + c, start + i) % (vocab - 3 % vocab)
                for i in range(n + c)]

    def call(self, chunk):
        """One forward call feeding `chunk`; returns its rows' logits (n, vocab)."""
        chunks = [chunk] + [self.companion_chunk(c, len(chunk)) for c in range(1, len(self.cache["past"]))]
        return self.model.forward(chunks, self.cache)[0, :len(chunk)]

    def emit(self, kind, position, fed, row):
        """Writes the step record (and dump row) of one output row."""
        data = row.contiguous().numpy().astype("<f4").tobytes()
        if self.dump:
            self.dump.write(data)
        values = row.numpy()
        nan = numpy.isnan(values)
        # argmax: ties to the lower id, NaNs never chosen.
        token = 0 if nan.all() else int(numpy.argmax(numpy.where(nan, -numpy.inf, values)))
        # Hashes see every NaN as the quiet NaN 0x7fc00000 (clause C9).
        bits = values.astype("<f4").view("<u4").copy()
        bits[nan] = 0x7FC00000
        data = bits.tobytes()
        line({"type": "step", "index": self.index, "kind": kind, "position": position,
              "input_token": fed, "token": token, "fnv1a64": "%016x" % fnv1a64(data),
              "xxh3_64": "%016x" % self.xxh3(data), "argmax": token,
              "nan": int(nan.sum()), "inf": int(numpy.isinf(values).sum())})
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one scenario on one checkpoint")
    run.add_argument("--checkpoint", required=True, metavar="SPEC")
    run.add_argument("--scenario", required=True, metavar="FILE")
    run.add_argument("--threads", type=int, default=1, metavar="N")
    run.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    run.add_argument("--feed", choices=["whole", "token"], default="whole")
    run.add_argument("--companions", type=int, default=0, metavar="N")
    run.add_argument("--dump-logits", metavar="FILE")
    args = parser.parse_args()
    if not 1 <= args.threads <= 1024:
        error("--threads %d is outside [1, 1024]" % args.threads)
    if not 0 <= args.companions <= 63:
        error("--companions %d is outside [0, 63]" % args.companions)
    torch.set_num_threads(args.threads)
    xxh3 = load_xxh3()
    try:
        folder = checkpoint_source.safetensors_folder(args.checkpoint)
        config, tensors, stored_as = load_folder(folder)
        model = LlamaModel(config, tensors, torch.float32 if args.dtype == "f32" else torch.bfloat16)
        name, steps = scenario_file.read_scenario(args.scenario, model.c.vocab_size,
                                                  model.c.max_seq_len)
    except Unsupported as e:
        unsupported("checkpoint %s: %s" % (args.checkpoint, e))
    except (CheckpointError, ValueError) as e:
        error("checkpoint %s: %s" % (args.checkpoint, e))
    dump = open(args.dump_logits, "wb") if args.dump_logits else None
    line(hello(args, name, weights_hash(xxh3, stored_as), model.c.vocab_size))

    start = time.monotonic()
    r = Run(model, args.companions, xxh3, dump)
    whole = args.feed == "whole"
    for kind, what, every in steps:
        if kind == "decode":
            for _ in range(what):
                r.feed("decode", [r.last_token], False, True)
        else:
            r.feed(kind, what, every, whole)
    if dump:
        dump.close()
    line({"type": "done", "steps": r.index, "elapsed_ms": (time.monotonic() - start) * 1000.0})


if __name__ == "__main__":
    main()
