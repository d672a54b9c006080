"""One output row of logits as the protocol writes it (PROTOCOL.md: `step`,
Raw logit dumps; the numeric contract's clause C9): its hashes, argmax and
NaN/Inf counts, and its dump bytes. Needs numpy only, so that
tests/protocol/records_mirror.py can hold it to the fixture file
samebits-engine is held to (tests/protocol/fixtures/records/rows.json)."""
import numpy


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def row_fields(values, xxh3):
    """The step fields of `values` (float32): fnv1a64 and xxh3_64 over the
    bits little-endian with every NaN as the quiet NaN 0x7fc00000 (NaN signs
    and payloads are not portable), the argmax (ties to the lower id, NaNs
    never chosen; id 0 when every value is NaN) and the counts. Returns the
    fields and the XXH3-64 as an integer."""
    nan = numpy.isnan(values)
    argmax = 0 if nan.all() else int(numpy.argmax(numpy.where(nan, -numpy.inf, values)))
    bits = values.astype("<f4").view("<u4").copy()
    bits[nan] = 0x7FC00000
    data = bits.tobytes()
    digest = xxh3(data)
    return ({"fnv1a64": "%016x" % fnv1a64(data), "xxh3_64": "%016x" % digest, "argmax": argmax,
             "nan": int(nan.sum()), "inf": int(numpy.isinf(values).sum())}, digest)


def dump_bytes(values):
    """The row's dump: its float32 bits little-endian, unchanged (NaN
    payloads too; only the hashes make NaNs canonical)."""
    return values.astype("<f4").tobytes()
