"""The one place numba's decorator options are set.

Every kernel module imports its decorator from here:

- ``njit``: ``cache=True`` (start-up stays fast), ``fastmath`` with ``error_model='numpy'`` (about
  +50% on the traversal; neither alone helped), ``nogil``, and ``_nrt=False``: kernels never
  allocate, and without numba's reference counting every array access and call stops paying two
  atomic operations (they took 86% of the traversal's time, measured with perf).
- ``njit_exact``: the same without fastmath, for results that must be IEEE-exact (hashing, ranks,
  merges, sentinels such as -inf).
- ``njit_inline``: small hot helpers inlined into their callers at numba-IR level (a call passes
  every array of a namedtuple by value).
- ``overload_inline(func)``: the same options for a ``numba.extending.overload`` of ``func``, so
  one generic kernel can call ``func`` and get, at compile time, the implementation that fits the
  type of its arguments (the traversal skeleton steps through each game this way).

Kernels stay iterative: numba's cache can crash when loading recursive functions (numba issue
6061).

numba keys its cache on the source file of the cached function only, so a change in a kernel it
calls (or inlines) from another file would load stale machine code, or crash numba's cache loader
(a ``NUMBA_CACHE_DIR`` kept from an older tree did). We therefore point numba's cache at a
directory named after a digest of every kernel module of the package (those importing this
module) and numba's version, ``numba-<digest>``, under ``~/.cache/holdem`` (``XDG_CACHE_HOME``)
or, when the user set one, under ``NUMBA_CACHE_DIR``: any change to a kernel selects a fresh
cache, wherever the caches are kept.
"""

import hashlib
import os
from pathlib import Path

import numba
from numba.extending import overload


def _source_digest(root=None):
    """A digest of numba's version and every kernel module under ``root`` (default: this
    package), their paths and contents."""
    root = Path(__file__).resolve().parent if root is None else Path(root)
    digest = hashlib.sha256(numba.__version__.encode())
    for path in sorted(root.rglob("*.py")):
        text = path.read_bytes()
        if b"holdem._jit" in text:          # only modules that hold kernels
            digest.update(str(path.relative_to(root)).encode())
            digest.update(text)
    return digest.hexdigest()[:16]


def cache_dir():
    """Where compiled kernels are cached."""
    return numba.config.CACHE_DIR


def _cache_base():
    """Where the per-digest cache directories go: ``NUMBA_CACHE_DIR`` if set, else
    ``~/.cache/holdem``."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "holdem"


numba.config.CACHE_DIR = str(_cache_base() / f"numba-{_source_digest()}")

_OPTIONS = dict(cache=True, error_model="numpy", nogil=True, _nrt=False)

njit = numba.njit(fastmath=True, **_OPTIONS)
njit_exact = numba.njit(**_OPTIONS)
njit_inline = numba.njit(fastmath=True, inline="always", **_OPTIONS)


def overload_inline(func, strict=True):
    """Decorator: register an always-inlined, fastmath overload of ``func`` (``strict=False``
    lets a typing function taking ``*args`` return implementations with named arguments)."""
    options = {k: v for k, v in _OPTIONS.items() if k != "cache"}   # cached with the caller
    return overload(func, inline="always", strict=strict,
                    jit_options=dict(fastmath=True, **options))
