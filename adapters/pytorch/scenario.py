"""Reads a samebits scenario (scenarios/README.md) into the part this adapter
runs: token prompts (explicit or seeded random), the greedy sampler, and
prefill / decode / extend steps. What it cannot run raises Unsupported; what
is malformed raises ValueError (the adapter's `error`)."""
import json

from llama_forward import Unsupported

MASK64 = 0xFFFFFFFFFFFFFFFF


def splitmix64(seed, i):
    """The i-th output (from 0) of splitmix64 seeded with `seed`."""
    z = (seed + (i + 1) * 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def random_tokens(length, seed, vocab_size, first_token=3):
    """scenarios/README.md's seeded random token sequence."""
    if not 0 <= first_token < vocab_size:
        raise ValueError("first_token %d is outside the vocabulary of %d" % (first_token, vocab_size))
    return [first_token + splitmix64(seed, i) % (vocab_size - first_token) for i in range(length)]


def _tokens(source, vocab_size, where):
    """The token ids of a token source."""
    if not isinstance(source, dict) or len(source) != 1:
        raise ValueError("%s: a token source is an object with one of tokens, random, text" % where)
    if "text" in source:
        raise Unsupported("%s: a text prompt (this adapter has no tokenizer; use tokens or random)"
                          % where)
    if "tokens" in source:
        tokens = source["tokens"]
        if not isinstance(tokens, list) or not tokens or not all(
                isinstance(t, int) and not isinstance(t, bool) and 0 <= t < vocab_size for t in tokens):
            raise ValueError("%s: 'tokens' must be a non-empty list of ids below %d"
                             % (where, vocab_size))
        return tokens
    if "random" in source:
        r = source["random"]
        if not isinstance(r, dict) or set(r) - {"length", "seed", "first_token"} or not all(
                isinstance(r.get(k), int) and r.get(k) >= 0 for k in ("length", "seed")):
            raise ValueError("%s: 'random' takes length, seed and an optional first_token" % where)
        if not 1 <= r["length"] <= 1 << 20:
            raise ValueError("%s: length must be in [1, 2^20]" % where)
        return random_tokens(r["length"], r["seed"], vocab_size, r.get("first_token", 3))
    raise ValueError("%s: unknown token source %s" % (where, next(iter(source))))


def read_scenario(path, vocab_size, max_seq_len):
    """Returns (name, steps): steps are ("prefill"|"extend", tokens, all_positions)
    and ("decode", count, False), in order."""
    try:
        with open(path, encoding="utf-8") as f:
            scenario = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError("scenario %s: %s" % (path, e))
    where = "scenario %s" % path
    if not isinstance(scenario, dict) or not isinstance(scenario.get("name"), str):
        raise ValueError("%s: expected an object with a name" % where)
    if scenario.get("sampler", {"kind": "greedy"}) != {"kind": "greedy"}:
        raise Unsupported("%s: sampler %s (this adapter samples greedily only)"
                          % (where, json.dumps(scenario.get("sampler"))))
    raw_steps = scenario.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise ValueError("%s: 'steps' must be a non-empty list" % where)
    steps, positions = [], 0
    for i, step in enumerate(raw_steps):
        at = "%s: step %d" % (where, i)
        if not isinstance(step, dict):
            raise ValueError("%s: expected an object" % at)
        every = step.get("all_positions", False)
        kinds = set(step) - {"all_positions"}
        if not isinstance(every, bool) or len(kinds) != 1:
            raise ValueError("%s: expected exactly one of prefill, decode, extend" % at)
        kind = kinds.pop()
        if (kind == "prefill") != (i == 0):
            raise ValueError("%s: {\"prefill\": \"prompt\"} must be the first step, and only there" % at)
        if kind == "prefill":
            if step["prefill"] != "prompt":
                raise ValueError("%s: 'prefill' must be \"prompt\"" % at)
            tokens = _tokens(scenario.get("prompt"), vocab_size, where + ": prompt")
            steps.append(("prefill", tokens, every))
            positions += len(tokens)
        elif kind == "decode":
            count = step["decode"]
            if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 1 << 20:
                raise ValueError("%s: 'decode' must be a positive integer" % at)
            steps.append(("decode", count, False))
            positions += count
        elif kind == "extend":
            tokens = _tokens(step["extend"], vocab_size, at)
            steps.append(("extend", tokens, every))
            positions += len(tokens)
        else:
            raise ValueError("%s: unknown step '%s'" % (at, kind))
    if positions > max_seq_len:
        raise ValueError("%s: %d positions exceed the checkpoint's max_seq_len %d"
                         % (where, positions, max_seq_len))
    return scenario["name"], steps
