"""Shared command-line plumbing: one-line errors and a non-zero exit for bad input."""

import argparse
import signal
import sys
import threading
from pathlib import Path

from holdem.abstraction.bucket_file import BucketFileError
from holdem.cli import program_name
from holdem.checkpoint import CheckpointError, resolve, run_checkpoints
from holdem.config import ConfigError


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports errors on one line (exit status 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")

    def add_checkpoint(self):
        """The ``--checkpoint PATH`` every analysis command takes (a file or a logdir)."""
        self.add_argument("--checkpoint", required=True, metavar="PATH", type=checkpoint_file,
                          help="checkpoint file, or a logdir (its newest checkpoint; the "
                               "command says which file it loaded)")


def checkpoint_file(text):
    """argparse type of a checkpoint argument: the file itself, or a logdir's newest checkpoint
    (:func:`holdem.checkpoint.resolve`), named on stderr so the user knows what was loaded."""
    path = Path(text)
    try:
        found = resolve(path)
    except CheckpointError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if path.is_dir():
        count = len(run_checkpoints(path))
        print(f"{text}: loading {found} (the newest of {count} checkpoint"
              f"{'s' if count > 1 else ''})", file=sys.stderr, flush=True)
    return found


STORE_FULL = 3
"""Exit status of a run stopped because its store could not grow (after a final checkpoint)."""


def run_main(main, argv=None):
    """Call ``main(argv)``; turn expected failures into ``prog: error: ...`` and exit 2 (bad
    input), 3 (the store could not grow: :class:`holdem.store.store.StoreFull`, whose line says
    which final checkpoint holds the run and what to do) or 1 (workers failing faster than the
    restart budget allows; storage refusing a checkpoint or shared-memory file:
    :class:`holdem.fileio.StorageError`; any other ``OSError``, e.g. a full disk where a file is
    written: :class:`holdem.fileio.FileOperationError` says which file and what was being done),
    with the prefix argparse gives its own errors (``python -m holdem.cli.NAME``). Ctrl-C is one
    line and exit 130, in ``main`` as before and after it (:mod:`holdem.cli`)."""
    prog = program_name()
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if on_main_thread else None
    if previous is not None:
        signal.signal(signal.SIGINT, signal.default_int_handler)   # KeyboardInterrupt in main
    try:
        return _run(main, argv, prog)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _run(main, argv, prog):
    try:
        code = main(argv)
    except (ConfigError, CheckpointError, BucketFileError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:          # the machine's (a full disk, a permission): no traceback
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    except RuntimeError as exc:
        from holdem.fileio import StorageError
        from holdem.runtime.pool import WorkerFailure     # only once something failed
        from holdem.store.store import StoreFull

        if not isinstance(exc, (WorkerFailure, StorageError)):
            raise
        print(f"{prog}: error: {exc}", file=sys.stderr)   # the run already said "stopping: ..."
        return STORE_FULL if isinstance(exc, StoreFull) else 1
    return 0 if code is None else code


def output_file(text):
    """argparse type of a file a command writes (``--out``, ``--html``, ``--png``,
    ``--history``): a name whose directory exists. A missing directory is an error, not made:
    a typo found before the work, not after it (a logdir, which a run owns, is made)."""
    path = Path(text)
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a file name, got ''")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory; give a file name in it")
    parent = path.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise argparse.ArgumentTypeError(f"the directory {parent} {what} (make it first: "
                                         f"mkdir -p {parent})")
    return text


def directory_name(text):
    """argparse type of a directory a command makes if missing (``--logdir``): not empty."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a directory, got '' (e.g. runs/x)")
    return text


def positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    return value


def non_negative_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    return value


def positive_int(text):
    value = non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    return value


def iteration_count(text):
    """A positive whole number written as ``100000``, ``1e6`` or ``1_000_000``."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value < 1 or value != int(value):
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return int(value)
