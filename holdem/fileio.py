"""Atomic file writes: every file holdem writes for users (checkpoints, bucket files, exports,
manifests, charts) goes through :func:`atomic_open`, so a crash never leaves a half-written file
under the final name and existing data is never corrupted."""

import contextlib
import os
import secrets
from pathlib import Path


class StorageError(RuntimeError):
    """The machine's storage refused a write a run needs (a full disk, a file size limit, a
    full /dev/shm): the message names the file and the cause. The CLIs print it on one line and
    exit 1; what was written before stays as it was."""


def os_cause(err):
    """An OSError as the messages that name a refused write give it: ``[Errno 28] No space
    left on device`` (or the error's text when it has no errno)."""
    return f"[Errno {err.errno}] {err.strerror}" if err.strerror else str(err)


class FileOperationError(OSError):
    """An ``OSError`` that says what was being done and to which file: ``cannot write
    out.json: [Errno 28] No space left on device`` (a full disk gives no file name of its own).
    ``errno``, ``strerror`` and ``filename`` are the cause's, so ``except OSError`` and
    :func:`os_cause` treat it as the error it wraps; the CLIs print it as it reads."""

    def __init__(self, action, path, cause):
        if cause.errno is None:
            super().__init__(str(cause))
        else:
            super().__init__(cause.errno, cause.strerror, cause.filename)
        self.action, self.path, self.cause = action, str(path), cause

    def __str__(self):
        text = f"cannot {self.action} {self.path}: {os_cause(self.cause)}"
        if self.cause.filename is not None:
            # The file the system named, unless it is this one or a temporary file beside it.
            other, target = Path(os.fsdecode(self.cause.filename)), Path(self.path)
            if other != target and other.parent != target.parent:
                text += f" ({other})"
        return text


@contextlib.contextmanager
def describing(action, path):
    """Within the block, an ``OSError`` becomes a :class:`FileOperationError` naming ``action``
    (``"write"``, ``"create logdir"``) and ``path``; one that already names both passes."""
    try:
        yield
    except FileOperationError:
        raise
    except OSError as exc:
        raise FileOperationError(action, path, exc) from exc


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


def _create_temporary(directory, prefix, suffix):
    """(fd, path) of a new, empty file in ``directory``, with the permissions of any new file:
    0666 less the umask (the kernel applies it; mkstemp's 0600 would hide exports and
    checkpoints from the user's group)."""
    for _ in range(100):
        path = directory / f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {directory}")


@contextlib.contextmanager
def atomic_open(path, mode="wb", prefix=None, suffix=".tmp", encoding=None):
    """Write ``path`` through a temporary file in the same directory: flushed, fsynced, then
    renamed over ``path`` (atomic on POSIX); on an error the temporary file is removed.

    ``prefix`` names the temporary file (default ``.<name>-``). A new file gets the usual
    permissions (0666 less the umask); a file that is replaced keeps its own. An ``OSError``
    (the block's writes included) is raised as a :class:`FileOperationError` naming ``path``.
    """
    path = Path(path)
    with describing("write", path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _create_temporary(path.parent, prefix or f".{path.name}-", suffix)
        try:
            try:
                os.fchmod(fd, path.stat().st_mode & 0o7777)
            except FileNotFoundError:
                pass
            with os.fdopen(fd, mode, encoding=encoding) as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    _fsync_dir(path.parent)
