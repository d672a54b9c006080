#!/usr/bin/env python3
"""Gates a served engine (llama-server, vLLM, SGLang, ...) through samebits'
child protocol (engine/protocol/PROTOCOL.md): the harness starts this
bridge as it starts any engine, and the bridge turns the scenario into HTTP
requests to the server and its answers into protocol records.

    openai_http_bridge.py run --checkpoint served:MODEL --scenario FILE
        (--url http://HOST:PORT | --url unix:/PATH
         | --launch PROGRAM [--launch-arg=ARG ...] [--launch-ready PATH]
           [--launch-timeout S]
         | --start-standin [--standin-arg=ARG ...])
        [--api llama|openai] [--top-k K] [--timeout S] [--request-field KEY=JSON]...
        [--repeats N] [--load F] [--load-seed S]
        [--logit-bias off|on] [--bias-token ID] [--bias-value V]
        [--vocab-size N]
        [--sampling off|on] [--sampling-seeds N] [--sampling-seed S]
        [--temperature T] [--sampling-tokens G] [--stream off|on]

Each output row of the scenario is one request: greedy (temperature 0),
one token, the whole context so far as token ids, asking for the top K
log-probabilities. Its `step` record carries the token the server chose
and the FNV-1a 64 and XXH3-64 of what the server returned: the chosen (id,
log-prob) and the top-K (id, log-prob) pairs, sorted by id, each log-prob
as the server's own digits (served_api.Number). So two cells with the same hashes
returned the same top K, bit for bit as sent, and nothing is claimed of the
rest of the row: the hello's `readback` says so (`{"kind":"topk","k":K}`,
or `{"kind":"tokens"}` with --top-k 0, which hashes the chosen ids alone).

--repeats N runs the whole scenario N times in a row and reports in
`done.repeats` how many distinct outputs they gave (the records are the
first repeat's). --load F keeps F filler requests in flight, from a seed,
while the scenario runs (the needle among fillers). --logit-bias on adds
--bias-value to --bias-token's logit in every request: a planted
difference, the card's negative control. --request-field adds one of the
profile's per-server fields to every request body (`n_cmpl=1`);
--prompt-cache on|off sets llama-server's `cache_prompt` (on: a request
whose prompt extends a cached one computes only the new tokens).

--stream on asks for each answer as server-sent events (`stream: true`) and
joins their tokens and log-probabilities into the answer the server would
have sent whole (served_api.Dialect.unstream): for a server that returns
log-probabilities only when streaming, and to show that streaming changes
nothing. A stream that ends early (no `data: [DONE]`; for llama-server, no
event with `stop: true`) is an error.

--sampling on also samples --sampling-tokens tokens after the scenario's
prompt at --temperature (above 0) with each of --sampling-seeds seeds (from
--sampling-seed), twice per seed, and reports in `done.sampling` how many
distinct samples the seeds gave and whether each seed gave the same one
twice (sampling.py; the harness fails the cell when a seed does not
reproduce its sample or every seed gives the same one). The greedy steps are
written as without it.

--launch PROGRAM starts the server itself (launched_server.py): PROGRAM,
absolute or relative to this bridge's folder, with the --launch-arg
arguments, where %model% is the checkpoint's file (the checkpoint is then
gguf:PATH, and the model is the one the server lists) and %socket% a Unix
socket in a fresh temporary folder that the server must listen on. The
bridge waits until GET --launch-ready (default /health) answers 200, and
stops and reaps the server before it exits; on a failure the server log's
last lines go to stderr.

--start-standin starts adapters/openai-http/standin_server.py (a toy
server, for tests) on a free local port and stops it before exiting,
however the bridge exits; --standin-arg passes it one argument.

Every failure ends in an `error` record naming the URL and what was asked,
and a non-zero exit. Standard library only.
"""
import argparse
import ctypes
import ctypes.util
import json
import os
import random
import select
import subprocess
import sys
import threading
import time

import launched_server
import sampling
import served_api

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_FILLER_REQUESTS = 256  # per filler, whatever the scenario's length


def line(record):
    """Writes one protocol record as one JSON line and flushes it."""
    sys.stdout.write(json.dumps(record, separators=(",", ":")) + "\n")
    sys.stdout.flush()


class Stop(Exception):
    """Ends the run with an `error` or `unsupported` record and an exit code."""

    def __init__(self, kind, message, code):
        super().__init__(message)
        self.kind = kind
        self.code = code


def error(message, code=1):
    return Stop("error", message, code)


def unsupported(reason):
    return Stop("unsupported", reason, 2)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise error("arguments: " + message, 2)


def load_xxhash():
    path = ctypes.util.find_library("xxhash")
    if path is None:
        raise error("libxxhash is not installed (Debian: libxxhash0)")
    return ctypes.CDLL(path)


def load_xxh3():
    function = load_xxhash().XXH3_64bits
    function.restype = ctypes.c_uint64
    function.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lambda data: function(data, len(data))


def file_xxh3(path):
    """XXH3-64 of a file's bytes, read in blocks (the llama.cpp adapter's
    weights_xxh3 of a GGUF file, so that the same file served and loaded
    directly carries the same hash)."""
    library = load_xxhash()
    library.XXH3_createState.restype = ctypes.c_void_p
    library.XXH3_64bits_reset.argtypes = [ctypes.c_void_p]
    library.XXH3_64bits_update.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    library.XXH3_64bits_digest.argtypes = [ctypes.c_void_p]
    library.XXH3_64bits_digest.restype = ctypes.c_uint64
    library.XXH3_freeState.argtypes = [ctypes.c_void_p]
    state = library.XXH3_createState()
    if not state:
        raise error("XXH3_createState failed")
    try:
        library.XXH3_64bits_reset(state)
        with open(path, "rb") as f:
            while True:
                block = f.read(1 << 22)
                if not block:
                    break
                library.XXH3_64bits_update(state, block, len(block))
        return library.XXH3_64bits_digest(state)
    except OSError as e:
        raise error("checkpoint %s: %s" % (path, e), 2) from None
    finally:
        library.XXH3_freeState(state)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def random_tokens(length, seed, first, vocab):
    """scenarios/README.md's seeded sequence (splitmix64, counter-based)."""
    mask = 0xFFFFFFFFFFFFFFFF
    out = []
    for i in range(length):
        z = (seed + (i + 1) * 0x9E3779B97F4A7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        out.append(first + z % (vocab - first))
    return out


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
        raise error("%s: unknown key '%s' (expected %s)"
                    % (where, unknown[0], ", ".join("'%s'" % k for k in allowed)), 2)


def is_count(value, low, high):
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def tokens_of(source, where, vocab):
    """A scenario token source as ids: `tokens`, or `random` when the
    server said its vocabulary size; `text` needs the server's tokenizer."""
    if not isinstance(source, dict) or len(source) != 1:
        raise error(where + ": must have exactly one of 'random', 'tokens' or 'text'", 2)
    check_keys(source, ("random", "tokens", "text"), where)
    if "tokens" in source:
        tokens = source["tokens"]
        if not isinstance(tokens, list) or not 1 <= len(tokens) <= MAX_COUNT or not all(
                is_count(t, 0, 0x7FFFFFFF) for t in tokens):
            raise error(where + ": 'tokens' must be a non-empty list of ids", 2)
        if vocab and max(tokens) >= vocab:
            raise error(where + ": token %d is not below the server's vocabulary of %d"
                        % (max(tokens), vocab), 2)
        return tokens
    if "random" in source:
        spec = source["random"]
        if not isinstance(spec, dict):
            raise error(where + ": 'random' must be an object", 2)
        check_keys(spec, ("length", "seed", "first_token"), where + ".random")
        length, seed, first = spec.get("length"), spec.get("seed"), spec.get("first_token", 3)
        if not is_count(length, 1, MAX_COUNT) or not is_count(seed, 0, 0xFFFFFFFFFFFFFFFF) \
                or not is_count(first, 0, 0x7FFFFFFF):
            raise error(where + ": 'random' needs length 1 to %d, a seed from 0 to 2^64 - 1 and"
                        " an optional first_token >= 0" % MAX_COUNT, 2)
        if not vocab:
            raise unsupported(where + ": a random prompt needs the vocabulary size, which this"
                              " server does not report (give --vocab-size)")
        if first >= vocab:
            raise error(where + ": first_token %d is not below the vocabulary of %d"
                        % (first, vocab), 2)
        return random_tokens(length, seed, first, vocab)
    raise unsupported(where + ": this bridge feeds token ids; text prompts need the server's"
                      " tokenizer (not done yet)")


def read_scenario(path, vocab):
    """(name, prompt, [(kind, tokens or decode count)...]) of a greedy
    scenario. A malformed file is an error, as samebits-engine's reader says
    (the same fixture files hold both: tests/protocol/scenario_mirror.py); a
    valid one this bridge cannot run is unsupported."""
    try:
        with open(path, encoding="utf-8") as f:
            scenario = json.load(f, object_pairs_hook=json_object_pairs)
    except (OSError, ValueError) as e:
        raise error("scenario %s: %s" % (path, e), 2)
    where = "scenario %s" % path
    if not isinstance(scenario, dict):
        raise error(where + ": expected a JSON object", 2)
    check_keys(scenario, ("name", "description", "prompt", "sampler", "steps"), where)
    name = scenario.get("name")
    if not isinstance(name, str) or not name:
        raise error(where + ": 'name' must be a non-empty string", 2)
    if not isinstance(scenario.get("description", ""), str):
        raise error(where + ": 'description' must be a string", 2)
    if scenario.get("sampler", {"kind": "greedy"}) != {"kind": "greedy"}:
        raise unsupported(where + ": only the greedy sampler (temperature 0)")
    if "prompt" not in scenario:
        raise error(where + ": missing 'prompt'", 2)
    steps = scenario.get("steps")
    if not isinstance(steps, list) or not steps:
        raise error(where + ": 'steps' must be a non-empty list, starting with"
                    " {\"prefill\": \"prompt\"}", 2)
    plan = []
    prompt = None
    for number, step in enumerate(steps):
        at = "%s: step %d" % (where, number)
        if not isinstance(step, dict):
            raise error(at + ": must be an object", 2)
        kinds = [k for k in ("prefill", "decode", "extend") if k in step]
        if len(kinds) != 1:
            raise error(at + ": must have exactly one of 'prefill', 'decode' or 'extend'", 2)
        kind = kinds[0]
        if (kind == "prefill") != (number == 0):
            raise error(at + ": the first step, and only the first, is {\"prefill\": \"prompt\"}", 2)
        check_keys(step, (kind,) if kind == "decode" else (kind, "all_positions"), at)
        every = step.get("all_positions", False)
        if not isinstance(every, bool):
            raise error(at + ": 'all_positions' must be true or false", 2)
        if every:
            raise unsupported(at + ": all_positions (a request gives one output row)")
        if kind == "prefill":
            if step["prefill"] != "prompt":
                raise error(at + ": 'prefill' must be \"prompt\"", 2)
            prompt = tokens_of(scenario["prompt"], where + ": prompt", vocab)
        elif kind == "decode":
            if not is_count(step["decode"], 1, MAX_COUNT):
                raise error(at + ": 'decode' must be a positive integer up to %d" % MAX_COUNT, 2)
            plan.append(("decode", step["decode"]))
        else:
            plan.append(("extend", tokens_of(step["extend"], at + ": extend", vocab)))
    return name, prompt, plan


class Standin:
    """standin_server.py as this process's child: started on a free port,
    stopped and reaped by stop(). Its stdin is a pipe from here, so it also
    stops when this process dies without calling stop()."""

    def __init__(self, args):
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "standin_server.py")] + args,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        ready, _, _ = select.select([self.process.stdout], [], [], 10.0)
        first = self.process.stdout.readline().decode("utf-8", "replace").strip() if ready else ""
        if not first.startswith("listening "):
            self.stop()
            raise error("the stand-in server (standin_server.py %s) did not start: %r"
                        % (" ".join(args), first))
        self.url = first.split(" ", 1)[1]

    def stop(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Fillers:
    """--load F: F threads, each sending seeded filler requests (other
    prompts and lengths) one after another until stop(), at most
    MAX_FILLER_REQUESTS each, so that F requests are in flight while the
    scenario runs. Their prompts draw from `pool`, ids the server takes (its
    vocabulary when it says, else the scenario's own ids). A filler that
    fails is reported by stop()."""

    def __init__(self, server, dialect, model, count, seed, pool, extra):
        self.done = threading.Event()
        self.failures = []
        self.started = [threading.Event() for _ in range(count)]
        self.threads = [threading.Thread(target=self.run, daemon=True,
                                         args=(i, server, dialect, model, seed, pool, extra))
                        for i in range(count)]
        for thread in self.threads:
            thread.start()
        for event in self.started:
            event.wait(timeout=server.timeout)

    def run(self, i, server, dialect, model, seed, pool, extra):
        rng = random.Random(seed * 1000003 + i)
        try:
            for _ in range(MAX_FILLER_REQUESTS):
                prompt = [rng.choice(pool) for _ in range(rng.randint(4, 48))]
                body = dialect.request(model, prompt, rng.randint(4, 32), 0, {}, extra)
                server.call("POST", dialect.path, body, sent=self.started[i].set)
                if self.done.is_set():
                    return
        except served_api.ServedError as e:
            self.failures.append("filler %d: %s" % (i, e))
        finally:
            self.started[i].set()

    def stop(self, timeout):
        self.done.set()
        for thread in self.threads:
            thread.join(timeout)
        if any(t.is_alive() for t in self.threads):
            return "a filler request did not end within %g s" % timeout
        return self.failures[0] if self.failures else None


def server_identity(server, model):
    """(vocabulary size or None, model entry) from GET /v1/models, which
    llama-server, vLLM and SGLang all answer. `model` None: the one model a
    server launched here serves."""
    try:
        answer = served_api.plain(server.call("GET", "/v1/models"))
    except served_api.ServedError as e:
        raise error("server identity: %s" % e)
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list):
        raise error("GET %s/v1/models: expected {\"data\": [...]}, got %s"
                    % (server.url, json.dumps(answer)[:200]))
    names = [m.get("id") for m in data if isinstance(m, dict)]
    if model is None:
        if len(names) != 1 or not isinstance(names[0], str):
            raise error("the server at %s serves %d models (%s); a launched server must serve"
                        " one" % (server.url, len(names), ", ".join(map(str, names))))
        model = names[0]
    if model not in names:
        raise error("the server at %s does not serve the model '%s' (it serves: %s); name the"
                    " checkpoint served:NAME" % (server.url, model, ", ".join(map(str, names))), 2)
    entry = dict(data[names.index(model)])
    entry.pop("created", None)  # llama-server and vLLM stamp the time of the request
    meta = entry.get("meta")
    vocab = meta.get("n_vocab") if isinstance(meta, dict) else None
    return (vocab if isinstance(vocab, int) and vocab > 0 else None), entry


def cpu_model():
    """/proc/cpuinfo's first model name, as the engines' hello gives it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for text in f:
                key, _, value = text.partition(":")
                if key.strip() == "model name" and value.strip():
                    return value.strip()
    except OSError:
        pass
    return "unknown"


# The entries of llama-server's GET /props kept in the cell's `server`
# identity: what can change its numbers (build, slots sharing a batch,
# context) and nothing bulky (its chat template, every default setting).
PROPS_KEPT = ("build_info", "model_path", "total_slots", "n_ctx")


def server_props(server):
    """The server's GET /props answer, or {} where it has none (vLLM,
    SGLang)."""
    try:
        props = served_api.plain(server.call("GET", "/props"))
    except served_api.ServedError:
        return {}
    return props if isinstance(props, dict) else {}


def props_kept(props):
    """The PROPS_KEPT entries of a /props answer that are plain strings or
    numbers (`n_ctx` also from its default generation settings)."""
    settings = props.get("default_generation_settings")
    merged = dict(settings if isinstance(settings, dict) else {}, **props)
    return {key: merged[key] for key in PROPS_KEPT
            if isinstance(merged.get(key), (str, int)) and not isinstance(merged.get(key), bool)}


def server_build(props):
    """The server's build as it names it (llama-server's /props
    `build_info`), or "unknown" where it does not say (vLLM, SGLang)."""
    build = props.get("build_info")
    return build if isinstance(build, str) and build else "unknown"


def server_record(server, entry, props, fingerprints, launched):
    """The hello's `server` object: where the server was reached, its model
    entry (GET /v1/models), what of /props names its build and batching,
    the system_fingerprint its answers carried (vLLM, SGLang; several when
    they changed during the cell) and the command line it was started with."""
    record = {"url": server.url, "model": entry}
    kept = props_kept(props)
    if kept:
        record["props"] = kept
    if fingerprints:
        record["system_fingerprint"] = sorted(fingerprints)
    if launched:
        record["launched"] = launched.argv
    return record


class Run:
    """One pass over the scenario: a request per output row."""

    def __init__(self, args, server, dialect, model, xxh3):
        self.args = args
        self.server = server
        self.dialect = dialect
        self.model = model
        self.xxh3 = xxh3
        self.bias = {args.bias_token: args.bias_value} if args.logit_bias == "on" else {}
        self.extra = args.request
        self.withheld = set()  # steps whose probabilities the server did not send
        self.readbacks = []  # the first pass's (index, Step), for --dump-topk
        self.fingerprints = set()  # the answers' system_fingerprint values

    def step(self, context, index):
        """Asks for the next token after `context`; returns (record, hash)."""
        body = self.dialect.request(self.model, context, 1, self.args.top_k, self.bias, self.extra)
        try:
            answer = self.server.call("POST", self.dialect.path, body)
        except served_api.ServedError as e:
            raise error("step %d: %s" % (index, e)) from None
        asked = "POST %s%s %s" % (self.server.url, self.dialect.path, served_api.summary(body))
        try:
            answer = self.dialect.unstream(answer)
            fingerprint = answer.get("system_fingerprint") if isinstance(answer, dict) else None
            if isinstance(fingerprint, str) and len(self.fingerprints) < 8:
                self.fingerprints.add(fingerprint[:200])
            read = self.dialect.read_step(answer, self.args.top_k)
        except ValueError as e:
            raise error("step %d: the answer of %s%s: %s; asked: %s"
                        % (index, self.server.url, self.dialect.path, e, asked)) from None
        return self.record(read, index, asked)

    def record(self, read, index, asked):
        if len(self.readbacks) == index:
            self.readbacks.append(read)
        if read.withheld:
            self.withheld.add(index)
            text = "chosen %d withheld\n" % read.token
            data = text.encode("ascii")
            return ({"token": read.token, "fnv1a64": "%016x" % fnv1a64(data),
                     "xxh3_64": "%016x" % self.xxh3(data), "argmax": read.token, "nan": 0,
                     "inf": 0}, "%016x" % self.xxh3(data))
        if self.args.top_k == 0:
            read.logprob = None  # a read-back of tokens alone: no log-prob is judged or hashed
        values = [v for _, v in read.top] + ([read.logprob] if read.logprob is not None else [])
        nans = sum(1 for v in values if v.value is not None and v.value != v.value)
        target = self.server.url + self.dialect.path
        if nans:
            shown = [[t, v.canonical()] for t, v in read.top if v.canonical() == "nan"][:5]
            raise error("step %d: %s returned NaN as %d of its log-probabilities"
                        " (token, value: %s); asked: %s"
                        % (index, target, nans, json.dumps(shown), asked))
        ids = [t for t, _ in read.top]
        if len(set(ids)) != len(ids):
            raise error("step %d: %s returned a token id twice among its top log-probabilities;"
                        " asked: %s" % (index, target, asked))
        wanted = min(self.args.top_k, self.vocab) if self.vocab else self.args.top_k
        if len(read.top) < wanted:
            raise error("step %d: %s returned %d log-probabilities, asked for the top %d; asked: %s"
                        % (index, target, len(read.top), wanted, asked))
        # The read-back, canonically: the chosen id and its log-prob, then
        # every returned pair sorted by id, each as the server's digits.
        chosen = read.logprob.canonical() if read.logprob is not None else "-"
        text = "chosen %d %s\n" % (read.token, chosen)
        text += "".join("%d %s\n" % (t, v.canonical())
                        for t, v in sorted(read.top, key=lambda p: p[0]))
        data = text.encode("ascii")
        finite = [(t, v.value) for t, v in read.top
                  if v.value is not None and abs(v.value) != float("inf")]
        argmax = min(finite, key=lambda p: (-p[1], p[0]))[0] if finite else read.token
        infs = sum(1 for v in values if v.value is None or abs(v.value) == float("inf"))
        return ({"token": read.token, "fnv1a64": "%016x" % fnv1a64(data),
                 "xxh3_64": "%016x" % self.xxh3(data), "argmax": argmax, "nan": 0,
                 "inf": infs}, "%016x" % self.xxh3(data))

    def scenario(self, prompt, plan, records=None):
        """Runs the scenario once; appends its step records to `records`
        when given. Returns the row hashes (with the chosen tokens) in order."""
        context = []
        rows = []

        def emit(kind, fed):
            context.extend(fed)
            fields, digest = self.step(list(context), len(rows))
            if records is not None:
                record = {"type": "step", "index": len(rows), "kind": kind,
                          "position": len(context) - 1, "input_token": fed[-1]}
                record.update(fields)
                records.append(record)
            rows.append((fields["token"], digest))
            return fields["token"]

        token = emit("prefill", prompt)
        for kind, what in plan:
            if kind == "decode":
                for _ in range(what):
                    token = emit("decode", [token])
            else:
                token = emit("extend", what)
        return rows


def write_topk_dump(path, readbacks):
    """--dump-topk: per step, the chosen id, its log-prob and the returned
    (id, log-prob) pairs, each log-prob as the server's digits (null where
    withheld or not a finite number)."""
    def text(number):
        return number.canonical() if number is not None else None
    try:
        with open(path, "w", encoding="utf-8") as f:
            for index, read in enumerate(readbacks):
                f.write(json.dumps({"index": index, "token": read.token,
                                    "logprob": text(read.logprob), "withheld": read.withheld,
                                    "top": [[t, text(v)] for t, v in read.top]}) + "\n")
    except OSError as e:
        raise error("--dump-topk %s: %s" % (path, e), 2) from None


def compare_repeats(outputs):
    """done's `repeats`: distinct whole outputs, and where the first repeat
    that differs from repeat 1 parts from it (1-based repeat, 0-based step)."""
    summary = {"count": len(outputs), "distinct": len(set(map(tuple, outputs)))}
    for number, rows in enumerate(outputs[1:], start=2):
        if rows != outputs[0]:
            step = next(i for i, (a, b) in enumerate(zip(rows, outputs[0])) if a != b)
            summary.update({"first_repeat": number, "first_step": step})
            break
    return summary


def parse_arguments(argv):
    parser = Parser(prog="openai_http_bridge.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--checkpoint", required=True, help="served:MODEL")
    run.add_argument("--scenario", required=True)
    where = run.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="the server's base URL, http://HOST:PORT")
    where.add_argument("--launch", metavar="PROGRAM",
                       help="start this server (absolute, or relative to the bridge's folder)")
    where.add_argument("--start-standin", action="store_true")
    run.add_argument("--launch-arg", action="append", default=[], metavar="ARG",
                     help="an argument of --launch's program; %%model%% and %%socket%% are filled")
    run.add_argument("--launch-ready", default="/health", metavar="PATH",
                     help="the path that answers 200 once the launched server is ready")
    run.add_argument("--launch-timeout", type=float, default=120.0, metavar="S",
                     help="seconds the launched server may take to be ready")
    run.add_argument("--standin-arg", action="append", default=[])
    run.add_argument("--api", choices=["llama", "openai"], default="llama")
    run.add_argument("--top-k", type=int, default=20)
    run.add_argument("--timeout", type=float, default=60.0, help="per request, seconds")
    run.add_argument("--request-field", action="append", default=[], metavar="KEY=JSON",
                     help="a field added to every request body (repeatable)")
    run.add_argument("--repeats", type=int, default=1)
    run.add_argument("--load", type=int, default=0)
    run.add_argument("--load-seed", type=int, default=1)
    run.add_argument("--logit-bias", choices=["off", "on"], default="off")
    run.add_argument("--bias-token", type=int, default=1)
    run.add_argument("--bias-value", type=float, default=100.0)
    run.add_argument("--vocab-size", type=int, default=0)
    run.add_argument("--dump-topk", metavar="FILE",
                     help="writes the first pass's read-back, a JSON line per step (front_doors.py)")
    run.add_argument("--stream", choices=["off", "on"], default="off",
                     help="ask for server-sent events (stream: true) and join them")
    run.add_argument("--sampling", choices=["off", "on"], default="off",
                     help="also sample the prompt at --temperature with several seeds")
    run.add_argument("--sampling-seeds", type=int, default=4, metavar="N")
    run.add_argument("--sampling-seed", type=int, default=1, metavar="S",
                     help="the first seed; the others follow it")
    run.add_argument("--temperature", type=float, default=1.0, metavar="T")
    run.add_argument("--sampling-tokens", type=int, default=16, metavar="G")
    run.add_argument("--prompt-cache", choices=["server", "on", "off"], default="server",
                     help="llama-server's per-request cache_prompt (server: leave it unsaid)")
    args = parser.parse_args(argv)
    if not 0 <= args.top_k <= 1000:
        raise error("--top-k %d is outside [0, 1000]" % args.top_k, 2)
    if not 0 <= args.vocab_size <= 10000000:
        raise error("--vocab-size %d is outside [0, 10000000]" % args.vocab_size, 2)
    if not 0 < args.timeout <= 3600:
        raise error("--timeout %g is outside (0, 3600] seconds" % args.timeout, 2)
    if not 1 <= args.repeats <= 1000:
        raise error("--repeats %d is outside [1, 1000]" % args.repeats, 2)
    if not 0 <= args.load <= 64:
        raise error("--load %d is outside [0, 64]" % args.load, 2)
    if not 2 <= args.sampling_seeds <= 64:
        raise error("--sampling-seeds %d is outside [2, 64]" % args.sampling_seeds, 2)
    if not 0 <= args.sampling_seed <= 2 ** 31 - 64:
        raise error("--sampling-seed %d is outside [0, 2^31 - 64]" % args.sampling_seed, 2)
    if not (0 < args.temperature <= 100):
        raise error("--temperature %g is outside (0, 100]" % args.temperature, 2)
    if not 1 <= args.sampling_tokens <= 1024:
        raise error("--sampling-tokens %d is outside [1, 1024]" % args.sampling_tokens, 2)
    args.request = {}
    for field in args.request_field:
        key, equals, value = field.partition("=")
        if not key or not equals:
            raise error("--request-field %s: expected KEY=JSON (cache_prompt=false)" % field, 2)
        try:
            args.request[key] = json.loads(value)
        except ValueError as e:
            raise error("--request-field %s: the value is not JSON: %s" % (field, e), 2)
    if args.prompt_cache != "server":
        if args.api != "llama":
            raise unsupported("--prompt-cache %s: the OpenAI API has no per-request prompt cache"
                              " (vLLM and SGLang cache prefixes by a server option)"
                              % args.prompt_cache)
        if "cache_prompt" in args.request:
            raise error("--prompt-cache and --request-field cache_prompt=... both set it", 2)
        args.request["cache_prompt"] = args.prompt_cache == "on"
    if args.standin_arg and not args.start_standin:
        raise error("--standin-arg needs --start-standin", 2)
    if (args.launch_arg or args.launch_ready != "/health") and not args.launch:
        raise error("--launch-arg and --launch-ready need --launch", 2)
    if not 0 < args.launch_timeout <= 3600:
        raise error("--launch-timeout %g is outside (0, 3600] seconds" % args.launch_timeout, 2)
    if not args.launch_ready.startswith("/"):
        raise error("--launch-ready %s: expected a path, /health" % args.launch_ready, 2)
    if args.launch:
        if not args.checkpoint.startswith("gguf:") or not os.path.isfile(args.checkpoint[5:]):
            raise unsupported("checkpoint %s: a launched server loads a file, gguf:PATH"
                              % args.checkpoint)
        if not os.path.isabs(args.launch):
            args.launch = os.path.join(HERE, args.launch)
    elif not args.checkpoint.startswith("served:") or len(args.checkpoint) == 7:
        raise unsupported("checkpoint %s: this bridge gates a served model, served:MODEL"
                          % args.checkpoint)
    return args


def launch(args):
    """The server --launch names, started and ready, or an error."""
    try:
        return launched_server.LaunchedServer(args.launch, args.launch_arg, args.checkpoint[5:],
                                              args.launch_ready, args.launch_timeout)
    except launched_server.LaunchError as e:
        raise error(str(e)) from None


def main(argv):
    args = parse_arguments(argv)
    xxh3 = load_xxh3()
    standin = Standin(args.standin_arg) if args.start_standin else None
    launched = None
    fillers = None
    try:
        launched = launch(args) if args.launch else None
        url = standin.url if standin else launched.url if launched else args.url
        try:
            server = served_api.Server(url, args.timeout)
        except served_api.ServedError as e:
            raise error(str(e), 2)
        dialect = served_api.Dialect(args.api, stream=args.stream == "on")
        vocab, entry = server_identity(server, None if launched else args.checkpoint[7:])
        model = entry["id"]
        vocab = vocab or args.vocab_size or None
        name, prompt, plan = read_scenario(args.scenario, vocab)
        run = Run(args, server, dialect, model, xxh3)
        run.vocab = vocab
        if args.load:
            pool = list(range(3, vocab)) if vocab and vocab > 3 else sorted(
                set(prompt).union(*(what for kind, what in plan if kind == "extend")))
            fillers = Fillers(server, dialect, model, args.load, args.load_seed, pool, args.request)
        # The hello waits for the first pass: only then is it known whether
        # the server withheld any step's probabilities, and so what the
        # cell's read-back can claim.
        first = []
        start = time.monotonic()
        outputs = [run.scenario(prompt, plan, first)]
        elapsed_ms = (time.monotonic() - start) * 1000.0
        props = server_props(server)
        readback = {"kind": "topk", "k": args.top_k} if args.top_k > 0 else {"kind": "tokens"}
        if run.withheld:
            readback = {"kind": "tokens"}
            print("openai_http_bridge: the server sent no probabilities at step(s) %s (llama-server"
                  " withholds them for a token that ends inside a UTF-8 character): this cell's"
                  " read-back is the chosen tokens" % ", ".join(map(str, sorted(run.withheld))),
                  file=sys.stderr)
        if launched:
            model_xxh3 = "%016x" % file_xxh3(args.checkpoint[5:])
        else:
            model_xxh3 = "%016x" % xxh3(json.dumps(entry, sort_keys=True).encode())
        line({"type": "hello", "protocol": 1,
              "engine": {"name": "openai-http", "version": "1"},
              "build": {"revision": server_build(props), "dirty": False,
                        "compiler": "python " + sys.version.split()[0], "flags": ""},
              "platform": {"arch": os.uname().machine, "isa_features": [], "os": os.uname().sysname,
                           "kernel": os.uname().release, "libc": "n/a",
                           # A launched server computes on this machine's CPU.
                           "cpu": cpu_model() if launched else "unknown"},
              # The server's math is its own and unknown here: named as such.
              "math": {"profile": "served", "library": "unknown", "version": "unknown",
                       "fingerprint": "0000000000000000"},
              "config": {"checkpoint": args.checkpoint, "scenario": name, "api": args.api,
                         "top_k": args.top_k, "repeats": args.repeats, "load": args.load,
                         "logit_bias": args.logit_bias, "sampling": args.sampling,
                         "stream": args.stream},
              # A launched server's file is hashed as the llama.cpp adapter
              # hashes it; a server started elsewhere, by what it names as
              # its model (GET /v1/models): the bridge cannot read its weights.
              "checkpoint": {"spec": args.checkpoint,
                             "weights_xxh3": model_xxh3,
                             "vocab_size": vocab or max(args.top_k, 1)},
              "readback": readback,
              "server": server_record(server, entry, props, run.fingerprints, launched)})
        for record in first:
            line(record)
        if args.dump_topk:
            write_topk_dump(args.dump_topk, run.readbacks)
        for _ in range(1, args.repeats):
            outputs.append(run.scenario(prompt, plan))
        if fillers:
            failure = fillers.stop(args.timeout)
            fillers = None
            if failure:
                raise error("--load %d: %s" % (args.load, failure))
        done = {"type": "done", "steps": len(outputs[0]), "elapsed_ms": elapsed_ms}
        if args.repeats > 1:
            done["repeats"] = compare_repeats(outputs)
        if args.sampling == "on":
            try:
                done["sampling"] = sampling.check(server, dialect, model, prompt, args)
            except sampling.SamplingError as e:
                raise error(str(e)) from None
        line(done)
    except (Stop, served_api.ServedError):
        if launched:
            print("openai_http_bridge: the launched server's log, last lines:\n"
                  + launched.log_tail(), file=sys.stderr)
        raise
    finally:
        if fillers:
            fillers.stop(args.timeout)
        if standin:
            standin.stop()
        if launched:
            launched.stop()


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except Stop as stop:
        field = "reason" if stop.kind == "unsupported" else "message"
        line({"type": stop.kind, field: str(stop)})
        print("openai_http_bridge: %s: %s" % (stop.kind, stop), file=sys.stderr)
        sys.exit(stop.code)
    except served_api.ServedError as e:
        line({"type": "error", "message": str(e)})
        print("openai_http_bridge: error: %s" % e, file=sys.stderr)
        sys.exit(1)
    except BrokenPipeError:
        # The reader of stdout is gone: no record can reach it.
        print("openai_http_bridge: error: stdout was closed", file=sys.stderr)
        os._exit(1)
    except KeyboardInterrupt:
        line({"type": "error", "message": "interrupted"})
        sys.exit(1)
    except Exception as e:  # a bug of the bridge's: still a record, then the traceback
        line({"type": "error", "message": "openai_http_bridge: internal error: %r" % e})
        raise
