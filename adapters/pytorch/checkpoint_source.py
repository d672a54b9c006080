"""Finds the safetensors folder a checkpoint spec names.

`safetensors:DIR` or a directory is read as it is. Any other spec samebits
loads (`synthetic:NAME[-DTYPE]`, `gguf:PATH`, `llama2c:PATH`, a .gguf path)
is first written as safetensors by `samebits-engine export`, into a cache
folder keyed by the spec, the engine binary and the source file, so that
both engines run the very same weights under the same spec. The export is
written beside the cache entry and renamed into place, so concurrent cells
never read half a folder.
"""
import hashlib
import os
import shutil
import subprocess
import tempfile

from llama_forward import Unsupported
from safetensors_folder import CheckpointError

HERE = os.path.dirname(os.path.abspath(__file__))


def engine_binary():
    """samebits-engine: $SAMEBITS_ENGINE, else the tree's build/bin."""
    path = os.environ.get("SAMEBITS_ENGINE") or os.path.join(HERE, "..", "..", "build", "bin",
                                                             "samebits-engine")
    if not os.access(path, os.X_OK):
        raise CheckpointError("samebits-engine not found at %s (build it, or set SAMEBITS_ENGINE): "
                              "it exports non-safetensors checkpoints for this adapter" % path)
    return os.path.abspath(path)


def cache_root():
    """$SAMEBITS_CACHE, else $XDG_CACHE_HOME/samebits, else ~/.cache/samebits."""
    root = os.environ.get("SAMEBITS_CACHE")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "samebits")
    return os.path.join(root, "pytorch-exports")


def _identity(path):
    """What changes when a file is rebuilt or replaced."""
    st = os.stat(path)
    return "%s:%d:%d" % (os.path.abspath(path), st.st_size, st.st_mtime_ns)


def _source_file(spec):
    """The file a spec reads, or None (synthetic checkpoints)."""
    if spec.startswith("synthetic:"):
        return None
    path = spec.split(":", 1)[1] if spec.split(":", 1)[0] in ("gguf", "llama2c") else spec
    if not os.path.isfile(path):
        raise CheckpointError("checkpoint %s: no such file %s" % (spec, path))
    return path


def safetensors_folder(spec):
    """Returns the folder to load for `spec`, exporting it first when needed."""
    if spec.startswith("safetensors:"):
        folder = spec[len("safetensors:"):]
        if not os.path.isdir(folder):
            raise CheckpointError("checkpoint %s: %s is not a folder (this adapter reads safetensors "
                                  "folders with config.json)" % (spec, folder))
        return folder
    if os.path.isdir(spec):
        return spec
    engine = engine_binary()
    source = _source_file(spec)
    key = "\n".join([spec, _identity(engine), _identity(source) if source else ""])
    folder = os.path.join(cache_root(), hashlib.sha256(key.encode()).hexdigest()[:24])
    if os.path.isfile(os.path.join(folder, "config.json")):
        return folder
    os.makedirs(cache_root(), exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="export-", dir=cache_root())
    try:
        done = subprocess.run([engine, "export", spec, scratch, "--format", "safetensors"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0 and "the writers do not write" in done.stderr:
            # A model safetensors cannot describe: not this adapter's to run.
            raise Unsupported(done.stderr.strip())
        if done.returncode != 0:
            raise CheckpointError("samebits-engine export %s failed: %s"
                                  % (spec, done.stderr.strip() or done.stdout.strip()))
        try:
            os.rename(scratch, folder)
        except OSError:
            if not os.path.isfile(os.path.join(folder, "config.json")):
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return folder
