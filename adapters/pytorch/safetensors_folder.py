"""Reads a safetensors folder as `samebits-engine export` writes it:
config.json plus model.safetensors (or shards with model.safetensors.index.json).

Files are untrusted: every header offset and size is checked against the
file, and a problem raises CheckpointError naming the file, the key and what
was expected. Tensors come back as numpy arrays of their stored values,
widened to float32 (BF16 and F16 widen exactly).
"""
import json
import os
import struct

import numpy


class CheckpointError(Exception):
    """A file that is not what it claims to be (the adapter exits 2)."""


# safetensors dtype tag -> (numpy dtype of the stored bytes, bytes per element)
_STORED = {"F32": ("<f4", 4), "F16": ("<f2", 2), "BF16": ("<u2", 2)}


def _widen(raw, tag):
    """Returns the stored values as float32 (BF16: the 16 high bits of an f32)."""
    if tag == "BF16":
        return (raw.astype(numpy.uint32) << 16).view(numpy.float32)
    return raw.astype(numpy.float32)


def _read_file(path, tensors, stored_as):
    """Adds every tensor of one .safetensors file to `tensors` (name -> array)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise CheckpointError("%s: %s" % (path, e))
    if len(data) < 8:
        raise CheckpointError("%s: shorter than the 8-byte header length" % path)
    (header_len,) = struct.unpack("<Q", data[:8])
    if header_len > len(data) - 8:
        raise CheckpointError("%s: header length %d runs past the end of the file (%d bytes)"
                              % (path, header_len, len(data)))
    try:
        header = json.loads(data[8:8 + header_len].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise CheckpointError("%s: header is not JSON: %s" % (path, e))
    if not isinstance(header, dict):
        raise CheckpointError("%s: header is not a JSON object" % path)
    base = 8 + header_len
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        where = "%s: tensor %s" % (path, name)
        if not isinstance(entry, dict) or entry.get("dtype") not in _STORED:
            raise CheckpointError("%s: dtype must be one of %s (quantized checkpoints are "
                                  "exported as F32)" % (where, ", ".join(sorted(_STORED))))
        shape, offsets = entry.get("shape"), entry.get("data_offsets")
        if (not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape)
                or not isinstance(offsets, list) or len(offsets) != 2
                or not all(isinstance(o, int) for o in offsets)):
            raise CheckpointError("%s: expected shape [N...] and data_offsets [BEGIN, END]" % where)
        stored, size = _STORED[entry["dtype"]]
        count = 1
        for d in shape:
            count *= d
        begin, end = offsets
        if not 0 <= begin <= end <= len(data) - base or end - begin != count * size:
            raise CheckpointError("%s: data_offsets [%d, %d] do not hold %d elements of %s inside "
                                  "the file's %d data bytes"
                                  % (where, begin, end, count, entry["dtype"], len(data) - base))
        raw = numpy.frombuffer(data, dtype=stored, count=count, offset=base + begin)
        tensors[name] = _widen(raw, entry["dtype"]).reshape(shape)
        stored_as[name] = (entry["dtype"], shape, raw)


def load_folder(folder):
    """Returns (config dict, {name: float32 array}, {name: (dtype tag, shape,
    stored values)})."""
    config_path = os.path.join(folder, "config.json")
    try:
        with open(config_path, encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise CheckpointError("%s: %s" % (config_path, e))
    if not isinstance(config, dict):
        raise CheckpointError("%s: expected a JSON object" % config_path)
    index_path = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index_path):
        try:
            with open(index_path, encoding="utf-8") as f:
                weight_map = json.load(f)["weight_map"]
            files = sorted(set(weight_map.values()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise CheckpointError("%s: expected {\"weight_map\": {NAME: FILE}}: %s" % (index_path, e))
        if not all(isinstance(n, str) and "/" not in n and n.endswith(".safetensors") for n in files):
            raise CheckpointError("%s: weight_map must name .safetensors files in the folder"
                                  % index_path)
    else:
        files = ["model.safetensors"]
    tensors, stored_as = {}, {}
    for name in files:
        _read_file(os.path.join(folder, name), tensors, stored_as)
    return config, tensors, stored_as
