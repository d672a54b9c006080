#!/usr/bin/env python3
"""A stand-in for an OpenAI-compatible inference server, for samebits' tests.

It serves just enough of llama-server's `/completion` and of the OpenAI
`/v1/completions` (as vLLM answers it) for the openai-http bridge to gate
it, over a deterministic toy model: the logit of token i after a context is
a fixed function of the context's ids (no randomness, no device), and the
log-probabilities are their log-softmax. Told to by `--fault`, it
misbehaves the way real servers do, so the bridge's handling of each
misbehaviour can be tested:

  none              well behaved: the same request gives the same answer
  drift-on-repeat   a prompt asked before gets a slightly different answer
                    (a prompt cache that changes the bits)
  drift-under-load  an answer computed while another request is in flight
                    differs slightly (batching that is not batch-invariant)
  sleep             answers only after --sleep-s seconds (a slow server)
  drop              closes the connection without answering
  malformed         answers 200 with a truncated JSON body
  nan               one log-probability is NaN
  ninf              one log-probability is -Infinity (a token of probability 0)
  null              one log-probability is null (what llama-server's JSON
                    library writes for -inf)
  few               fewer log-probabilities than asked
  http500           answers 500 with an error body
  missing           answers without any log-probabilities
  withhold          like llama-server for a byte token: where the chosen id
                    is even, no probabilities and U+FFFD as the content
  never-ready       GET /health answers 503 (a server that never finishes loading)
  frozen-sampling   samples greedily whatever the temperature and seed (a
                    deterministic mode that freezes sampling)
  seed-ignored      samples under the seed with the request's number folded
                    in, so that no two requests sample alike (a seed that
                    does not make a sample reproducible)
  stream-cut        a streamed answer (`stream: true`) ends before its last
                    event ([DONE], or llama-server's event with stop: true)

With `stream: true` it answers as server-sent events (text/event-stream),
one event per generated token, as llama-server and vLLM do.

At a temperature above 0 it samples from the toy model's softmax at that
temperature with Python's random.Random(seed) (the request's `seed`; fresh
randomness without one).

    standin_server.py [--fault NAME] [--vocab N] [--token-ms MS]
                      [--sleep-s S] [--model NAME] [--pid-dir DIR] [--unix PATH]

It listens on 127.0.0.1 on a free port and prints one line,
`listening http://127.0.0.1:PORT`, on stdout. It stops when its stdin
closes (so a parent that dies, however it dies, takes it down), on
SIGTERM, or on SIGINT. With --unix PATH it listens on that Unix socket
instead, as a server the bridge launches (--launch): its stdin is not
watched then, and it stops on SIGTERM or SIGINT. Standard library only.
"""
import argparse
import http.server
import json
import math
import os
import random
import signal
import socketserver
import sys
import threading
import time

FAULTS = ["none", "drift-on-repeat", "drift-under-load", "sleep", "drop", "malformed", "nan",
          "ninf", "null", "few", "http500", "missing", "withhold", "never-ready",
          "frozen-sampling", "seed-ignored", "stream-cut"]


def weight(token, position, i):
    """A fixed weight in [-3, 3] from an integer hash of (token, position, i)."""
    h = (token * 2654435761 + position * 40503 + i * 97 + 12345) & 0xFFFFFFFF
    h ^= h >> 15
    h = (h * 2246822519) & 0xFFFFFFFF
    h ^= h >> 13
    return (h % 2001 - 1000) / 1000.0 * 3.0


def log_probs(context, vocab, bias):
    """The toy model: log-softmax over `vocab` logits, each a sum over the
    context, plus the request's logit bias {id: value}."""
    logits = []
    for i in range(vocab):
        acc = 0.0
        for position, token in enumerate(context):
            acc += weight(token, position, i)
        logits.append(acc + bias.get(i, 0.0))
    top = max(logits)
    total = math.log(sum(math.exp(x - top) for x in logits)) + top
    return [x - total for x in logits]


def draw(row, temperature, sampler):
    """A token drawn from softmax(log-probabilities / temperature)."""
    scaled = [x / temperature for x in row]
    top = max(scaled)
    weights = [math.exp(x - top) for x in scaled]
    return sampler.choices(range(len(row)), weights=weights)[0]


def stream_events(api, answer):
    """A whole answer as the data of its server-sent events, one per
    generated token: llama-server's end with an event whose stop is true,
    the OpenAI API's with [DONE]."""
    events = []
    if api == "llama":
        probabilities = answer.get("completion_probabilities")
        withheld = probabilities is None and answer["content"] == "\ufffd"
        # llama-server streams nothing of a withheld token, not even its id.
        for i, token in enumerate([] if withheld else answer["tokens"]):
            event = {"content": "<%d>" % token, "tokens": [token], "stop": False}
            if probabilities is not None:
                event["completion_probabilities"] = [probabilities[i]]
            events.append(json.dumps(event))
        events.append(json.dumps({"content": "", "tokens": [], "stop": True,
                                  "model": answer["model"], "stop_type": "limit"}))
        return events
    choice = answer["choices"][0]
    logprobs = choice.get("logprobs")
    for i, token in enumerate(logprobs["tokens"] if logprobs else []):
        part = {"index": 0, "text": "<%s>" % token[9:], "finish_reason": None}
        part["logprobs"] = {key: [logprobs[key][i]]
                            for key in ("tokens", "token_logprobs", "top_logprobs")}
        events.append(json.dumps({"id": answer["id"], "object": "text_completion",
                                  "model": answer["model"],
                                  "system_fingerprint": answer["system_fingerprint"],
                                  "choices": [part]}))
    events.append(json.dumps({"id": answer["id"], "object": "text_completion",
                              "model": answer["model"], "choices": [
                                  {"index": 0, "text": "", "finish_reason": "length"}]}))
    events.append("[DONE]")
    return events


class State:
    """What the fault modes need to remember across requests."""

    def __init__(self):
        self.lock = threading.Lock()
        self.active = 0
        self.seen = {}
        self.sampled = 0  # sampling requests so far (seed-ignored)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a connection dropped on purpose (--fault drop) is not news


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass

    def get_request(self):
        # http.server's handler reads client_address[0]; a Unix socket's
        # peer has no address.
        request, _ = super().get_request()
        return request, ("unix", 0)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "samebits-standin/1"

    def log_message(self, fmt, *args):
        pass  # stdout carries the one `listening` line; stderr stays quiet

    def send_json(self, status, body_text):
        data = body_text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def send_error_json(self, status, message):
        self.send_json(status, json.dumps({"error": {"code": status, "message": message}}))

    def do_GET(self):
        options = self.server.options
        if self.path == "/v1/models":
            self.send_json(200, json.dumps({"object": "list", "data": [
                {"id": options.model, "object": "model", "owned_by": "samebits-standin",
                 "meta": {"n_vocab": options.vocab}}]}))
        elif self.path == "/props":
            self.send_json(200, json.dumps({"build_info": "b1-standin",
                                            "model_path": options.model,
                                            "default_generation_settings": {"n_ctx": 256},
                                            "total_slots": 1}))
        elif self.path == "/health" and options.fault == "never-ready":
            self.send_error_json(503, "Loading model")
        elif self.path == "/health":
            self.send_json(200, json.dumps({"status": "ok"}))
        else:
            self.send_error_json(404, "no such endpoint: GET " + self.path)

    def do_POST(self):
        # A request counts as in flight while its answer is computed, not
        # while it is sent: a client that has read one answer and sent the
        # next request must not find the first still counted.
        state = self.server.state
        with state.lock:
            state.active += 1
        try:
            reply = self.answer()
        finally:
            with state.lock:
                state.active -= 1
        reply()

    def read_body(self):
        length = int(self.headers.get("Content-Length", "0"))
        return json.loads(self.rfile.read(length).decode("utf-8"))

    def answer(self):
        options = self.server.options
        try:
            body = self.read_body()
        except ValueError as e:
            message = "request body is not JSON: %s" % e
            return lambda: self.send_error_json(400, message)
        if self.path == "/completion":
            api = "llama"
            count = body.get("n_predict", 16)
            k = body.get("n_probs", 0)
            bias = {int(t): float(v) for t, v in body.get("logit_bias", [])}
        elif self.path == "/v1/completions":
            api = "openai"
            if body.get("model") != options.model:
                message = "the model '%s' does not exist" % body.get("model")
                return lambda: self.send_error_json(404, message)
            count = body.get("max_tokens", 16)
            k = body.get("logprobs") or 0
            bias = {int(t): float(v) for t, v in body.get("logit_bias", {}).items()}
        else:
            return lambda: self.send_error_json(404, "no such endpoint: POST " + self.path)
        prompt = body.get("prompt")
        if (not isinstance(prompt, list) or not prompt or
                not all(isinstance(t, int) and 0 <= t < options.vocab for t in prompt)):
            message = "prompt: expected a non-empty list of ids below %d" % options.vocab
            return lambda: self.send_error_json(400, message)
        temperature = body.get("temperature", 1.0)
        seed = body.get("seed")
        if (not isinstance(temperature, (int, float)) or temperature < 0 or
                (seed is not None and not isinstance(seed, int))):
            return lambda: self.send_error_json(
                400, "temperature must be a number >= 0 and seed an integer")
        sampler = None
        if temperature > 0 and options.fault != "frozen-sampling":
            if options.fault == "seed-ignored":
                # Each request samples under a seed of its own (its number
                # folded in), not fresh randomness: fresh draws made the
                # fault's outcome random (two draws of one seed could agree
                # by chance, so which seed the gate found varied), where
                # this one is the same in every run.
                with self.server.state.lock:
                    self.server.state.sampled += 1
                    sampler = random.Random((seed or 0) * 1000003 + self.server.state.sampled)
            else:
                sampler = random.Random() if seed is None else random.Random(seed)
        if not isinstance(count, int) or count < 1 or not isinstance(k, int) or k < 0:
            return lambda: self.send_error_json(
                400, "n_predict/max_tokens must be >= 1 and n_probs/logprobs >= 0")

        fault = options.fault
        if fault == "sleep":
            time.sleep(options.sleep_s)
        if fault == "http500":
            return lambda: self.send_error_json(
                500, "the stand-in was told to fail (--fault http500)")
        if fault == "drop":
            return self.drop
        if fault == "malformed":
            return self.send_malformed

        drift = 0.0
        with self.server.state.lock:
            key = tuple(prompt)
            seen = self.server.state.seen.get(key, 0)
            self.server.state.seen[key] = seen + 1
            busy = self.server.state.active > 1
        if fault == "drift-on-repeat" and seen > 0:
            drift = 1e-9
        if fault == "drift-under-load" and busy:
            drift = 1e-9

        context = list(prompt)
        generated = []
        for _ in range(count):
            row = log_probs(context, options.vocab, bias)
            ranked = sorted(range(options.vocab), key=lambda i: (-row[i], i))
            chosen = ranked[0] if sampler is None else draw(row, temperature, sampler)
            values = {i: row[i] for i in ranked[:k]}
            if values:
                values[ranked[0]] += drift
            if fault == "nan" and values:
                values[ranked[k - 1]] = float("nan")
            if fault == "ninf" and values:
                values[ranked[k - 1]] = float("-inf")
            if fault == "null" and values:
                values[ranked[k - 1]] = None
            top = ranked[:k // 2] if fault == "few" else ranked[:k]
            generated.append((chosen, row[chosen] + drift, [(i, values[i]) for i in top]))
            context.append(chosen)
            if options.token_ms:
                time.sleep(options.token_ms / 1000.0)

        if api == "llama":
            answer = {"content": "".join("<%d>" % c for c, _, _ in generated),
                      "tokens": [c for c, _, _ in generated], "model": options.model,
                      "stop": True, "stop_type": "limit"}
            if fault == "withhold" and generated[0][0] % 2 == 0:
                answer["content"] = "\ufffd"
            elif k > 0 and fault != "missing":
                answer["completion_probabilities"] = [
                    {"id": c, "token": "<%d>" % c, "bytes": [], "logprob": lp,
                     "top_logprobs": [{"id": i, "token": "<%d>" % i, "bytes": [], "logprob": v}
                                      for i, v in top]}
                    for c, lp, top in generated]
        else:
            # vLLM names tokens "token_id:N" when asked return_tokens_as_token_ids.
            logprobs = {"tokens": ["token_id:%d" % c for c, _, _ in generated],
                        "token_logprobs": [lp for _, lp, _ in generated],
                        "top_logprobs": [{"token_id:%d" % i: v for i, v in top}
                                         for _, _, top in generated],
                        "text_offset": list(range(len(generated)))}
            choice = {"index": 0, "text": "".join("<%d>" % c for c, _, _ in generated),
                      "finish_reason": "length"}
            if fault != "missing":
                choice["logprobs"] = logprobs
            answer = {"id": "cmpl-standin", "object": "text_completion", "model": options.model,
                      "system_fingerprint": "samebits-standin-1", "choices": [choice]}
        # Python's json writes NaN and -Infinity as those bare words, which
        # is what a server that does not check its floats sends.
        if body.get("stream") is True:
            events = stream_events(api, answer)
            if fault == "stream-cut":
                events = events[:-1]
            return lambda: self.send_events(events)
        return lambda: self.send_json(200, json.dumps(answer))

    def send_events(self, events):
        data = "".join("data: %s\n\n" % e for e in events).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def drop(self):
        self.close_connection = True
        self.connection.shutdown(2)

    def send_malformed(self):
        data = b'{"completion_probabilities": [{"id": 3, "logprob": -0.'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fault", choices=FAULTS, default="none")
    parser.add_argument("--vocab", type=int, default=64)
    parser.add_argument("--model", default="toy")
    parser.add_argument("--token-ms", type=float, default=0.0,
                        help="sleep per generated token (keeps requests in flight)")
    parser.add_argument("--sleep-s", type=float, default=30.0, help="--fault sleep's delay")
    parser.add_argument("--pid-dir", help="writes standin-PID.pid there (tests check it is gone)")
    parser.add_argument("--unix", metavar="PATH", help="listen on this Unix socket")
    options = parser.parse_args()
    if not 2 <= options.vocab <= 4096:
        parser.error("--vocab must be in [2, 4096]")

    server = UnixServer(options.unix, Handler) if options.unix else Server(("127.0.0.1", 0), Handler)
    server.options = options
    server.state = State()
    if options.pid_dir:
        with open(os.path.join(options.pid_dir, "standin-%d.pid" % os.getpid()), "w") as f:
            f.write("%d\n" % os.getpid())

    def stop(*_):
        # shutdown() waits for serve_forever, so it runs on its own thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except OSError:
            pass
        stop()

    if options.unix:
        print("listening unix:%s" % options.unix, flush=True)
    else:
        threading.Thread(target=watch_stdin, daemon=True).start()
        print("listening http://127.0.0.1:%d" % server.server_address[1], flush=True)
    server.serve_forever(poll_interval=0.1)
    server.server_close()


if __name__ == "__main__":
    main()
