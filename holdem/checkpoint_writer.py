"""Checkpoints written in the background: a run's loop hands over a snapshot and trains on.

:class:`CheckpointWriter` writes each checkpoint (:func:`holdem.checkpoint.save`) on a thread
and keeps a logdir's newest K (:func:`holdem.checkpoint.prune`); the run loop
(:mod:`holdem.training`) pauses only to copy the store.
"""

import threading
import time
from pathlib import Path

from holdem import checkpoint as ckpt


class CheckpointWriter:
    """Writes checkpoints in a background thread so training goes on while the file is written.

    The caller hands over a snapshot (copies), so the store may change meanwhile. At most one
    write is in flight; :meth:`wait` joins it and re-raises its error.
    """

    def __init__(self, directory, keep):
        self.directory = Path(directory)
        self.keep = keep
        self._thread = None
        self._error = None
        self.last_path = None
        self.last_seconds = 0.0

    def _write(self, path, header, arrays):
        start = time.perf_counter()
        try:
            ckpt.save(path, header, arrays)
            ckpt.prune(self.directory, self.keep)
            self.last_path = path
        except BaseException as exc:      # reported by wait()
            self._error = exc
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
            self.wait()
        return path

    def wait(self):
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            err, self._error = self._error, None
            raise err
