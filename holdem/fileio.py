"""Atomic file writes: every file holdem writes for users (checkpoints, bucket files, exports,
manifests) goes through :func:`atomic_open`, so a crash never leaves a half-written file under
the final name and existing data is never corrupted."""

import contextlib
import os
import tempfile
from pathlib import Path


def _fsync_dir(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_open(path, mode="wb", prefix=None, suffix=".tmp", shared=False):
    """Write ``path`` through a temporary file in the same directory: flushed, fsynced, then
    renamed over ``path`` (atomic on POSIX); on an error the temporary file is removed.

    ``prefix`` names the temporary file (default ``.<name>-``); ``shared`` gives it the usual
    umask permissions instead of mkstemp's 0600 (for files others read, like assets).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=prefix or f".{path.name}-", suffix=suffix,
                               dir=path.parent)
    try:
        if shared:
            mask = os.umask(0o022)
            os.umask(mask)
            os.fchmod(fd, 0o666 & ~mask)
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
