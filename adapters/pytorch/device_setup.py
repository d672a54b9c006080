"""The knobs outside the model that decide PyTorch's bits on a device, and
what the adapter reports about that device.

Each check runs before the checkpoint is loaded (the attention probe right
after, since it needs the head size), so that a configuration this torch or
this machine cannot run is refused cheaply, before `hello`, with an
`unsupported` record (Unsupported here). Every API newer than Debian's
torch 1.13 is feature-detected, never assumed.
"""
import contextlib
import ctypes
import inspect
import os
import re
import subprocess
import warnings

import torch

from llama_forward import Unsupported

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
ATTENTIONS = ["eager", "sdpa", "sdpa-math", "sdpa-flash", "sdpa-efficient", "sdpa-cudnn"]

# --attention sdpa-X: torch.nn.attention.SDPBackend's member (torch >= 2.3),
# then the keyword of the older torch.backends.cuda.sdp_kernel context.
_SDPA_BACKENDS = {"sdpa-math": ("MATH", "enable_math"),
                  "sdpa-flash": ("FLASH_ATTENTION", "enable_flash"),
                  "sdpa-efficient": ("EFFICIENT_ATTENTION", "enable_mem_efficient"),
                  "sdpa-cudnn": ("CUDNN_ATTENTION", "enable_cudnn")}


def attention_mode(spec):
    """One of ATTENTIONS (sdpa_math is read as sdpa-math, for profiles'
    tokens); None when unknown."""
    mode = spec.replace("_", "-")
    return mode if mode in ATTENTIONS else None


def _first_line(exception):
    text = str(exception).strip()
    return text.splitlines()[0] if text else type(exception).__name__


def parse_device(spec):
    """cpu, cuda or cuda:N (or cudaN, a spelling a profile's axis token can
    hold) as (type, index); None when malformed."""
    found = re.fullmatch(r"cpu|cuda(?::?(\d+))?", spec)
    if not found:
        return None
    return ("cpu", None) if spec == "cpu" else ("cuda", int(found.group(1) or 0))


def resolve_device(spec):
    """The torch.device to run on. Cheap: asks torch how many GPUs it sees,
    nothing more, so a CPU-only machine refuses CUDA cells at once."""
    kind, index = parse_device(spec)
    if kind == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        build = "" if torch.version.cuda else "; this torch is built without CUDA"
        raise Unsupported("no CUDA device: torch %s sees none (torch.cuda.is_available() is "
                          "False%s)" % (torch.__version__, build))
    count = torch.cuda.device_count()
    if index >= count:
        raise Unsupported("no CUDA device %d: torch %s sees %d (cuda:0 to cuda:%d)"
                          % (index, torch.__version__, count, count - 1))
    torch.cuda.set_device(index)
    return torch.device("cuda", index)


def prepare_determinism(mode):
    """Must run before CUDA starts: cuBLAS reads CUBLAS_WORKSPACE_CONFIG when
    it makes its handle, and without a fixed workspace its reductions may be
    split differently from call to call (PyTorch then refuses deterministic
    mode for every matmul)."""
    if mode == "on":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def set_determinism(mode):
    """torch.use_deterministic_algorithms, set explicitly either way: on, an
    op without a deterministic implementation raises (reported as
    unsupported) instead of running, and index_add_ (the MoE block's sum)
    runs its deterministic CUDA kernel instead of atomic adds."""
    if not hasattr(torch, "use_deterministic_algorithms"):
        if mode == "on":
            raise Unsupported("--deterministic on: torch %s has no "
                              "torch.use_deterministic_algorithms" % torch.__version__)
        return
    torch.use_deterministic_algorithms(mode == "on")


def set_tf32(mode, device):
    """Whether float32 matmuls (and cuDNN) may round their inputs to TF32.
    Set explicitly: cuDNN's default is on. torch >= 2.9 has the
    fp32_precision properties and refuses a mix of them with the legacy
    allow_tf32 flags, so only one of the two APIs is touched."""
    if device.type != "cuda":
        if mode == "on":
            raise Unsupported("TF32 is a CUDA matmul mode; the CPU has none")
        return  # nothing on the CPU reads these flags
    on = mode == "on"
    matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    if hasattr(matmul, "fp32_precision"):
        precision = "tf32" if on else "ieee"
        matmul.fp32_precision = precision
        # cudnn's own, then its conv and rnn ops, which do not inherit it.
        for scope in (cudnn, getattr(cudnn, "conv", None), getattr(cudnn, "rnn", None)):
            if scope is not None and hasattr(scope, "fp32_precision"):
                scope.fp32_precision = precision
    else:
        matmul.allow_tf32 = on
        cudnn.allow_tf32 = on


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)  # a kernel's failure surfaces here, not later


def probe_dtype(name, device):
    """Multiplies in the compute dtype once: torch 1.13's CPU has no Half
    matmul ("addmm_impl_cpu_" not implemented for 'Half')."""
    x = torch.ones(2, 2, dtype=DTYPES[name], device=device)
    try:
        torch.nn.functional.silu(torch.nn.functional.linear(x, x))
        _sync(device)
    except RuntimeError as e:
        raise Unsupported("dtype %s on %s with torch %s: %s"
                          % (name, device, torch.__version__, _first_line(e)))


def attention_context(mode):
    """A function returning the context every forward runs in: nothing for
    eager and plain sdpa (torch picks the backend), else one that lets SDPA
    use the one backend asked for."""
    if mode == "eager":
        return contextlib.nullcontext
    if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        raise Unsupported("--attention %s: torch %s has no torch.nn.functional."
                          "scaled_dot_product_attention (PyTorch 2.0 added it)"
                          % (mode, torch.__version__))
    if mode == "sdpa":
        return contextlib.nullcontext
    member, keyword = _SDPA_BACKENDS[mode]
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        SDPBackend = sdpa_kernel = None
    if SDPBackend is not None and hasattr(SDPBackend, member):
        backend = getattr(SDPBackend, member)
        return lambda: sdpa_kernel(backend)
    legacy = getattr(torch.backends.cuda, "sdp_kernel", None)
    if legacy is not None:
        keywords = [k for _, k in _SDPA_BACKENDS.values()
                    if k in inspect.signature(legacy).parameters]
        if keyword in keywords:
            return lambda: legacy(**{k: k == keyword for k in keywords})
    raise Unsupported("--attention %s: torch %s cannot restrict SDPA to the %s backend"
                      % (mode, torch.__version__, member))


def probe_attention(mode, context, device, dtype, head_dim):
    """One SDPA call shaped like the model's (its head size and dtype, a
    boolean mask with a causal edge and a padded key), so that a backend
    that cannot run it (flash takes no arbitrary mask; a head size or dtype
    a kernel lacks) is refused before `hello`. torch says why in warnings
    before it raises "No available kernel"; the reason carries them."""
    if mode == "eager":
        return
    shape = (1, 2, 3, head_dim)
    q = torch.linspace(-1, 1, 3 * 2 * head_dim).reshape(shape).to(device=device, dtype=dtype)
    kv = torch.linspace(1, -1, 5 * 2 * head_dim).reshape(1, 2, 5, head_dim).to(device=device,
                                                                                dtype=dtype)
    key_pos = torch.tensor([0, 1, -1, 2, 3], device=device)
    query_pos = torch.tensor([1, 2, 3], device=device)
    visible = (key_pos >= 0) & (key_pos[None, :] <= query_pos[:, None])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with context():
                torch.nn.functional.scaled_dot_product_attention(q, kv, kv,
                                                                 attn_mask=visible[None, None])
            _sync(device)
            return
        except RuntimeError as e:
            failure = _first_line(e)
    why = _kernel_reasons(caught)
    raise Unsupported("--attention %s on %s in %s, head_dim %d: %s%s"
                      % (mode, device, str(dtype).replace("torch.", ""), head_dim, failure,
                         " (" + "; ".join(why) + ")" if why else ""))


def _kernel_reasons(caught):
    """The warnings in which torch says why each SDPA kernel was not used,
    without its source locations, the "... not used because:" headers and
    the backends we disabled ourselves."""
    reasons = []
    for w in caught:
        text = re.sub(r"\s*\(Triggered internally at [^)]*\)\.?", "", str(w.message)).strip()
        text = " ".join(text.split())
        if not text or text.endswith("because:") or "runtime disabled" in text:
            continue
        if text not in reasons:
            reasons.append(text[:200].rstrip("."))
    return reasons[:4]


def runtime_unsupported(exception):
    """The reason when an error raised while running means 'this cannot run
    here' (no deterministic kernel, no SDPA kernel, an op lacking the dtype)
    rather than a failure; None otherwise."""
    text = _first_line(exception)
    if "deterministic" in text:
        return "--deterministic on: " + text
    if "No available kernel" in text or "not implemented for" in text:
        return text
    return None


# --- what hello says about a CUDA device -----------------------------------

def _driver_version():
    """The NVIDIA driver's version: NVML, else nvidia-smi, else the kernel
    module's /proc file; "unknown" when none answers."""
    try:
        import pynvml
        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # ImportError, NVMLError, a library that will not load
        pass
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              timeout=10)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.split()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as f:
            found = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d[\w.-]*)", f.read())
        if found:
            return found.group(1)
    except OSError:
        pass
    return "unknown"


def _loaded_library(pattern):
    """The path of a shared library already mapped into this process."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            for text in f:
                path = text.split()[-1] if len(text.split()) >= 6 else ""
                if re.search(pattern, os.path.basename(path)):
                    return path
    except OSError:
        pass
    return None


def _cublas_version(device):
    """cuBLAS's version as the loaded library reports it (cublasLtGetVersion:
    major * 10000 + minor * 100 + patch); None when it cannot be learnt
    (a torch with cuBLAS linked in statically, say)."""
    try:
        x = torch.ones(2, 2, device=device)
        (x @ x).sum().item()  # loads cuBLAS if nothing has yet
        path = _loaded_library(r"^libcublasLt\.so(\.\d+)*$")
        if path is None:
            return None
        get_version = ctypes.CDLL(path).cublasLtGetVersion
        get_version.restype, get_version.argtypes = ctypes.c_size_t, []
        v = get_version()
        return "%d.%d.%d" % (v // 10000, v % 10000 // 100, v % 100) if v else None
    except Exception:  # OSError, AttributeError, a CUDA error: say nothing rather than guess
        return None


def _cudnn_version():
    """cuDNN's version: 9.x encodes major * 10000 + minor * 100 + patch,
    earlier ones major * 1000 + minor * 100 + patch."""
    try:
        if not torch.backends.cudnn.is_available():
            return None
        v = torch.backends.cudnn.version()
    except Exception:
        return None
    if not v:
        return None
    major = v // 10000 if v >= 90000 else v // 1000
    rest = v % 10000 if v >= 90000 else v % 1000
    return "%d.%d.%d" % (major, rest // 100, rest % 100)


def describe_cuda(device):
    """hello's `device` object for a CUDA device."""
    major, minor = torch.cuda.get_device_capability(device)
    libraries = []
    if torch.version.cuda:
        libraries.append("CUDA " + torch.version.cuda)
    cublas = _cublas_version(device)
    if cublas:
        libraries.append("cuBLAS " + cublas)
    cudnn = _cudnn_version()
    if cudnn:
        libraries.append("cuDNN " + cudnn)
    libraries.append("torch " + torch.__version__)
    return {"kind": "cuda", "name": torch.cuda.get_device_name(device),
            "capability": "%d.%d" % (major, minor),
            "multiprocessors": torch.cuda.get_device_properties(device).multi_processor_count,
            "driver": _driver_version(), "libraries": ", ".join(libraries)}
