"""The command-line tools: ``python -m holdem.cli.NAME`` (every flag: docs/commands.md).

Ctrl-C ends a command with one line, ``python -m holdem.cli.NAME: interrupted``, and exit status
130, whenever it comes. While a command's ``main`` runs, :func:`holdem.cli.common.run_main` sees
the ``KeyboardInterrupt``; before that (the command's module and numpy, numba and the kernels
still loading) and after it, the handler installed here says so and exits. It is installed only
when Python runs a command: while ``python -m`` imports the package, ``sys.argv[0]`` is ``"-m"``
(Python's documented behaviour), so importing ``holdem.cli`` from a test or a program leaves the
interpreter's handler alone.
"""

import signal
import sys
import threading
from pathlib import Path


def program_name():
    """How the running command is invoked: ``python -m holdem.cli.NAME`` for this package's
    commands (also while ``python -m`` is still importing it), else the script's name."""
    argv = sys.orig_argv
    if "-m" in argv[:-1] and argv[argv.index("-m") + 1].startswith("holdem.cli."):
        return f"python -m {argv[argv.index('-m') + 1]}"
    script = Path(sys.argv[0] if sys.argv else "python")
    if script.parent.name == "cli" and script.parent.parent.name == "holdem":
        return f"python -m holdem.cli.{script.stem}"
    return script.name


def _interrupted(signum, frame):
    print(f"{program_name()}: interrupted", file=sys.stderr, flush=True)
    raise SystemExit(130)


def install_interrupt_handler():
    """Make Ctrl-C outside ``main`` print one line and exit 130; returns the previous handler
    (None off the main thread, where signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, _interrupted)


if sys.argv[:1] == ["-m"]:
    install_interrupt_handler()
