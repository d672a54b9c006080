#!/usr/bin/env python3
"""The same weights through two front doors: a served engine's read-back
(the bridge's --dump-topk) held against engines that dumped whole logit
rows for the same scenario (samebits-engine's reference pass, the llama.cpp
adapter: their records on stdout and their --dump-logits file).

    front_doors.py --served NAME=TOPK.jsonl
                   --engine NAME=RECORDS.jsonl,DUMP.f32 [--engine ...]
                   [--title TEXT] [--markdown FILE]

Per engine and step, while both fed the same context (each feeds back its
own chosen token, so the two stop being comparable after the first step
whose chosen tokens differ): whether the chosen token is the same, whether
the served top K are the engine's top K (as a set, and in the same order),
and how far each served log-probability is from the engine's, the log of
the softmax of its float32 row computed in float64. A step whose
probabilities the server withheld compares the chosen token alone.

Prints a Markdown table (and writes it to --markdown). Exit 0 when every
comparison was made, 2 on unreadable or inconsistent input; the figures
are a measurement, not a verdict (no tolerance is implied).
"""
import argparse
import array
import json
import math
import os
import statistics
import sys


class InputError(Exception):
    pass


def read_json_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(text) for text in f if text.strip()]
    except (OSError, ValueError) as e:
        raise InputError("%s: %s" % (path, e)) from None


def read_engine(spec):
    """NAME=RECORDS,DUMP -> (name, [chosen tokens], [rows])."""
    name, equals, files = spec.partition("=")
    records_path, comma, dump_path = files.partition(",")
    if not name or not equals or not comma:
        raise InputError("--engine %s: expected NAME=RECORDS.jsonl,DUMP.f32" % spec)
    records = read_json_lines(records_path)
    hello = next((r for r in records if r.get("type") == "hello"), None)
    if hello is None:
        raise InputError("%s: no hello record" % records_path)
    vocab = hello.get("checkpoint", {}).get("vocab_size")
    steps = [r for r in records if r.get("type") == "step"]
    if not isinstance(vocab, int) or vocab < 1 or not steps:
        raise InputError("%s: no vocabulary size or no step" % records_path)
    try:
        size = os.path.getsize(dump_path)
        if size != len(steps) * vocab * 4:
            raise InputError("%s: %d bytes, expected %d rows of %d float32"
                             % (dump_path, size, len(steps), vocab))
        values = array.array("f")
        with open(dump_path, "rb") as f:
            values.fromfile(f, len(steps) * vocab)
    except OSError as e:
        raise InputError("%s: %s" % (dump_path, e)) from None
    if sys.byteorder != "little":
        values.byteswap()
    rows = [values[i * vocab:(i + 1) * vocab] for i in range(len(steps))]
    return name, [s["token"] for s in steps], rows


def log_softmax(row):
    top = max(row)
    total = math.log(math.fsum(math.exp(x - top) for x in row)) + top
    return [x - total for x in row]


def ranked(pairs):
    """Ids by descending log-probability, ties by id."""
    return [t for t, _ in sorted(pairs, key=lambda p: (-p[1], p[0]))]


def compare(served, tokens, rows):
    """One engine against the served read-back: a dict of figures."""
    steps = 0
    same_token = 0
    topk_steps = 0
    same_set = 0
    same_order = 0
    deltas = []
    parted = None
    for index, step in enumerate(served):
        if index >= len(rows):
            break
        steps += 1
        row = rows[index]
        if step["token"] == tokens[index]:
            same_token += 1
        top = [(t, float(v)) for t, v in step["top"] if v not in (None, "null", "nan")]
        if not step["withheld"] and top:
            topk_steps += 1
            lsm = log_softmax(row)
            k = len(top)
            theirs = [(i, lsm[i]) for i in range(len(lsm))]
            engine_top = ranked(theirs)[:k]
            if set(engine_top) == {t for t, _ in top}:
                same_set += 1
            if engine_top == ranked(top):
                same_order += 1
            deltas.extend(abs(v - lsm[t]) for t, v in top if math.isfinite(v))
        if step["token"] != tokens[index]:
            parted = index
            break
    return {"steps": steps, "same_token": same_token, "topk_steps": topk_steps,
            "same_set": same_set, "same_order": same_order,
            "max": max(deltas) if deltas else None,
            "median": statistics.median(deltas) if deltas else None, "parted": parted,
            "total": len(served)}


def number(x):
    return "-" if x is None else "%.3g" % x


def table(title, served_name, results):
    lines = ["| %s vs | steps compared | same chosen token | same top K (set) | same top K "
             "(order) | max abs. log-prob difference | median | contexts part at |"
             % served_name, "|---|---|---|---|---|---|---|---|"]
    for name, r in results:
        lines.append("| %s | %d of %d | %d | %d of %d | %d of %d | %s | %s | %s |"
                     % (name, r["steps"], r["total"], r["same_token"], r["same_set"],
                        r["topk_steps"], r["same_order"], r["topk_steps"], number(r["max"]),
                        number(r["median"]),
                        "-" if r["parted"] is None else "step %d" % r["parted"]))
    return ("#### %s\n\n" % title if title else "") + "\n".join(lines) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--served", required=True, metavar="NAME=TOPK.jsonl")
    parser.add_argument("--engine", action="append", required=True,
                        metavar="NAME=RECORDS.jsonl,DUMP.f32")
    parser.add_argument("--title", default="")
    parser.add_argument("--markdown", metavar="FILE")
    args = parser.parse_args(argv)
    try:
        served_name, equals, served_path = args.served.partition("=")
        if not served_name or not equals:
            raise InputError("--served %s: expected NAME=TOPK.jsonl" % args.served)
        served = read_json_lines(served_path)
        if not served or any(not isinstance(s.get("top"), list) for s in served):
            raise InputError("%s: expected the bridge's --dump-topk lines" % served_path)
        results = []
        for spec in args.engine:
            name, tokens, rows = read_engine(spec)
            results.append((name, compare(served, tokens, rows)))
    except InputError as e:
        print("front_doors.py: %s" % e, file=sys.stderr)
        return 2
    text = table(args.title, served_name, results)
    sys.stdout.write(text)
    if args.markdown:
        with open(args.markdown, "a", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
