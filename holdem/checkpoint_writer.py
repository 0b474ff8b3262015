"""Checkpoints written in the background: a run's loop hands over a snapshot and trains on.

:class:`CheckpointWriter` writes each checkpoint (:func:`holdem.checkpoint.save`) on a thread
and keeps a logdir's newest K (:func:`holdem.checkpoint.prune`); the run loop
(:mod:`holdem.training`) pauses only to copy the store.

A background write the machine refuses (``OSError``: a full disk, a file size limit) costs only
that checkpoint: the writer says so on stderr, the newest checkpoint written stands (writes are
atomic) and the next snapshot tries again. A final checkpoint (``background=False``) that cannot
be written raises :class:`holdem.fileio.StorageError`.
"""

import threading
import time
from pathlib import Path

from holdem import checkpoint as ckpt
from holdem.fileio import StorageError, os_cause
from holdem.metrics import log


class CheckpointWriter:
    """Writes checkpoints in a background thread so training goes on while the file is written.

    The caller hands over a snapshot (copies), so the store may change meanwhile. At most one
    write is in flight; :meth:`wait` joins it and re-raises its error. ``previous``: the
    checkpoint the run resumed from, named as the newest until this writer writes one.
    """

    def __init__(self, directory, keep, previous=None):
        self.directory = Path(directory)
        self.keep = keep
        self.previous = previous        # the checkpoint the run resumed from, if any
        self._thread = None
        self._error = None              # (path, exception) of the last write, until wait()
        self.last_path = None
        self.last_seconds = 0.0
        self.failed = 0                 # background writes the machine refused, in a row

    def _write(self, path, header, arrays):
        start = time.perf_counter()
        try:
            ckpt.save(path, header, arrays)
            ckpt.prune(self.directory, self.keep)
            self.last_path, self.failed = path, 0
        except BaseException as exc:      # reported by wait()
            self._error = (path, exc)
        self.last_seconds = time.perf_counter() - start

    def submit(self, iterations, header, arrays, background=True):
        self.wait()
        path = self.directory / ckpt.checkpoint_name(iterations)
        if background:
            self._thread = threading.Thread(target=self._write, args=(path, header, arrays),
                                            name="holdem-checkpoint", daemon=False)
            self._thread.start()
        else:
            self._write(path, header, arrays)
            self.wait(final=True)
        return path

    def wait(self, final=False):
        """Join the write in flight. Its error is raised, except an ``OSError`` of a background
        write (``final`` False), which is reported and counted in :attr:`failed`."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is None:
            return
        (path, err), self._error = self._error, None
        if not isinstance(err, OSError):
            raise err
        newest = self._newest()
        if final:
            raise StorageError(f"could not write checkpoint {path}: {os_cause(err)} (newest "
                               f"checkpoint: {newest})") from err
        self.failed += 1
        log(f"warning: could not write checkpoint {path.name}: {os_cause(err)}; the newest "
            f"checkpoint is {newest} and the next snapshot tries again"
            + (f" ({self.failed} failed in a row)" if self.failed > 1 else ""))

    def _newest(self):
        """The newest checkpoint that holds the run, as a refused write names it."""
        if self.last_path is not None:
            return self.last_path.name
        if self.previous is not None:
            return f"{self.previous} (resumed from; none written by this invocation)"
        found = ckpt.list_checkpoints(self.directory)
        return found[-1].name if found else "none written yet"
