"""What the protocol's mirror tests share (scenario_mirror.py,
records_mirror.py): which adapters the command line names, importing an
adapter's module from its folder, and the report with its exit code
(0: all agree; 1: a disagreement; 77: an adapter skipped, for ctest's
SKIP_RETURN_CODE)."""
import importlib
import os
import sys


def chosen_adapters(script, known):
    """The adapters after SOURCE_DIR on the command line (default: every
    one), or None after saying which name is unknown."""
    chosen = sys.argv[2:] or list(known)
    unknown = [a for a in chosen if a not in known]
    if unknown:
        print("%s: unknown adapter %s (known: %s)" % (script, unknown[0], ", ".join(known)))
        return None
    return chosen


def import_from(source_dir, folder, name):
    """Imports module `name` from the adapter folder `folder` (relative to
    `source_dir`); raises ImportError as importlib does."""
    sys.path.insert(0, os.path.join(source_dir, folder))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def report(problems, skipped, summary):
    """Prints each disagreement and skip, then `summary`; returns the exit code."""
    for line in problems:
        print("DISAGREES: " + line)
    for line in skipped:
        print("SKIPPED: " + line)
    print(summary)
    if problems:
        return 1
    return 77 if skipped else 0
