"""Checkpoint files: a msgpack header and raw little-endian arrays. Never pickles.

Byte layout (version 1; :mod:`holdem.container`'s ``Layout.CRC32``, which writes and reads it)::

    offset 0   8 bytes   magic b"HOLDEMCK"
    offset 8   uint32    format version (little-endian)
    offset 12  uint32    header length H
    offset 16  H bytes   header: msgpack map (strings, numbers, lists, maps only)
    16 + H     uint32    CRC-32 of the header bytes
    ...        arrays, each starting at a 64-byte aligned offset named in the header

The header holds ``format``, ``created``, ``versions`` (holdem, numba, numpy, python), ``game``,
``config`` (the resolved config), ``iterations``, ``elapsed`` (training seconds, cumulative),
``schedule`` (e.g. DCFR steps), ``rng`` (RNG states as lists of ints), ``stats`` and ``arrays``: for
each array its ``name``, ``dtype`` (from an allow-list), ``shape``, ``offset``, ``nbytes`` and
``crc32``. The loader checks magic and version before anything else, then the header CRC, every
array's bounds and CRC, and reports problems as :class:`CheckpointError` naming the file and the
field. Writes go to a hidden temporary file in the same directory, are fsynced, then renamed over
the final name (atomic on POSIX); loaders never pick the temporary name.

Files are named ``ckpt-<iterations, 12 digits>.ckpt`` inside ``<logdir>/checkpoints/``. A logdir
holds one run: training refuses a logdir that holds another (:func:`claim_logdir`), and a logdir
given where a checkpoint is wanted stands for its newest checkpoint (:func:`resolve`).

The second half of this module reads and writes a *training run* in that format: the header a run
writes (:func:`run_header`), the store's arrays (:func:`store_snapshot`), and on the way back a
store rebuilt from a checkpoint (:func:`store_from_checkpoint`) and the run's counters
(:func:`run_state`); the check that a resumed run or an analysis loads the same game and
abstraction is :mod:`holdem.games.checkpointed`'s, which builds the game. Analysis and training
both read checkpoints through these functions only.
"""

import os
import platform
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from holdem import config as config_mod
from holdem import container
from holdem.store.store import RegretStore

MAGIC = b"HOLDEMCK"
FORMAT_VERSION = 1
SUFFIX = ".ckpt"
NAME_RE = re.compile(r"^ckpt-(\d{12})\.ckpt$")
_ALLOWED_DTYPES = frozenset({"<i1", "<i4", "<i8", "<u8", "<f4", "<f8", "|i1", "|b1", "|u1"})


class CheckpointError(ValueError):
    """A checkpoint file is missing, truncated, corrupt or of another format."""


class LogdirError(CheckpointError):
    """A logdir holds another run (or another process is training into it)."""


FORMAT = container.Format(
    what="checkpoint", magic=MAGIC, version=FORMAT_VERSION, error=CheckpointError,
    layout=container.Layout.CRC32, dtypes=_ALLOWED_DTYPES, max_header=64 << 20,
    past_end="data runs past the end of the file ({size} bytes): truncated")
"""Checkpoints in :mod:`holdem.container`."""

_fail = FORMAT.fail             # (path, field, message): raises CheckpointError


@dataclass
class Checkpoint:
    """A loaded checkpoint: the header mapping and the named arrays."""

    path: Path
    header: dict
    arrays: dict

    @property
    def iterations(self):
        return int(self.header["iterations"])


def versions():
    import numba

    from holdem.version import __version__
    return {"holdem": __version__, "numba": numba.__version__, "numpy": np.__version__,
            "python": platform.python_version()}


def checkpoint_name(iterations):
    return f"ckpt-{int(iterations):012d}{SUFFIX}"


def save(path, header, arrays):
    """Write ``header`` (a msgpack-able dict) and ``arrays`` (name -> ndarray) atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = dict(header)
    header.setdefault("format", FORMAT_VERSION)
    header.setdefault("created", time.time())
    header.setdefault("versions", versions())
    return container.save(FORMAT, path, header, arrays, prefix=".ckpt-")


def _read(path):
    """The checked :class:`holdem.container.Contents` of a checkpoint's prefix and header."""
    contents = container.read(FORMAT, path)
    for field, kind in (("iterations", int), ("game", str), ("config", dict), ("arrays", list)):
        if not isinstance(contents.header.get(field), kind):
            _fail(contents.path, field, f"missing or not a {kind.__name__}")
    return contents


def read_header(path):
    """Validate the prefix and header of ``path``; return (header dict, file size)."""
    contents = _read(path)
    return contents.header, contents.size


def load(path, mmap=False):
    """Load and fully validate a checkpoint file. With ``mmap`` arrays are read-only memory maps
    (the CRCs are still checked, which reads the file once)."""
    contents = _read(path)
    return Checkpoint(path=contents.path, header=contents.header,
                      arrays=container.read_arrays(FORMAT, contents, mmap=mmap))


def checkpoint_dir(logdir):
    return Path(logdir) / "checkpoints"


def list_checkpoints(directory):
    """Complete checkpoint files in ``directory``, oldest (fewest iterations) first."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    found = []
    for entry in directory.iterdir():
        m = NAME_RE.match(entry.name)
        if m and entry.is_file():
            found.append((int(m.group(1)), entry))
    return [p for _, p in sorted(found)]


def _written(path):
    """(time written, iterations) of a checkpoint file, from its header."""
    header, _ = read_header(path)
    created = header.get("created", 0.0)
    return (float(created) if isinstance(created, (int, float)) else 0.0,
            int(header["iterations"]))


def run_checkpoints(path):
    """The checkpoint files of the logdir ``path`` (in ``path/checkpoints/``, else in ``path``
    itself), fewest iterations first; [] if there are none."""
    for directory in (checkpoint_dir(path), Path(path)):
        found = list_checkpoints(directory)
        if found:
            return found
    return []


def resolve(path):
    """A checkpoint file from a file path or a logdir: its newest checkpoint, the one written
    last (by the time in its header). In a logdir that training wrote, that is also the one
    with the most iterations; in one that older versions let two runs share, it is the
    newer run's."""
    path = Path(path)
    if path.is_file():
        return path
    if path.is_dir():
        found = run_checkpoints(path)
        if found:
            return max(found, key=_written)
        raise CheckpointError(f"checkpoint {path}: no checkpoint files (ckpt-*.ckpt) in "
                              f"{path} or {checkpoint_dir(path)}")
    raise CheckpointError(f"checkpoint {path}: no such file or directory")


EVENTS_GLOB = "events.out.tfevents.*"           # TensorBoard's event files, in the logdir


def claim_logdir(logdir, resume_path=None, overwrite=False, damaged=()):
    """Check that a run may train into ``logdir``; return (the files of another run that
    training must delete first, only with ``overwrite``; the later checkpoints of this run that
    it sets aside, when it resumes from an older one of its own).

    A logdir without checkpoints is free. One with checkpoints may be continued: resumed from
    its newest checkpoint, which must also have the most iterations (else the newer checkpoints
    are another history, and pruning would delete the wrong files), or from an older checkpoint
    of its own, whose later ones are then superseded. ``damaged``: checkpoints that failed to
    load, which count as absent. Otherwise :class:`LogdirError`, unless ``overwrite``: then
    every checkpoint but ``resume_path`` goes, and, unless the run resumes from one of them, the
    TensorBoard event files too.
    """
    logdir = Path(logdir)
    skip = {Path(p).resolve() for p in damaged}
    found = [p for p in list_checkpoints(checkpoint_dir(logdir)) if p.resolve() not in skip]
    if not found:
        return [], []
    newest = max(found, key=_written)
    resume = Path(resume_path).resolve() if resume_path is not None else None
    continues = resume is not None and resume == newest.resolve() and newest == found[-1]
    if continues:
        return [], []
    ours = [p.resolve() for p in found]
    if not overwrite and resume in ours and newest == found[-1]:
        return [], found[ours.index(resume) + 1:]
    if not overwrite:
        what = f"{len(found)} checkpoint{'s' if len(found) > 1 else ''}, newest {newest.name}"
        if resume is None:
            hint = f"continue it with --resume-from {logdir}"
        elif resume == newest.resolve():
            hint = f"it also holds {found[-1].name}, a later checkpoint of another run"
        else:
            hint = f"to continue it, resume from its newest checkpoint ({newest.name})"
        raise LogdirError(f"logdir {logdir}: already holds a run ({what}); {hint}, start over "
                          "with --overwrite (deletes that run's checkpoints and TensorBoard "
                          "files), or choose another --logdir")
    stale = [p for p in found if resume is None or p.resolve() != resume]
    if resume is None or resume.parent != checkpoint_dir(logdir).resolve():
        stale += sorted(logdir.glob(EVENTS_GLOB))
    return stale, []


def set_aside(path, why):
    """Rename ``path`` to ``path.WHY`` (``.WHY.2`` and so on if taken) so that no command lists
    it as a checkpoint again, keeping its bytes; returns the new path."""
    path = Path(path)
    target = path.with_name(f"{path.name}.{why}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.{why}.{n}")
    os.replace(path, target)
    return target


def _resume_order(path):
    """Checkpoints to try when resuming from the logdir ``path``: its newest (:func:`resolve`,
    when its header reads), then the others, most iterations first."""
    candidates = run_checkpoints(path)
    try:
        first = resolve(path)
    except CheckpointError:
        first = None
    order = ([first] if first is not None else []) + [
        p for p in reversed(candidates) if first is None or p != first]
    if not order:
        resolve(path)                       # raises: no checkpoint files
    return order


def _first_that_reads(path, read):
    """(checkpoint path, ``read(path)``, [(damaged path, CheckpointError)]) for the checkpoint a
    resume from ``path`` starts from: a named file must read; in a logdir, the first of
    :func:`_resume_order` that does. Raises the first failure's CheckpointError when none does."""
    path = Path(path)
    if not path.is_dir():
        found = resolve(path)
        return found, read(found), []
    damaged = []
    for candidate in _resume_order(path):
        try:
            return candidate, read(candidate), damaged
        except CheckpointError as exc:
            damaged.append((candidate, exc))
    raise damaged[0][1]


def resume_header(path):
    """The header of the checkpoint a resume from ``path`` starts from (the first whose header
    reads: a truncated file's header may, and :func:`load_for_resume` then passes it over)."""
    return _first_that_reads(path, lambda p: read_header(p)[0])[1]


def load_for_resume(path):
    """The checkpoint to resume from ``path`` (a file or a logdir) and the damaged ones passed
    over: (path, Checkpoint, [(damaged path, CheckpointError)]). A logdir whose newest
    checkpoint fails to load (truncated, corrupt) resumes from the newest one that loads; a
    named file must load. Raises the newest one's CheckpointError when none loads."""
    return _first_that_reads(path, load)


def prune(directory, keep):
    """Delete all but the ``keep`` newest checkpoints; also remove stale temporary files."""
    directory = Path(directory)
    for old in list_checkpoints(directory)[:-keep] if keep > 0 else []:
        old.unlink(missing_ok=True)
    for stale in directory.glob(".ckpt-*.tmp"):
        try:
            if time.time() - stale.stat().st_mtime > 60:
                stale.unlink()
        except OSError:
            pass


# -- training runs in checkpoints -------------------------------------------------------------
STORE_ARRAYS = ("keys", "num_actions", "regrets", "strategy_sum")


def run_header(game, config, store, iterations, elapsed, schedule, rng_states, extra=None):
    """The header a training run writes: game, abstraction, resolved config, counters, schedule
    state, RNG states (lists of ints) and store statistics (``extra`` adds fields)."""
    header = {
        "game": game.name,
        "abstraction": {"buckets_sha256": game.buckets_sha256,
                        "buckets_path": game.buckets_path},
        "config": config_mod.to_dict(config),
        "iterations": int(iterations),
        "elapsed": float(elapsed),
        "schedule": dict(schedule),
        "rng": [[int(x) for x in state] for state in rng_states],
        "stats": {"infosets": store.num_infosets, "entries": store.num_entries,
                  "store_bytes": store.nbytes},
    }
    header.update(extra or {})
    return header


def store_snapshot(store):
    """Copies of the used part of a store, named as in a checkpoint (taken quickly; written to
    disk afterwards, while the store goes on changing)."""
    keys, num_actions, _, regrets, strategy_sum = store.used()
    return {"keys": keys.copy(), "num_actions": num_actions.copy(), "regrets": regrets.copy(),
            "strategy_sum": strategy_sum.copy()}


def store_from_checkpoint(checkpoint, game=None, allocator=None):
    """Rebuild a :class:`RegretStore` from a checkpoint, checking its keys against ``game``.
    Rows keep the checkpoint's order, so row indices and value offsets are those of the run
    that wrote it."""
    arrays = checkpoint.arrays
    for name in STORE_ARRAYS:
        if name not in arrays:
            raise CheckpointError(f"checkpoint {checkpoint.path}: arrays: missing {name!r}")
    keys, num_actions = arrays["keys"], arrays["num_actions"]
    if game is not None and not game.keys_match(keys, num_actions):
        raise CheckpointError(f"checkpoint {checkpoint.path}: keys: infosets do not belong to "
                              f"game {game.name!r}")
    try:
        return RegretStore.from_arrays(keys, num_actions, arrays["regrets"],
                                       arrays["strategy_sum"], allocator=allocator)
    except ValueError as exc:
        raise CheckpointError(f"checkpoint {checkpoint.path}: arrays: {exc}") from None


@dataclass
class RunState:
    """The counters a run resumes from: iterations, training seconds, schedule and RNG."""

    iterations: int
    elapsed: float
    schedule: dict
    rng_state: np.ndarray       # uint64[4]: the in-process stream (the first of ``rng``)


def run_state(checkpoint):
    """The :class:`RunState` stored in ``checkpoint``'s header (malformed fields raise
    :class:`CheckpointError` naming them)."""
    header = checkpoint.header
    schedule = header.get("schedule", {})
    if not isinstance(schedule, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in schedule.values()):
        _fail(checkpoint.path, "schedule", "malformed")
    try:
        elapsed = float(header.get("elapsed", 0.0))
        rng_state = np.array(header["rng"][0], dtype=np.uint64)
    except (KeyError, IndexError, TypeError, ValueError, OverflowError):
        _fail(checkpoint.path, "rng", "malformed")
    if rng_state.shape != (4,):
        _fail(checkpoint.path, "rng", "malformed")
    return RunState(iterations=int(header["iterations"]), elapsed=elapsed,
                    schedule=dict(schedule), rng_state=rng_state)
