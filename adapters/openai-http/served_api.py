"""One greedy step asked of a served engine over HTTP, and its answer read back.

Two dialects, the two that take a prompt as token ids and return
log-probabilities per generated token:

  llama   llama.cpp's llama-server: POST /completion, `prompt` a list of
          ids, `n_predict` 1, `n_probs` K, `post_sampling_probs` false (the
          probabilities of the model's own softmax, before any sampler),
          `ignore_eos` (an end-of-text token is returned like any other);
          the answer's `completion_probabilities[0]` holds the chosen `id`
          and `top_logprobs` [{id, logprob}...].
  openai  the OpenAI completions API as vLLM serves it: POST
          /v1/completions, `prompt` a list of ids, `max_tokens` 1,
          `logprobs` K and vLLM's `return_tokens_as_token_ids`, so that
          tokens come back as "token_id:N"; the answer's
          `choices[0].logprobs` holds `tokens`, `token_logprobs` and
          `top_logprobs` [{"token_id:N": logprob}...].

HTTP is http.client's, JSON is json's: nothing here parses HTTP. Numbers
are kept as the text the server sent, so that a hash of them is a hash of
what was returned, at the precision returned. Every failure (no server, a
timeout, a dropped connection, an HTTP error, malformed JSON, an answer
without what was asked) raises ServedError with the URL and what was asked.
"""
import http.client
import json
import math
import socket
import urllib.parse


class ServedError(Exception):
    """A request that did not give a usable answer; the message says which
    URL, what was asked and what came back, for a person."""


class Number:
    """A JSON number (or NaN / Infinity / null) as the server wrote it."""

    def __init__(self, text, value):
        self.text = text
        self.value = value

    def canonical(self):
        """The text hashed: the server's own digits; non-finite values and
        null in one spelling each, whatever the server's JSON called them."""
        if self.value is None:
            return "null"
        if math.isnan(self.value):
            return "nan"
        if math.isinf(self.value):
            return "inf" if self.value > 0 else "-inf"
        return self.text


def _constant(text):
    return Number(text, float({"-Infinity": "-inf", "Infinity": "inf", "NaN": "nan"}[text]))


def parse_json(text):
    """Parses a JSON answer, keeping every non-integer number's text."""
    return json.loads(text, parse_float=lambda t: Number(t, float(t)), parse_constant=_constant)


def as_number(value, where):
    """A log-probability: a float kept as text, an integer, or null."""
    if isinstance(value, Number):
        return value
    if value is None:
        return Number("null", None)
    if isinstance(value, int) and not isinstance(value, bool):
        return Number(str(value), float(value))
    raise ValueError("%s: expected a number, not %s" % (where, json.dumps(plain(value))))


def plain(value):
    """A parsed answer with its Numbers turned back into floats (for messages)."""
    if isinstance(value, Number):
        return value.value if value.value is not None and math.isfinite(value.value) else value.text
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


class Step:
    """A step's read-back: the chosen token, its log-probability (or None)
    and the (id, Number) pairs the server returned, in its order."""

    def __init__(self, token, logprob, top, withheld=False):
        self.token = token
        self.logprob = logprob
        self.top = top
        self.withheld = withheld  # the server chose `token` but sent no probabilities


def _id(value, where):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError("%s: expected a token id (an integer >= 0), not %s"
                         % (where, json.dumps(plain(value))))
    return value


def _token_id_string(text, where):
    """vLLM's "token_id:N" (return_tokens_as_token_ids) to N."""
    if not isinstance(text, str) or not text.startswith("token_id:") or not text[9:].isdigit():
        raise ValueError("%s: expected \"token_id:N\" (vLLM's return_tokens_as_token_ids), not %s;"
                         " this server returns token strings, which the bridge cannot feed back"
                         " as ids" % (where, json.dumps(plain(text))))
    return int(text[9:])


class Stream:
    """A server-sent-events answer (a request with `stream: true`): its data
    events, each a parsed JSON object, and whether it ended with `data:
    [DONE]`."""

    def __init__(self, events, finished):
        self.events = events
        self.finished = finished


def parse_event_stream(text):
    """A text/event-stream body to a Stream; ValueError for a data event
    that is not a JSON object. Comments, `event:` and `id:` lines and blank
    separators carry nothing the bridge reads."""
    events = []
    finished = False
    for number, text_line in enumerate(text.splitlines(), start=1):
        if not text_line.startswith("data:"):
            continue
        data = text_line[5:].strip()
        if data == "[DONE]":
            finished = True
            continue
        if finished:
            raise ValueError("line %d: data after data: [DONE]" % number)
        try:
            event = parse_json(data)
        except ValueError as e:
            raise ValueError("line %d: %s" % (number, e)) from None
        if not isinstance(event, dict):
            raise ValueError("line %d: a data event that is not a JSON object" % number)
        events.append(event)
    return Stream(events, finished)


def _joined_lists(events, read, where):
    """The lists `read(event)` gives for each event, one after another
    (None for an event without one); ValueError where one is not a list."""
    joined = []
    for i, event in enumerate(events):
        value = read(event)
        if value is None:
            continue
        if not isinstance(value, list):
            raise ValueError("event %d: %s is not a list" % (i, where))
        joined.extend(value)
    return joined


class Dialect:
    def __init__(self, name, stream=False):
        if name not in ("llama", "openai"):
            raise ValueError("unknown API dialect %r" % name)
        self.name = name
        self.stream = stream  # ask for server-sent events (`stream: true`)
        self.path = "/completion" if name == "llama" else "/v1/completions"

    def request(self, model, prompt, count, k, bias, extra):
        """The body asking for `count` greedy tokens after `prompt` with the
        top `k` log-probabilities of each; `bias` {id: value}; `extra` the
        profile's per-server fields, which win."""
        if self.name == "llama":
            # ignore_eos: an end-of-text token is a token like any other
            # here (without it llama-server returns no probabilities for it).
            body = {"prompt": prompt, "n_predict": count, "temperature": 0, "n_probs": k,
                    "post_sampling_probs": False, "return_tokens": True, "ignore_eos": True}
            if bias:
                body["logit_bias"] = [[t, v] for t, v in sorted(bias.items())]
        else:
            body = {"model": model, "prompt": prompt, "max_tokens": count, "temperature": 0,
                    "logprobs": k, "return_tokens_as_token_ids": True}
            if bias:
                body["logit_bias"] = {str(t): v for t, v in sorted(bias.items())}
        if self.stream:
            body["stream"] = True
        body.update(extra)
        return body

    def unstream(self, answer):
        """A streamed answer (Stream) as the one JSON answer the server
        would have sent without streaming: its events' tokens, texts and
        log-probabilities joined in order, the rest from its last event.
        Any other answer is returned as it is. ValueError for a stream that
        ended early or is empty."""
        if not isinstance(answer, Stream):
            return answer
        events = answer.events
        if not events:
            raise ValueError("the event stream carried no data event")
        merged = dict(events[-1])
        if self.name == "llama":
            # llama-server ends a completion with an event whose stop is true
            # and sends no [DONE].
            if not any(e.get("stop") is True for e in events):
                raise ValueError("the event stream ended before an event with stop: true")
            merged["content"] = "".join(e.get("content") or "" for e in events
                                        if isinstance(e.get("content"), str))
            merged["tokens"] = _joined_lists(events, lambda e: e.get("tokens"), "tokens")
            merged["completion_probabilities"] = _joined_lists(
                events, lambda e: e.get("completion_probabilities"), "completion_probabilities")
            if not merged["tokens"] and not merged["completion_probabilities"]:
                # Seen with llama-server: a chosen token whose text ends
                # inside a UTF-8 character is held back, and when streaming
                # only the final event comes, without it.
                raise ValueError("the event stream carried no token (llama-server streams no"
                                 " token whose text ends inside a UTF-8 character); read this"
                                 " server with --stream off")
            return merged
        if not answer.finished:
            raise ValueError("the event stream ended without data: [DONE]")
        fingerprints = [e.get("system_fingerprint") for e in events if e.get("system_fingerprint")]
        if fingerprints:
            merged["system_fingerprint"] = fingerprints[0]

        def choice(e):
            choices = e.get("choices")
            return choices[0] if isinstance(choices, list) and choices and \
                isinstance(choices[0], dict) else {}

        def logprobs(e, key):
            value = choice(e).get("logprobs")
            return value.get(key) if isinstance(value, dict) else None

        joined = {"text": "".join(choice(e).get("text") or "" for e in events
                                  if isinstance(choice(e).get("text"), str)),
                  "index": 0, "finish_reason": choice(events[-1]).get("finish_reason")}
        if any(isinstance(choice(e).get("logprobs"), dict) for e in events):
            joined["logprobs"] = {key: _joined_lists(events, lambda e, k=key: logprobs(e, k),
                                                     "choices[0].logprobs." + key)
                                  for key in ("tokens", "token_logprobs", "top_logprobs")}
        merged["choices"] = [joined]
        return merged

    def sample_request(self, model, prompt, count, temperature, seed, extra):
        """The body asking for `count` tokens after `prompt` sampled at
        `temperature` with `seed`, as token ids; the profile's per-server
        fields are added, but the temperature and seed stay these."""
        if self.name == "llama":
            body = {"prompt": prompt, "n_predict": count, "n_probs": 0, "return_tokens": True,
                    "ignore_eos": True}
        else:
            body = {"model": model, "prompt": prompt, "max_tokens": count, "logprobs": 0,
                    "return_tokens_as_token_ids": True}
        if self.stream:
            body["stream"] = True
        body.update(extra)
        body.update({"temperature": temperature, "seed": seed})
        return body

    def read_tokens(self, answer, count):
        """The `count` token ids a sampling request generated; ValueError
        naming what is missing or malformed."""
        answer = self.unstream(answer)
        if not isinstance(answer, dict):
            raise ValueError("the answer is not a JSON object")
        if self.name == "llama":
            tokens = answer.get("tokens")
            where = "tokens"
            if not isinstance(tokens, list):
                raise ValueError("'tokens' is missing (llama-server returns it with"
                                 " return_tokens: true)")
            ids = [_id(t, "tokens[%d]" % i) for i, t in enumerate(tokens)]
        else:
            choices = answer.get("choices")
            if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
                raise ValueError("'choices' is missing or empty")
            logprobs = choices[0].get("logprobs")
            tokens = logprobs.get("tokens") if isinstance(logprobs, dict) else None
            where = "choices[0].logprobs.tokens"
            if not isinstance(tokens, list):
                raise ValueError("choices[0].logprobs.tokens is missing (asked logprobs 0)")
            ids = [_token_id_string(t, "%s[%d]" % (where, i)) for i, t in enumerate(tokens)]
        if len(ids) != count:
            raise ValueError("%s has %d tokens, asked for %d" % (where, len(ids), count))
        return ids

    def read_step(self, answer, k):
        """The first generated token's read-back; ValueError naming what is
        missing or malformed."""
        answer = self.unstream(answer)
        if not isinstance(answer, dict):
            raise ValueError("the answer is not a JSON object")
        if self.name == "llama":
            return self._read_llama(answer, k)
        return self._read_openai(answer, k)

    def _read_llama(self, answer, k):
        if k == 0:
            tokens = answer.get("tokens")
            if not isinstance(tokens, list) or not tokens:
                raise ValueError("'tokens' is missing or empty (llama-server returns it with"
                                 " return_tokens: true)")
            return Step(_id(tokens[0], "tokens[0]"), None, [])
        probabilities = answer.get("completion_probabilities")
        tokens = answer.get("tokens")
        content = answer.get("content")
        if (probabilities in (None, []) and isinstance(tokens, list) and len(tokens) == 1 and
                isinstance(content, str) and (content == "" or content.endswith("\ufffd"))):
            # llama-server holds back the probabilities of a token whose text
            # ends inside a UTF-8 character (a byte token; its content is
            # then U+FFFD), and with one token to predict it never sends
            # them: the choice alone is known.
            return Step(_id(tokens[0], "tokens[0]"), None, [], withheld=True)
        if not isinstance(probabilities, list) or not probabilities:
            raise ValueError("'completion_probabilities' is missing or empty (asked n_probs %d)"
                             % k)
        first = probabilities[0]
        if not isinstance(first, dict):
            raise ValueError("completion_probabilities[0] is not an object")
        token = _id(first.get("id"), "completion_probabilities[0].id")
        logprob = as_number(first.get("logprob"), "completion_probabilities[0].logprob")
        top = first.get("top_logprobs")
        if not isinstance(top, list):
            raise ValueError("completion_probabilities[0].top_logprobs is missing or not a list"
                             " (an older llama-server that returns 'probs'?)")
        pairs = []
        for i, entry in enumerate(top):
            where = "completion_probabilities[0].top_logprobs[%d]" % i
            if not isinstance(entry, dict):
                raise ValueError(where + " is not an object")
            pairs.append((_id(entry.get("id"), where + ".id"),
                          as_number(entry.get("logprob"), where + ".logprob")))
        return Step(token, logprob, pairs)

    def _read_openai(self, answer, k):
        choices = answer.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ValueError("'choices' is missing or empty")
        logprobs = choices[0].get("logprobs")
        if not isinstance(logprobs, dict):
            raise ValueError("choices[0].logprobs is missing (asked logprobs %d)" % k)
        tokens = logprobs.get("tokens")
        if not isinstance(tokens, list) or not tokens:
            raise ValueError("choices[0].logprobs.tokens is missing or empty")
        token = _token_id_string(tokens[0], "choices[0].logprobs.tokens[0]")
        values = logprobs.get("token_logprobs")
        if not isinstance(values, list) or not values:
            raise ValueError("choices[0].logprobs.token_logprobs is missing or empty")
        logprob = as_number(values[0], "choices[0].logprobs.token_logprobs[0]")
        pairs = []
        if k > 0:
            top = logprobs.get("top_logprobs")
            if not isinstance(top, list) or not top or not isinstance(top[0], dict):
                raise ValueError("choices[0].logprobs.top_logprobs[0] is missing or not an object")
            for name, value in top[0].items():
                where = "choices[0].logprobs.top_logprobs[0][%s]" % json.dumps(name)
                pairs.append((_token_id_string(name, where), as_number(value, where)))
        return Step(token, logprob, pairs)


def summary(body):
    """What was asked, for a message: the body with a long prompt shortened."""
    shown = dict(body)
    prompt = shown.get("prompt")
    if isinstance(prompt, list) and len(prompt) > 8:
        shown["prompt"] = "[%d ids: %s ...]" % (len(prompt), ", ".join(map(str, prompt[:6])))
    return json.dumps(shown, sort_keys=True)


class _UnixConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket: http.client's own request and response
    handling, only the socket is another kind."""

    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)


class Server:
    """A served engine at a base URL (`http://HOST:PORT[/PREFIX]`), or
    `unix:PATH` for one listening on a Unix socket."""

    def __init__(self, url, timeout):
        self.timeout = timeout
        if url.startswith("unix:"):
            self.socket_path = url[len("unix:"):]
            if not self.socket_path.startswith("/"):
                raise ServedError("%s: expected unix:/ABSOLUTE/PATH" % url)
            self.url = url
            self.parts = urllib.parse.urlsplit("http://localhost")
            return
        self.socket_path = None
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ServedError("--url %s: expected http://HOST:PORT (or https://...)" % url)
        if parts.query or parts.fragment:
            raise ServedError("--url %s: expected a base URL without a query or fragment" % url)
        self.url = url.rstrip("/")
        self.parts = parts

    def _connection(self):
        if self.socket_path:
            return _UnixConnection(self.socket_path, self.timeout)
        https = self.parts.scheme == "https"
        kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
        return kind(self.parts.hostname, self.parts.port, timeout=self.timeout)

    def call(self, method, path, body=None, sent=None):
        """Sends one request; returns the parsed JSON answer, or raises
        ServedError naming the URL, what was asked and what went wrong.
        `sent`, when given, is called once the request has been written."""
        target = self.url + path
        asked = "%s %s" % (method, target) + (" " + summary(body) if body is not None else "")
        data = json.dumps(body).encode("utf-8") if body is not None else None
        connection = self._connection()
        try:
            headers = {"Content-Type": "application/json"} if data is not None else {}
            connection.request(method, self.parts.path.rstrip("/") + path, body=data,
                               headers=headers)
            if sent:
                sent()
            response = connection.getresponse()
            raw = response.read()
            status = response.status
            content_type = response.getheader("Content-Type", "") or ""
        except (ConnectionRefusedError, FileNotFoundError):
            raise ServedError("cannot connect to %s (connection refused: is the server up?);"
                              " asked: %s" % (self.url, asked)) from None
        except (socket.timeout, TimeoutError):
            raise ServedError("no answer from %s within the request timeout of %g s; asked: %s"
                              % (target, self.timeout, asked)) from None
        except (http.client.RemoteDisconnected, http.client.IncompleteRead, ConnectionResetError,
                BrokenPipeError) as e:
            raise ServedError("%s closed the connection without a complete answer (%s); asked: %s"
                              % (target, type(e).__name__, asked)) from None
        except (OSError, http.client.HTTPException) as e:
            raise ServedError("request to %s failed: %s; asked: %s" % (target, e, asked)) from None
        finally:
            connection.close()
        text = raw.decode("utf-8", errors="replace")
        if status != 200:
            raise ServedError("%s answered HTTP %d: %s; asked: %s"
                              % (target, status, text[:300].strip(), asked))
        if content_type.startswith("text/event-stream"):
            try:
                return parse_event_stream(text)
            except ValueError as e:
                raise ServedError("%s answered a malformed event stream (%s); asked: %s"
                                  % (target, e, asked)) from None
        try:
            return parse_json(text)
        except ValueError as e:
            raise ServedError("%s answered malformed JSON (%s): %r; asked: %s"
                              % (target, e, text[:200], asked)) from None
