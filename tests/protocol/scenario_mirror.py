#!/usr/bin/python3
"""The Python adapters' scenario readers held to the fixture files that
samebits-engine's reader is held to (tests/protocol/fixtures/scenarios/
cases.json; tests/run/scenario_fixtures_test.cc): the format is the
engine's, and each adapter's copy must read every file as the engine does,
within what the adapter runs.

For each adapter and each case:
  - a valid case the adapter runs reads to the case's steps, id for id;
  - a valid case it does not run (a text prompt, a sampler other than
    greedy, a token source or all_positions it lacks) is `unsupported`;
  - a malformed case is never read; when it uses only what the adapter
    runs, it is an `error`, not `unsupported` (a broken scenario reported
    as unsupported would pass as a skip).

  scenario_mirror.py SOURCE_DIR [ADAPTER...]   (default: every adapter)
      exit 0: all agree; 1: a disagreement (each printed); 77: an
      adapter's reader could not be imported here (skipped, said why:
      the PyTorch adapter's needs Debian's python3-torch)

Run with Debian's python3, as the PyTorch adapter is (/usr/bin/python3).
"""
import contextlib
import io
import json
import os
import sys

import mirror_common

ADAPTERS = {
    # name: (folder, module, the token sources it expands, all_positions)
    "minimal-python": ("adapters/minimal-python", "minimal_engine", {"tokens"}, False),
    "openai-http": ("adapters/openai-http", "openai_http_bridge", {"tokens", "random"}, False),
    "pytorch": ("adapters/pytorch", "scenario", {"tokens", "random"}, True),
}


def uses(path):
    """What a case asks of a reader: the token sources, whether any step
    names all_positions, whether the sampler is other than greedy. A file
    that is no JSON object asks nothing beyond the format."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except ValueError:
        return set(), False, False
    if not isinstance(doc, dict):
        return set(), False, False
    sources = set()

    def source(s):
        if isinstance(s, dict):
            sources.update(s)

    source(doc.get("prompt"))
    every = False
    steps = doc.get("steps")
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, dict):
            every = every or "all_positions" in step
            if "extend" in step:
                source(step["extend"])
    sampled = "sampler" in doc and doc["sampler"] != {"kind": "greedy"}
    return sources, every, sampled


def prefill_then(prompt, plan):
    """The steps of a reader that returns the prompt and what follows the
    prefill as (kind, tokens or count) pairs, none of them all_positions."""
    return [["prefill", prompt, False]] + [[kind, value, False] for kind, value in plan]


def read_minimal(module, path, vocab):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            _, prompt, plan = module.read_scenario(path)
    except SystemExit:
        record = json.loads(out.getvalue().splitlines()[-1])
        return record["type"], record.get("reason", record.get("message")), None
    return "ok", "", prefill_then(prompt, plan)


def read_openai(module, path, vocab):
    try:
        _, prompt, plan = module.read_scenario(path, vocab)
    except module.Stop as stop:
        return stop.kind, str(stop), None
    return "ok", "", prefill_then(prompt, plan)


def read_pytorch(module, path, vocab):
    try:
        _, steps = module.read_scenario(path, vocab, 1 << 30)
    except module.Unsupported as e:
        return "unsupported", str(e), None
    except ValueError as e:
        return "error", str(e), None
    return "ok", "", steps


READERS = {"minimal-python": read_minimal, "openai-http": read_openai, "pytorch": read_pytorch}


def main():
    source_dir = sys.argv[1]
    chosen = mirror_common.chosen_adapters("scenario_mirror.py", ADAPTERS)
    if chosen is None:
        return 2
    fixtures = os.path.join(source_dir, "tests/protocol/fixtures/scenarios")
    with open(os.path.join(fixtures, "cases.json"), encoding="utf-8") as f:
        doc = json.load(f)
    vocab = doc["vocab_size"]
    problems, skipped, checked = [], [], 0
    for adapter in chosen:
        folder, module_name, sources, every_ok = ADAPTERS[adapter]
        try:
            module = mirror_common.import_from(source_dir, folder, module_name)
        except ImportError as e:
            skipped.append("%s: its reader cannot be imported here (%s)" % (adapter, e))
            continue
        for case in doc["cases"]:
            path = os.path.join(fixtures, case["file"])
            used_sources, every, sampled = uses(path)
            runs = used_sources <= sources and (every_ok or not every) and not sampled
            kind, message, steps = READERS[adapter](module, path, vocab)
            steps = [list(step) for step in steps] if steps is not None else None
            where = "%s, %s (%s)" % (adapter, case["file"], case["about"])
            checked += 1
            if "refused" in case:
                if kind == "ok":
                    problems.append("%s: read, but samebits-engine refuses it (%s)"
                                    % (where, case["refused"]))
                elif runs and kind != "error":
                    problems.append("%s: said %s (%s), but the file is malformed in what the "
                                    "adapter runs: an error" % (where, kind, message))
            elif case["steps"] is None or not runs:
                if kind != "unsupported":
                    problems.append("%s: said %s %s, but it does not run this valid file: "
                                    "unsupported" % (where, kind, message or steps))
            elif kind != "ok":
                problems.append("%s: said %s (%s), but it is valid and the adapter runs it"
                                % (where, kind, message))
            elif steps != case["steps"]:
                problems.append("%s: read %s, samebits-engine reads %s"
                                % (where, json.dumps(steps), json.dumps(case["steps"])))
    return mirror_common.report(problems, skipped, "%d readings of %d cases by %d adapters; %d disagree"
                                % (checked, len(doc["cases"]), len(chosen) - len(skipped), len(problems)))


if __name__ == "__main__":
    sys.exit(main())
