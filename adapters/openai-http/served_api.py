"""One greedy step asked of a served engine over HTTP, and its answer read back.

Two dialects, the two that take a prompt as token ids and return
log-probabilities per generated token:

  llama   llama.cpp's llama-server: POST /completion, `prompt` a list of
          ids, `n_predict` 1, `n_probs` K, `post_sampling_probs` false (the
          probabilities of the model's own softmax, before any sampler);
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

    def __init__(self, token, logprob, top):
        self.token = token
        self.logprob = logprob
        self.top = top


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


class Dialect:
    def __init__(self, name):
        if name not in ("llama", "openai"):
            raise ValueError("unknown API dialect %r" % name)
        self.name = name
        self.path = "/completion" if name == "llama" else "/v1/completions"

    def request(self, model, prompt, count, k, bias, extra):
        """The body asking for `count` greedy tokens after `prompt` with the
        top `k` log-probabilities of each; `bias` {id: value}; `extra` the
        profile's per-server fields, which win."""
        if self.name == "llama":
            body = {"prompt": prompt, "n_predict": count, "temperature": 0, "n_probs": k,
                    "post_sampling_probs": False, "return_tokens": True}
            if bias:
                body["logit_bias"] = [[t, v] for t, v in sorted(bias.items())]
        else:
            body = {"model": model, "prompt": prompt, "max_tokens": count, "temperature": 0,
                    "logprobs": k, "return_tokens_as_token_ids": True}
            if bias:
                body["logit_bias"] = {str(t): v for t, v in sorted(bias.items())}
        body.update(extra)
        return body

    def read_step(self, answer, k):
        """The first generated token's read-back; ValueError naming what is
        missing or malformed."""
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


class Server:
    """A served engine at a base URL (`http://HOST:PORT[/PREFIX]`)."""

    def __init__(self, url, timeout):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ServedError("--url %s: expected http://HOST:PORT (or https://...)" % url)
        if parts.query or parts.fragment:
            raise ServedError("--url %s: expected a base URL without a query or fragment" % url)
        self.url = url.rstrip("/")
        self.parts = parts
        self.timeout = timeout

    def _connection(self):
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
        except ConnectionRefusedError:
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
        try:
            return parse_json(text)
        except ValueError as e:
            raise ServedError("%s answered malformed JSON (%s): %r; asked: %s"
                              % (target, e, text[:200], asked)) from None
