"""Bucket files: the card abstraction on disk, in :mod:`holdem.container` (never a pickle).

File format (version 1; ``.buckets``; the container's ``Layout.SHA256``)::

    offset 0   8 bytes   magic b"HOLDEMBK"
    offset 8   uint32    format version (little-endian)
    offset 12  uint32    header length H
    offset 16  H bytes   header: msgpack map
    ...        zero padding to a 64-byte boundary D (the data section)
    D + off    arrays, each at the 64-byte aligned ``offset`` (relative to D) named in the header
    end - 32   32 bytes  sha256 of every byte before it

The header holds ``format``, ``kind`` ("holdem.buckets"), ``generator`` (name, version),
``params`` (:class:`BucketParams`: k_preflop, k_flop, k_turn, k_river, num_players, seed,
preflop_samples, turn_samples, river_samples, method, kmeans_iters, kmeans_sample; a generator
version 1 file predates the last three and reads as method "ehs2"), ``sizes``, ``features``
(descriptions), ``stats`` (used bucket ids; with "emd" the k-means' steps and mean distances) and
``arrays`` (name, dtype, shape, offset, nbytes). Arrays: ``preflop_bucket`` (169),
``preflop_equity`` (169, float64), ``flop_bucket``, ``turn_bucket``, ``river_bucket`` (1981),
``flop_lower``, ``turn_lower``, ``river_lower`` (k, float64; with "emd" the smallest E[HS^2] in
each flop and turn bucket); what they mean is in :mod:`holdem.abstraction.bucket_tables` and
:mod:`holdem.abstraction.bucket_build`. The file holds no time stamp, so the same parameters give
the same bytes. :func:`load_buckets` checks the magic and version first, then the sha256, then
every field, and raises :class:`BucketFileError` naming the file and the field.
:func:`bucket_file_checksum` is the sha256 of the whole file (as ``sha256sum`` prints).
"""

import hashlib
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from holdem import container
from holdem.abstraction.bucket_tables import MAX_PLAYERS, NUM_SCORES, BucketTables, make_tables
from holdem.abstraction.isomorphism import STREET_SIZES
from holdem.abstraction.preflop import NUM_PREFLOP_CLASSES

MAGIC = b"HOLDEMBK"
FORMAT_VERSION = 1
GENERATOR_NAME = "holdem.abstraction.buckets"
"""The generator's name in every file's header: the module that held the builder when the shipped
files were made (kept, so that the same parameters still give the same bytes)."""
GENERATOR_VERSION = 2
"""Version 2 adds the params method, kmeans_iters and kmeans_sample. An "ehs2" file is still
written as version 1 (without them), so it keeps the bytes and sha256 it always had."""
METHODS = ("ehs2", "emd")
KIND = "holdem.buckets"
SUFFIX = ".buckets"
MAX_BUCKETS = 65535
MAX_EMD_BUCKETS = 512


class BucketFileError(ValueError):
    """A bucket file is missing, truncated, corrupt, of another format or inconsistent."""


FORMAT = container.Format(
    what="bucket file", magic=MAGIC, version=FORMAT_VERSION, error=BucketFileError,
    layout=container.Layout.SHA256, dtypes=frozenset({"|u1", "<u2", "<f8"}),
    max_header=1 << 20, max_file=1 << 30, name_foreign=True,
    wrong_magic="{found!r} is not {magic!r}: not a holdem {what}")
"""Bucket files in :mod:`holdem.container` (each array's dtypes are narrower: ``_ARRAY_SPECS``)."""

_fail = FORMAT.fail             # (path, field, message): raises BucketFileError


@dataclass(frozen=True)
class BucketParams:
    """Parameters of a bucket file (all enter the header and the bytes)."""

    k_preflop: int = 169        #: preflop buckets; 169 = the lossless classes
    k_flop: int = 50            #: flop buckets
    k_turn: int = 50            #: turn buckets
    k_river: int = 50           #: river buckets
    num_players: int = 2        #: equity target: against num_players - 1 random hands
    seed: int = 0               #: seeds every Monte Carlo step
    preflop_samples: int = 100_000   #: Monte Carlo deals per preflop class
    turn_samples: int = 47      #: turn cards per flop (47 = all: exact)
    river_samples: int = 48     #: river cards per turn board (48 = all: exact)
    method: str = "ehs2"        #: flop/turn buckets: "ehs2" quantiles or "emd" k-means
    kmeans_iters: int = 30      #: emd: at most this many Lloyd steps per street
    kmeans_sample: int = 200_000    #: emd: canonical hands the k-means is fitted on

    def validate(self):
        """Raise ValueError naming the first bad field."""
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        limits = {"k_preflop": (1, NUM_PREFLOP_CLASSES), "k_flop": (1, MAX_BUCKETS),
                  "k_turn": (1, MAX_BUCKETS), "k_river": (1, MAX_BUCKETS),
                  "num_players": (2, MAX_PLAYERS), "seed": (0, 2 ** 63 - 1),
                  "preflop_samples": (1, 10 ** 9), "turn_samples": (3, 47),
                  "river_samples": (3, 48), "kmeans_iters": (0, 1000),
                  "kmeans_sample": (100, 10 ** 8)}
        for field in fields(self):
            if field.name == "method":
                continue
            value = getattr(self, field.name)
            low, high = limits[field.name]
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"{field.name} must be an integer, got {value!r}")
            if not low <= value <= high:
                raise ValueError(f"{field.name} must be in {low}..{high}, got {value}")
        for name in ("k_turn", "k_river"):
            if self.method == "emd" and getattr(self, name) > MAX_EMD_BUCKETS:
                raise ValueError(f"{name} must be at most {MAX_EMD_BUCKETS} with method emd "
                                 f"(its histograms take 14 MB per bucket), got "
                                 f"{getattr(self, name)}")
        return self


@dataclass
class BucketFile:
    """A loaded bucket file: its header, parameters, raw arrays and run-time tables."""

    path: Path
    header: dict
    params: BucketParams
    arrays: dict
    tables: BucketTables
    sha256: str


_ARRAY_SPECS = {                     # name -> (allowed dtypes, shape; "k:<street>" = k of street)
    "preflop_bucket": (("|u1", "<u2"), (NUM_PREFLOP_CLASSES,)),
    "preflop_equity": (("<f8",), (NUM_PREFLOP_CLASSES,)),
    "flop_bucket": (("|u1", "<u2"), (STREET_SIZES[1],)),
    "turn_bucket": (("|u1", "<u2"), (STREET_SIZES[2],)),
    "river_bucket": (("|u1", "<u2"), (NUM_SCORES,)),
    "flop_lower": (("<f8",), ("k_flop",)),
    "turn_lower": (("<f8",), ("k_turn",)),
    "river_lower": (("<f8",), ("k_river",)),
}
_V2_PARAMS = ("method", "kmeans_iters", "kmeans_sample")
_BUCKET_ARRAYS = {"preflop_bucket": "k_preflop", "flop_bucket": "k_flop",
                  "turn_bucket": "k_turn", "river_bucket": "k_river"}


def header_for(params):
    """The first fields of the header of a file built with ``params`` (validated): format, kind,
    generator and params; an "ehs2" file's as generator version 1 wrote them (the same bytes)."""
    stored = asdict(params)
    if params.method == "ehs2":
        stored = {k: v for k, v in stored.items() if k not in _V2_PARAMS}
    return {
        "format": FORMAT_VERSION,
        "kind": KIND,
        "generator": {"name": GENERATOR_NAME,
                      "version": 1 if params.method == "ehs2" else GENERATOR_VERSION},
        "params": stored,
    }


def encode_buckets(header, arrays):
    """The bytes of a bucket file holding ``header`` (msgpack-able dict without ``arrays``) and
    ``arrays`` (name -> ndarray), in the layout of the module docstring."""
    return container.encode(FORMAT, header, arrays)


def save_buckets(path, header, arrays):
    """Write a bucket file atomically (temporary file in the same directory, fsync, rename);
    returns the path."""
    return container.save(FORMAT, path, header, arrays)


def bucket_file_checksum(path):
    """sha256 (hex) of the whole file at ``path``, as ``sha256sum`` prints it; checkpoints
    record it to refuse a different abstraction on resume."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise FORMAT.unreadable(path, exc) from None
    return digest.hexdigest()


def _check_header(path, header):
    if header.get("kind") != KIND:
        _fail(path, "kind", f"{header.get('kind')!r} is not {KIND!r}")
    if header.get("format") != FORMAT_VERSION:
        _fail(path, "format", f"header says {header.get('format')!r}, expected "
              f"{FORMAT_VERSION}")
    generator = header.get("generator")
    if not isinstance(generator, dict) or not isinstance(generator.get("version"), int):
        _fail(path, "generator", "missing or not a mapping with an int version")
    if generator["version"] > GENERATOR_VERSION:
        _fail(path, "generator.version", f"{generator['version']} is newer than this holdem "
              f"({GENERATOR_VERSION})")
    raw = header.get("params")
    if not isinstance(raw, dict):
        _fail(path, "params", "missing or not a mapping")
    names = {f.name for f in fields(BucketParams)}
    if generator["version"] < 2:            # version 1 files predate the method parameters
        raw = {**{name: getattr(BucketParams(), name) for name in _V2_PARAMS}, **raw}
    for name in names:
        if name not in raw:
            _fail(path, f"params.{name}", "missing")
    unknown = sorted(set(raw) - names)
    if unknown:
        _fail(path, f"params.{unknown[0]}", "unknown parameter")
    try:
        params = BucketParams(**raw).validate()
    except ValueError as exc:
        _fail(path, "params." + str(exc).split(" ", 1)[0], str(exc))
    sizes = header.get("sizes")
    expected = {"preflop": NUM_PREFLOP_CLASSES, "flop": STREET_SIZES[1],
                "turn": STREET_SIZES[2], "river_scores": NUM_SCORES}
    if sizes != expected:
        _fail(path, "sizes", f"{sizes!r} differs from this holdem's {expected!r}")
    if not isinstance(header.get("arrays"), list):
        _fail(path, "arrays", "missing or not a list")
    return params


def _array_check(params):
    """The container's check of each array description: a known array, once, with its dtype
    and shape."""

    def check(fmt, path, field, spec, arrays):
        name = spec.name
        if name not in _ARRAY_SPECS:
            _fail(path, field, f"unknown array {name!r}")
        if name in arrays:
            _fail(path, name, "appears twice")
        dtypes, want = _ARRAY_SPECS[name]
        want = tuple(getattr(params, n) if isinstance(n, str) else n for n in want)
        if spec.dtype not in dtypes:
            _fail(path, f"{name}.dtype", f"{spec.dtype!r} is not one of {dtypes}")
        if spec.shape != want:
            _fail(path, f"{name}.shape", f"{list(spec.shape)} is not {list(want)}")
        if spec.nbytes != int(np.prod(spec.shape)) * np.dtype(spec.dtype).itemsize:
            _fail(path, f"{name}.nbytes", f"{spec.nbytes} does not match the shape")

    return check


def _check_arrays(path, params, arrays):
    missing = sorted(set(_ARRAY_SPECS) - set(arrays))
    if missing:
        _fail(path, missing[0], "missing array")
    for name, k_name in _BUCKET_ARRAYS.items():
        k = getattr(params, k_name)
        top = int(arrays[name].max())
        if top >= k:
            _fail(path, name, f"bucket {top} is not below {k_name}={k}")
    if np.any(np.diff(arrays["river_bucket"].astype(np.int64)) < 0):
        _fail(path, "river_bucket", "not non-decreasing in the score")


def load_buckets(path):
    """Load and fully validate a bucket file -> :class:`BucketFile` (its ``tables`` are what
    :func:`~holdem.abstraction.deal_kernels.deal_buckets` reads). Raises
    :class:`BucketFileError` naming the file and the field on a missing, truncated, corrupt,
    foreign (pickle, npz, ...) or inconsistent file."""
    contents = container.read(FORMAT, path)
    path = contents.path
    params = _check_header(path, contents.header)
    arrays = container.read_arrays(FORMAT, contents, check=_array_check(params))
    _check_arrays(path, params, arrays)
    return BucketFile(path=path, header=contents.header, params=params, arrays=arrays,
                      tables=make_tables(arrays, params),
                      sha256=hashlib.sha256(contents.data).hexdigest())
