"""A run's hold on its logdir: one run per logdir, one process training into it at a time.

:class:`LogdirLease` creates and locks ``logdir/checkpoints/``, refuses a logdir that holds
another run (:func:`holdem.checkpoint.claim_logdir`), sets damaged and superseded checkpoints
aside, and after a run that failed before writing a checkpoint removes what it made. The run
loop (:mod:`holdem.training`) holds one from start to end.
"""

import fcntl
import os
import tempfile
from pathlib import Path

from holdem import checkpoint as ckpt
from holdem.fileio import describing, os_cause
from holdem.metrics import log


def _check_writable(directory, what, logdir):
    """Raise :class:`holdem.checkpoint.LogdirError` naming ``directory`` unless a file can be
    created and removed there (a permission, an immutable or read-only directory): asked before
    a run trains, not found out when its first checkpoint is refused."""
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".holdem-write-test-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ckpt.LogdirError(
            f"logdir {logdir}: cannot write {what} in {directory}: {os_cause(exc)}; nothing "
            "was trained (give a --logdir this user can write to)") from None


def _missing_dirs(directory):
    """``directory`` and its ancestors that do not exist yet, deepest first."""
    missing = []
    for d in (directory, *directory.parents):
        if d.exists():
            break
        missing.append(d)
    return missing


class LogdirLease:
    """A run's hold on its logdir, from start to end.

    It creates ``logdir/checkpoints/`` and locks it (a second process training into the same
    logdir is refused), checks that a file can be written there (and in the logdir itself for
    ``tensorboard`` event files), so an unwritable logdir stops a run before it trains, and
    checks that the logdir holds no other run
    (:func:`holdem.checkpoint.claim_logdir`); with ``overwrite`` the other run's files are
    deleted by :meth:`clear_stale`, which the run calls only once it has started (a run that
    fails to start deletes nothing). A run that fails before writing a checkpoint removes the
    directories it created if they are empty, and its TensorBoard file if it ran no iteration,
    so failed runs leave no empty logdirs behind.
    """

    def __init__(self, logdir, resume_path=None, overwrite=False, damaged=(),
                 tensorboard=False):
        self.logdir = Path(logdir)
        self.directory = ckpt.checkpoint_dir(logdir)
        self._made = _missing_dirs(self.directory.absolute())
        self._events = set(self.logdir.glob(ckpt.EVENTS_GLOB))
        self._fd = None
        self.stale, self.superseded = [], []
        self.resume_path = resume_path
        with describing("create logdir", logdir):
            self.directory.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.directory, os.O_RDONLY)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._made = []             # the other process's directories
            self.release(failed=True)
            raise ckpt.LogdirError(f"logdir {logdir}: another process is training into it") \
                from None
        try:
            self.stale, self.superseded = ckpt.claim_logdir(logdir, resume_path, overwrite,
                                                            damaged)
            _check_writable(self.directory, "checkpoints", logdir)
            if tensorboard or any(p.parent == self.logdir for p in self.stale):
                _check_writable(self.logdir, "TensorBoard events" if tensorboard else "files",
                                logdir)
        except BaseException:
            self.release(failed=True)
            raise
        # A damaged checkpoint of this logdir is renamed, never deleted, so that it is not
        # found again (a damaged one elsewhere is only passed over).
        own = self.directory.resolve()
        for path in damaged:
            if Path(path).resolve().parent == own and Path(path).exists():
                log(f"set the damaged checkpoint aside as {ckpt.set_aside(path, 'damaged')}")

    def clear_stale(self):
        """Delete the other run's files (``overwrite``), or set aside this run's checkpoints
        later than the older one it resumes from (renamed ``*.superseded``)."""
        if self.superseded:
            names = ", ".join(p.name for p in self.superseded)
            for path in self.superseded:
                ckpt.set_aside(path, "superseded")
            log(f"resuming from {Path(self.resume_path).name}, older than this run's newest: "
                f"set {len(self.superseded)} later checkpoint"
                f"{'s' if len(self.superseded) != 1 else ''} aside as *.superseded ({names})")
            self.superseded = []
        for path in self.stale:
            path.unlink(missing_ok=True)
        if self.stale:
            n = len(self.stale)
            log(f"--overwrite: deleted {n} file{'s' if n != 1 else ''} of the run that was in "
                f"{self.logdir} ({', '.join(p.name for p in self.stale)})")
        self.stale = []

    def release(self, failed=False, ran=False):
        """Unlock; after a failure with no checkpoint written, remove what this run made
        (its TensorBoard file only if it ran no iteration: ``ran``)."""
        if failed:
            if not ran:
                for path in set(self.logdir.glob(ckpt.EVENTS_GLOB)) - self._events:
                    path.unlink(missing_ok=True)
            for directory in self._made:
                try:
                    directory.rmdir()
                except OSError:         # not empty
                    break
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
