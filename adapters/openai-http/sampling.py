"""The openai-http bridge's sampling check (`--sampling on`, PROTOCOL.md
"Sampling"): the scenario's prompt sampled at a temperature above 0 with
several seeds, each twice. Different seeds must give different samples (a
deterministic mode must not freeze sampling) and one seed the same sample
twice (a seed makes a sample reproducible)."""
import served_api


class SamplingError(Exception):
    """A request of the check failed: the message names the seed and what
    was asked."""


def sample(server, dialect, model, prompt, options, seed):
    """One sample of `options.sampling_tokens` token ids with `seed`."""
    body = dialect.sample_request(model, prompt, options.sampling_tokens, options.temperature,
                                  seed, options.request)
    asked = "POST %s%s %s" % (server.url, dialect.path, served_api.summary(body))
    try:
        answer = server.call("POST", dialect.path, body)
        return tuple(dialect.read_tokens(answer, options.sampling_tokens))
    except served_api.ServedError as e:
        raise SamplingError("sampling with seed %d: %s" % (seed, e)) from None
    except ValueError as e:
        raise SamplingError("sampling with seed %d: the answer of %s%s: %s; asked: %s"
                            % (seed, server.url, dialect.path, e, asked)) from None


def check(server, dialect, model, prompt, options):
    """done's `sampling` object: each of `options.sampling_seeds` seeds
    (from `options.sampling_seed`) sampled twice, in the order seed 1,
    seed 1, seed 2, seed 2, ... so a server that keeps state between
    requests shows it."""
    first = []
    unstable = 0
    for number in range(1, options.sampling_seeds + 1):
        seed = options.sampling_seed + number - 1
        once = sample(server, dialect, model, prompt, options, seed)
        again = sample(server, dialect, model, prompt, options, seed)
        first.append(once)
        if once != again and unstable == 0:
            unstable = number
    return {"seeds": options.sampling_seeds, "temperature": options.temperature,
            "tokens": options.sampling_tokens, "distinct": len(set(first)),
            "unstable_seed": unstable}
