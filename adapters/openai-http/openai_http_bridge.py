#!/usr/bin/env python3
"""Gates a served engine (llama-server, vLLM, SGLang, ...) through samebits'
child protocol (engine/protocol/PROTOCOL.md): the harness starts this
bridge as it starts any engine, and the bridge turns the scenario into HTTP
requests to the server and its answers into protocol records.

    openai_http_bridge.py run --checkpoint served:MODEL --scenario FILE
        (--url http://HOST:PORT | --start-standin [--standin-arg=ARG ...])
        [--api llama|openai] [--top-k K] [--timeout S] [--request-field KEY=JSON]...
        [--repeats N] [--load F] [--load-seed S]
        [--logit-bias off|on] [--bias-token ID] [--bias-value V]
        [--vocab-size N]

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
profile's per-server fields to every request body (`cache_prompt=false`).

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


def load_xxh3():
    path = ctypes.util.find_library("xxhash")
    if path is None:
        raise error("libxxhash is not installed (Debian: libxxhash0)")
    function = ctypes.CDLL(path).XXH3_64bits
    function.restype = ctypes.c_uint64
    function.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lambda data: function(data, len(data))


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


def tokens_of(source, where, vocab):
    """A scenario token source as ids: `tokens`, or `random` when the
    server said its vocabulary size; `text` needs the server's tokenizer."""
    if isinstance(source, dict) and set(source) == {"tokens"}:
        tokens = source["tokens"]
        if not isinstance(tokens, list) or not tokens or not all(
                isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in tokens):
            raise error(where + ": 'tokens' must be a non-empty list of ids", 2)
        if vocab and max(tokens) >= vocab:
            raise error(where + ": token %d is not below the server's vocabulary of %d"
                        % (max(tokens), vocab), 2)
        return tokens
    if isinstance(source, dict) and set(source) == {"random"}:
        spec = source["random"]
        if not vocab:
            raise unsupported(where + ": a random prompt needs the vocabulary size, which this"
                              " server does not report (give --vocab-size)")
        if not isinstance(spec, dict) or not set(spec) <= {"length", "seed", "first_token"}:
            raise error(where + ": 'random' takes length, seed and first_token", 2)
        length, seed, first = spec.get("length"), spec.get("seed"), spec.get("first_token", 3)
        if not all(isinstance(v, int) and v >= 0 for v in (length, seed, first)) or length < 1 \
                or first >= vocab:
            raise error(where + ": 'random' needs length >= 1, seed >= 0, first_token below the"
                        " vocabulary", 2)
        return random_tokens(length, seed, first, vocab)
    raise unsupported(where + ": this bridge feeds token ids; text prompts need the server's"
                      " tokenizer (not done yet)")


def read_scenario(path, vocab):
    """(name, prompt, [(kind, tokens or decode count)...]) of a greedy scenario."""
    try:
        with open(path, encoding="utf-8") as f:
            scenario = json.load(f)
    except (OSError, ValueError) as e:
        raise error("scenario %s: %s" % (path, e), 2)
    if not isinstance(scenario, dict):
        raise error("scenario %s: expected a JSON object" % path, 2)
    if scenario.get("sampler", {"kind": "greedy"}) != {"kind": "greedy"}:
        raise unsupported("scenario %s: only the greedy sampler (temperature 0)" % path)
    steps = scenario.get("steps")
    if not isinstance(steps, list) or not steps or steps[0] != {"prefill": "prompt"}:
        raise unsupported("scenario %s: the first step must be {\"prefill\": \"prompt\"}" % path)
    prompt = tokens_of(scenario.get("prompt"), "scenario %s: prompt" % path, vocab)
    plan = []
    for number, step in enumerate(steps[1:], start=1):
        where = "scenario %s: step %d" % (path, number)
        if isinstance(step, dict) and set(step) == {"decode"}:
            count = step["decode"]
            if not isinstance(count, int) or isinstance(count, bool) or count < 1:
                raise error(where + ": 'decode' must be a positive integer", 2)
            plan.append(("decode", count))
        elif isinstance(step, dict) and set(step) == {"extend"}:
            plan.append(("extend", tokens_of(step["extend"], where, vocab)))
        else:
            raise unsupported(where + ": only decode and extend (one output row each) follow the"
                              " prefill")
    return str(scenario.get("name", "")), prompt, plan


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
    llama-server, vLLM and SGLang all answer."""
    try:
        answer = served_api.plain(server.call("GET", "/v1/models"))
    except served_api.ServedError as e:
        raise error("server identity: %s" % e)
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list):
        raise error("GET %s/v1/models: expected {\"data\": [...]}, got %s"
                    % (server.url, json.dumps(answer)[:200]))
    names = [m.get("id") for m in data if isinstance(m, dict)]
    if model not in names:
        raise error("the server at %s does not serve the model '%s' (it serves: %s); name the"
                    " checkpoint served:NAME" % (server.url, model, ", ".join(map(str, names))), 2)
    entry = dict(data[names.index(model)])
    entry.pop("created", None)  # llama-server and vLLM stamp the time of the request
    meta = entry.get("meta")
    vocab = meta.get("n_vocab") if isinstance(meta, dict) else None
    return (vocab if isinstance(vocab, int) and vocab > 0 else None), entry


def server_build(server):
    """The server's build as it names it (llama-server's GET /props
    `build_info`), or "unknown" where it does not say (vLLM, SGLang)."""
    try:
        props = served_api.plain(server.call("GET", "/props"))
    except served_api.ServedError:
        return "unknown"
    build = props.get("build_info") if isinstance(props, dict) else None
    return build if isinstance(build, str) and build else "unknown"


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

    def step(self, context, index):
        """Asks for the next token after `context`; returns (record, hash)."""
        body = self.dialect.request(self.model, context, 1, self.args.top_k, self.bias, self.extra)
        try:
            answer = self.server.call("POST", self.dialect.path, body)
        except served_api.ServedError as e:
            raise error("step %d: %s" % (index, e)) from None
        asked = "POST %s%s %s" % (self.server.url, self.dialect.path, served_api.summary(body))
        try:
            read = self.dialect.read_step(answer, self.args.top_k)
        except ValueError as e:
            raise error("step %d: the answer of %s%s: %s; asked: %s"
                        % (index, self.server.url, self.dialect.path, e, asked)) from None
        return self.record(read, index, asked)

    def record(self, read, index, asked):
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

    def scenario(self, prompt, plan, write):
        """Runs the scenario once; writes step records when `write`.
        Returns the row hashes (with the chosen tokens) in order."""
        context = []
        rows = []

        def emit(kind, fed):
            context.extend(fed)
            fields, digest = self.step(list(context), len(rows))
            if write:
                record = {"type": "step", "index": len(rows), "kind": kind,
                          "position": len(context) - 1, "input_token": fed[-1]}
                record.update(fields)
                line(record)
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
    where.add_argument("--start-standin", action="store_true")
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
    args.request = {}
    for field in args.request_field:
        key, equals, value = field.partition("=")
        if not key or not equals:
            raise error("--request-field %s: expected KEY=JSON (cache_prompt=false)" % field, 2)
        try:
            args.request[key] = json.loads(value)
        except ValueError as e:
            raise error("--request-field %s: the value is not JSON: %s" % (field, e), 2)
    if args.standin_arg and not args.start_standin:
        raise error("--standin-arg needs --start-standin", 2)
    if not args.checkpoint.startswith("served:") or len(args.checkpoint) == 7:
        raise unsupported("checkpoint %s: this bridge gates a served model, served:MODEL"
                          % args.checkpoint)
    return args


def main(argv):
    args = parse_arguments(argv)
    model = args.checkpoint[len("served:"):]
    xxh3 = load_xxh3()
    standin = Standin(args.standin_arg) if args.start_standin else None
    fillers = None
    try:
        try:
            server = served_api.Server(standin.url if standin else args.url, args.timeout)
        except served_api.ServedError as e:
            raise error(str(e), 2)
        dialect = served_api.Dialect(args.api)
        vocab, entry = server_identity(server, model)
        vocab = vocab or args.vocab_size or None
        name, prompt, plan = read_scenario(args.scenario, vocab)
        run = Run(args, server, dialect, model, xxh3)
        run.vocab = vocab
        readback = {"kind": "topk", "k": args.top_k} if args.top_k > 0 else {"kind": "tokens"}
        model_xxh3 = "%016x" % xxh3(json.dumps(entry, sort_keys=True).encode())
        line({"type": "hello", "protocol": 1,
              "engine": {"name": "openai-http", "version": "1"},
              "build": {"revision": server_build(server), "dirty": False,
                        "compiler": "python " + sys.version.split()[0], "flags": ""},
              "platform": {"arch": os.uname().machine, "isa_features": [], "os": os.uname().sysname,
                           "kernel": os.uname().release, "libc": "n/a", "cpu": "unknown"},
              # The server's math is its own and unknown here: named as such.
              "math": {"profile": "served", "library": "unknown", "version": "unknown",
                       "fingerprint": "0000000000000000"},
              "config": {"checkpoint": args.checkpoint, "scenario": name, "api": args.api,
                         "top_k": args.top_k, "repeats": args.repeats, "load": args.load,
                         "logit_bias": args.logit_bias},
              # What the server named as its model (GET /v1/models), not its
              # weights: the bridge cannot read them.
              "checkpoint": {"spec": args.checkpoint,
                             "weights_xxh3": model_xxh3,
                             "vocab_size": vocab or max(args.top_k, 1)},
              "readback": readback,
              "server": {"url": server.url, "model": entry}})
        if args.load:
            pool = list(range(3, vocab)) if vocab and vocab > 3 else sorted(
                set(prompt).union(*(what for kind, what in plan if kind == "extend")))
            fillers = Fillers(server, dialect, model, args.load, args.load_seed, pool, args.request)
        start = time.monotonic()
        outputs = [run.scenario(prompt, plan, write=True)]
        elapsed_ms = (time.monotonic() - start) * 1000.0
        for _ in range(1, args.repeats):
            outputs.append(run.scenario(prompt, plan, write=False))
        if fillers:
            failure = fillers.stop(args.timeout)
            fillers = None
            if failure:
                raise error("--load %d: %s" % (args.load, failure))
        done = {"type": "done", "steps": len(outputs[0]), "elapsed_ms": elapsed_ms}
        if args.repeats > 1:
            done["repeats"] = compare_repeats(outputs)
        line(done)
    finally:
        if fillers:
            fillers.stop(args.timeout)
        if standin:
            standin.stop()


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
