"""Reads a samebits scenario (scenarios/README.md) into the part this adapter
runs: token prompts (explicit or seeded random), the greedy sampler, and
prefill / decode / extend steps. What it cannot run raises Unsupported; what
is malformed raises ValueError (the adapter's `error`)."""
import json

from llama_forward import Unsupported

MASK64 = 0xFFFFFFFFFFFFFFFF
# The longest token list or decode run a scenario may ask for (the engine's
# limit, engine/run/scenario.cc).
MAX_COUNT = 1 << 20


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


def _no_duplicate_keys(pairs):
    """json.load's object hook: a key given twice is refused, as the engine
    refuses it (which copy counts would otherwise be this reader's choice)."""
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError("the key '%s' is given twice in one object" % key)
        seen.add(key)
    return dict(pairs)


def _check_keys(value, allowed, where):
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise ValueError("%s: unknown key '%s' (expected %s)"
                         % (where, unknown[0], ", ".join("'%s'" % k for k in allowed)))


def _is_count(value, low, high):
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _tokens(source, vocab_size, where):
    """The token ids of a token source."""
    if not isinstance(source, dict) or len(source) != 1:
        raise ValueError("%s: a token source is an object with one of tokens, random, text" % where)
    if "text" in source:
        raise Unsupported("%s: a text prompt (this adapter has no tokenizer; use tokens or random)"
                          % where)
    if "tokens" in source:
        tokens = source["tokens"]
        if not isinstance(tokens, list) or not 1 <= len(tokens) <= MAX_COUNT or not all(
                _is_count(t, 0, vocab_size - 1) for t in tokens):
            raise ValueError("%s: 'tokens' must be a non-empty list of ids below %d"
                             % (where, vocab_size))
        return tokens
    if "random" in source:
        r = source["random"]
        if not isinstance(r, dict):
            raise ValueError("%s: 'random' must be an object" % where)
        _check_keys(r, ("length", "seed", "first_token"), where + ".random")
        if not _is_count(r.get("seed"), 0, MASK64) or not _is_count(r.get("first_token", 3), 0, 0x7FFFFFFF):
            raise ValueError("%s: 'random' takes length, a seed from 0 to 2^64 - 1 and an optional"
                             " first_token >= 0" % where)
        if not _is_count(r.get("length"), 1, MAX_COUNT):
            raise ValueError("%s: length must be in [1, 2^20]" % where)
        return random_tokens(r["length"], r["seed"], vocab_size, r.get("first_token", 3))
    raise ValueError("%s: unknown token source %s" % (where, next(iter(source))))


def read_scenario(path, vocab_size, max_seq_len):
    """Returns (name, steps): steps are ("prefill"|"extend", tokens, all_positions)
    and ("decode", count, False), in order."""
    try:
        with open(path, encoding="utf-8") as f:
            scenario = json.load(f, object_pairs_hook=_no_duplicate_keys)
    except (OSError, ValueError) as e:
        raise ValueError("scenario %s: %s" % (path, e))
    where = "scenario %s" % path
    if not isinstance(scenario, dict) or not isinstance(scenario.get("name"), str) \
            or not scenario["name"]:
        raise ValueError("%s: expected an object with a non-empty name" % where)
    _check_keys(scenario, ("name", "description", "prompt", "sampler", "steps"), where)
    if not isinstance(scenario.get("description", ""), str):
        raise ValueError("%s: 'description' must be a string" % where)
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
        if kind == "decode" and "all_positions" in step:
            raise ValueError("%s: unknown key 'all_positions' (a decode feeds one position)" % at)
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
            if not _is_count(count, 1, MAX_COUNT):
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
