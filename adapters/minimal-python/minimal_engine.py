#!/usr/bin/env python3
"""A minimal engine that speaks the samebits child protocol (version 1).

It is the complete example of engine/protocol/PROTOCOL.md's "Write an
adapter": everything the harness needs from an engine and nothing more. Its
"model" is a toy (a vocabulary of 64 logits, each a float32 sum of weights
over the context), so that the protocol is all there is to read. A real
adapter replaces `logits()` with a call into the engine it wraps.

    minimal_engine.py run --checkpoint toy:NAME --scenario FILE
                          [--sum-order forward|reverse] [--tile N]
                          [--dump-logits FILE]

`--sum-order` and `--tile` are this engine's own axes; samebits knows them
only from the profile beside this file (profile.json). Summing the context
in reverse changes the rounding of float32 additions, so its logits differ
from forward's: the profile declares that as a known difference. `--tile`
only changes how rows are grouped, never a sum, so it must not change a bit.

Standard library only: XXH3-64 comes from libxxhash (the library samebits
itself builds with) through ctypes.
"""
import argparse
import ctypes
import ctypes.util
import json
import struct
import sys
import time

VOCAB = 64


def line(record):
    """Writes one protocol record as one JSON line and flushes it."""
    sys.stdout.write(json.dumps(record, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def unsupported(reason):
    """This engine cannot run what was asked: says so (never `error`), exits 2."""
    line({"type": "unsupported", "reason": reason})
    print("minimal_engine: unsupported: " + reason, file=sys.stderr)
    sys.exit(2)


def error(message):
    line({"type": "error", "message": message})
    print("minimal_engine: error: " + message, file=sys.stderr)
    sys.exit(2)


def load_xxh3():
    path = ctypes.util.find_library("xxhash")
    if path is None:
        error("libxxhash is not installed (Debian: libxxhash0)")
    function = ctypes.CDLL(path).XXH3_64bits
    function.restype = ctypes.c_uint64
    function.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lambda data: function(data, len(data))


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def f32(x):
    """Rounds to float32 (a float64 sum of two float32 values rounds exactly)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def weight(token, position, i):
    """A fixed weight in [-1, 1) from an integer hash: no randomness, no device."""
    h = (token * 2654435761 + position * 40503 + i * 97 + 12345) & 0xFFFFFFFF
    h ^= h >> 15
    h = (h * 2246822519) & 0xFFFFFFFF
    h ^= h >> 13
    return f32((h % 2001 - 1000) / 1000.0 * 3.0)


def logits(context, sum_order, tile):
    """The toy forward pass: logit i is the float32 sum over the context of
    weight(token, position, i), in the order asked; rows in tiles of `tile`."""
    order = list(range(len(context)))
    if sum_order == "reverse":
        order.reverse()
    out = [0.0] * VOCAB
    for start in range(0, VOCAB, tile):
        for i in range(start, min(start + tile, VOCAB)):
            acc = 0.0
            for j in order:
                acc = f32(acc + weight(context[j], j, i))
            out[i] = acc
    return out


def step_fields(data, xxh3):
    """The step fields of one row of logits, `data` its float32 bits
    little-endian as the dump holds them (PROTOCOL.md `step`; clause C9):
    both hashes over the bits with every NaN as the quiet NaN 0x7fc00000
    (NaN signs and payloads are not portable), the argmax (ties to the lower
    id, NaNs never chosen; id 0 when every value is NaN) and the NaN and Inf
    counts. tests/protocol/records_mirror.py holds it to the fixture file
    samebits-engine is held to."""
    count = len(data) // 4
    bits = list(struct.unpack("<%dI" % count, data))
    values = struct.unpack("<%df" % count, data)
    best, nans, infs = None, 0, 0
    for i, value in enumerate(values):
        if value != value:
            nans += 1
            bits[i] = 0x7FC00000
            continue
        if value in (float("inf"), float("-inf")):
            infs += 1
        if best is None or value > values[best]:
            best = i
    canonical = struct.pack("<%dI" % count, *bits)
    return {"fnv1a64": "%016x" % fnv1a64(canonical), "xxh3_64": "%016x" % xxh3(canonical),
            "argmax": 0 if best is None else best, "nan": nans, "inf": infs}


# The longest token list or decode run a scenario may ask for (the engine's
# limit, engine/run/scenario.cc).
MAX_COUNT = 1 << 20


def json_object_pairs(pairs):
    """json.load's object hook: a key given twice is refused, as the engine
    refuses it (which copy counts would otherwise be this reader's choice)."""
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError("the key '%s' is given twice in one object" % key)
        seen.add(key)
    return dict(pairs)


def check_keys(value, allowed, where):
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        error("%s: unknown key '%s' (expected %s)"
              % (where, unknown[0], ", ".join("'%s'" % k for k in allowed)))


def tokens_of(source, where):
    """The ids of a token source; this adapter expands only `tokens`."""
    if not isinstance(source, dict) or len(source) != 1:
        error(where + ": must have exactly one of 'random', 'tokens' or 'text'")
    check_keys(source, ("random", "tokens", "text"), where)
    if "tokens" not in source:
        unsupported(where + ": this adapter reads only {\"tokens\": [...]} sources")
    tokens = source["tokens"]
    if not isinstance(tokens, list) or not 1 <= len(tokens) <= MAX_COUNT or not all(
            isinstance(t, int) and not isinstance(t, bool) and 0 <= t < VOCAB for t in tokens):
        error(where + ": expected a non-empty list of token ids below %d" % VOCAB)
    return tokens


def all_positions_of(step, where):
    """A step's all_positions: only false (the default) runs here."""
    every = step.get("all_positions", False)
    if not isinstance(every, bool):
        error(where + ": 'all_positions' must be true or false")
    if every:
        unsupported(where + ": all_positions (this adapter emits the last position only)")


def read_scenario(path):
    """Returns (name, prompt, plan) of the scenarios/README.md format, the
    subset this adapter runs: token prompts, greedy decode and extend; `plan`
    is what follows the prefill, ("decode", count) and ("extend", tokens).
    A malformed file is an error, as samebits-engine's reader says (the same
    fixture files hold both: tests/protocol/scenario_mirror.py); a valid one
    this adapter cannot run is unsupported."""
    try:
        with open(path, encoding="utf-8") as f:
            scenario = json.load(f, object_pairs_hook=json_object_pairs)
    except (OSError, ValueError) as e:
        error("scenario %s: %s" % (path, e))
    where = "scenario %s" % path
    if not isinstance(scenario, dict):
        error(where + ": the top level must be an object")
    check_keys(scenario, ("name", "description", "prompt", "sampler", "steps"), where)
    name = scenario.get("name")
    if not isinstance(name, str) or not name:
        error(where + ": 'name' must be a non-empty string")
    if not isinstance(scenario.get("description", ""), str):
        error(where + ": 'description' must be a string")
    if scenario.get("sampler", {"kind": "greedy"}) != {"kind": "greedy"}:
        unsupported(where + ": only the greedy sampler")
    if "prompt" not in scenario:
        error(where + ": missing 'prompt'")
    steps = scenario.get("steps")
    if not isinstance(steps, list) or not steps:
        error(where + ": 'steps' must be a non-empty list, starting with {\"prefill\": \"prompt\"}")
    plan = []
    for number, step in enumerate(steps):
        at = "%s: step %d" % (where, number)
        if not isinstance(step, dict):
            error(at + ": must be an object")
        kinds = [k for k in ("prefill", "decode", "extend") if k in step]
        if len(kinds) != 1:
            error(at + ": must have exactly one of 'prefill', 'decode' or 'extend'")
        kind = kinds[0]
        if (kind == "prefill") != (number == 0):
            error(at + ": the first step, and only the first, is {\"prefill\": \"prompt\"}")
        if kind == "prefill":
            check_keys(step, ("prefill", "all_positions"), at)
            if step["prefill"] != "prompt":
                error(at + ": 'prefill' must be \"prompt\"")
            all_positions_of(step, at)
            prompt = tokens_of(scenario["prompt"], where + ": prompt")
        elif kind == "decode":
            check_keys(step, ("decode",), at)
            count = step["decode"]
            if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_COUNT:
                error(at + ": 'decode' must be a positive integer up to %d" % MAX_COUNT)
            plan.append(("decode", count))
        else:
            check_keys(step, ("extend", "all_positions"), at)
            all_positions_of(step, at)
            plan.append(("extend", tokens_of(step["extend"], at + ": extend")))
    return name, prompt, plan


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--checkpoint", required=True)
    run.add_argument("--scenario", required=True)
    run.add_argument("--sum-order", choices=["forward", "reverse"], default="forward")
    run.add_argument("--tile", type=int, default=VOCAB)
    run.add_argument("--dump-logits")
    args = parser.parse_args()
    if not 1 <= args.tile <= VOCAB:
        error("--tile %d is outside [1, %d]" % (args.tile, VOCAB))
    if not args.checkpoint.startswith("toy:"):
        unsupported("checkpoint %s: this adapter loads only toy:NAME" % args.checkpoint)
    name, prompt, plan = read_scenario(args.scenario)
    xxh3 = load_xxh3()
    dump = open(args.dump_logits, "wb") if args.dump_logits else None

    line({"type": "hello", "protocol": 1,
          "engine": {"name": "minimal-python", "version": "1"},
          "build": {"revision": "none", "dirty": False, "compiler": "python " + sys.version.split()[0],
                    "flags": ""},
          "platform": {"arch": "any", "isa_features": [], "os": sys.platform, "libc": "n/a",
                       "cpu": "unknown"},
          "math": {"profile": "portable", "library": "python-float", "version": "1",
                   "fingerprint": "0000000000000000"},
          # samebits-engine's switches (kernels, threads, isa, ...) mean
          # nothing here and are left out; this engine's own configuration
          # is checked by its profile's `hello` entries.
          "config": {"checkpoint": args.checkpoint, "scenario": name,
                     "sum_order": args.sum_order, "tile": args.tile},
          "checkpoint": {"spec": args.checkpoint, "weights_xxh3": "%016x" % xxh3(args.checkpoint.encode()),
                         "vocab_size": VOCAB}})

    start = time.monotonic()
    context = []
    index = 0

    def emit(kind, fed):
        """Feeds `fed` tokens; writes the step record of the last position."""
        nonlocal index
        context.extend(fed)
        row = logits(context, args.sum_order, args.tile)
        data = struct.pack("<%df" % VOCAB, *row)
        if dump:
            dump.write(data)
        fields = step_fields(data, xxh3)
        token = fields["argmax"]  # greedy
        record = {"type": "step", "index": index, "kind": kind, "position": len(context) - 1,
                  "input_token": fed[-1], "token": token}
        record.update(fields)
        line(record)
        index += 1
        return token

    token = emit("prefill", prompt)
    for kind, value in plan:
        if kind == "decode":
            for _ in range(value):
                token = emit("decode", [token])
        else:
            token = emit("extend", value)
    if dump:
        dump.close()
    line({"type": "done", "steps": index, "elapsed_ms": (time.monotonic() - start) * 1000.0})


if __name__ == "__main__":
    main()
