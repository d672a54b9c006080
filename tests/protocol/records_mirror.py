#!/usr/bin/python3
"""The Python adapters' record writers held to the fixture file that
samebits-engine's are held to (tests/protocol/fixtures/records/rows.json;
tests/run/step_row_fixtures_test.cc): a step record's fields and a dump's
bytes are the protocol's, and each adapter's copy must make them as the
engine does.

For each adapter:
  - its FNV-1a 64 and XXH3-64 give each byte string's digests;
  - an adapter that writes whole rows of logits (minimal-python, pytorch)
    gives each row the step fields the file names (hashes with NaNs made
    canonical, argmax, NaN and Inf counts) and dumps it as its bits,
    unchanged. openai-http hashes what a server reads back (text), not
    rows, and has no dump: its digests alone are checked.

  records_mirror.py SOURCE_DIR [ADAPTER...]   (default: every adapter)
      exit 0: all agree; 1: a disagreement (each printed); 77: an
      adapter's writer could not be imported here (skipped, said why: the
      PyTorch adapter's needs numpy, from Debian's python3-torch)

Run with Debian's python3, as the PyTorch adapter is (/usr/bin/python3).
"""
import json
import os
import struct
import sys

import mirror_common


def minimal_rows(module, xxh3):
    """(fields, dump bytes) of a row given as its bits."""
    def fields_and_dump(bits):
        data = struct.pack("<%dI" % len(bits), *bits)
        return module.step_fields(data, xxh3), data  # its dump writes the row's bytes
    return fields_and_dump


def pytorch_rows(module, xxh3):
    import numpy

    def fields_and_dump(bits):
        values = numpy.array(bits, dtype="<u4").view("<f4").astype(numpy.float32)
        fields, _ = module.row_fields(values, xxh3)
        return fields, module.dump_bytes(values)
    return fields_and_dump


ADAPTERS = {
    # name: (folder, the module of its digests, the module of its rows and
    # how to call it, or None when it writes no rows)
    "minimal-python": ("adapters/minimal-python", "minimal_engine", ("minimal_engine", minimal_rows)),
    "openai-http": ("adapters/openai-http", "openai_http_bridge", None),
    "pytorch": ("adapters/pytorch", "step_fields", ("step_fields", pytorch_rows)),
}


def load_xxh3():
    """XXH3-64 from libxxhash, for the adapters that take it as an argument."""
    import ctypes
    import ctypes.util
    lib = ctypes.CDLL(ctypes.util.find_library("xxhash"))
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lambda data: lib.XXH3_64bits(data, len(data))


def adapter_xxh3(module):
    """The adapter's own XXH3-64 when it has a loader, else libxxhash's."""
    return module.load_xxh3() if hasattr(module, "load_xxh3") else load_xxh3()


def main():
    source_dir = sys.argv[1]
    chosen = mirror_common.chosen_adapters("records_mirror.py", ADAPTERS)
    if chosen is None:
        return 2
    with open(os.path.join(source_dir, "tests/protocol/fixtures/records/rows.json"),
              encoding="utf-8") as f:
        doc = json.load(f)
    problems, skipped, checked = [], [], 0
    for adapter in chosen:
        folder, digests_name, rows = ADAPTERS[adapter]
        try:
            digests = mirror_common.import_from(source_dir, folder, digests_name)
            row_module = mirror_common.import_from(source_dir, folder, rows[0]) if rows else None
            xxh3 = adapter_xxh3(digests)
            fields_and_dump = rows[1](row_module, xxh3) if rows else None
        except ImportError as e:
            skipped.append("%s: its writer cannot be imported here (%s)" % (adapter, e))
            continue
        for entry in doc["hashes"]:
            data = bytes.fromhex(entry["hex"])
            got = {"fnv1a64": "%016x" % digests.fnv1a64(data), "xxh3_64": "%016x" % xxh3(data)}
            want = {"fnv1a64": entry["fnv1a64"], "xxh3_64": entry["xxh3_64"]}
            checked += 1
            if got != want:
                problems.append("%s, bytes %s: digests %s, samebits-engine's %s"
                                % (adapter, entry["hex"][:32] or "(none)", got, want))
        if fields_and_dump is None:
            continue
        for row in doc["rows"]:
            bits = [int(b, 16) for b in row["bits"]]
            fields, dump = fields_and_dump(bits)
            where = "%s, row %s (%s)" % (adapter, row["name"], row["why"])
            checked += 1
            if fields != row["step"]:
                problems.append("%s: step fields %s, samebits-engine writes %s"
                                % (where, json.dumps(fields), json.dumps(row["step"])))
            if dump != struct.pack("<%dI" % len(bits), *bits):
                problems.append("%s: dumps %s, samebits-engine dumps the bits unchanged (%s)"
                                % (where, dump.hex(), "".join(struct.pack("<I", b).hex() for b in bits)))
    return mirror_common.report(
        problems, skipped, "%d checks of %d rows and %d byte strings by %d adapters; %d disagree"
        % (checked, len(doc["rows"]), len(doc["hashes"]), len(chosen) - len(skipped), len(problems)))


if __name__ == "__main__":
    sys.exit(main())
