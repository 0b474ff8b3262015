"""What a command says when the machine refuses it or the user stops it (issue 40): every
OSError it prints names the file and what was being done, and Ctrl-C at any moment -- also
while the command is still importing numpy and numba -- is one line and exit status 130."""

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from holdem.fileio import FileOperationError, atomic_open
from tests.test_cli import done_fields, run

ROOT = Path(__file__).resolve().parents[1]


def _limited(module, limit):
    """``python -m holdem.cli.MODULE`` whose process may write no file past ``limit`` bytes
    (RLIMIT_FSIZE: a write past it fails with EFBIG, a full disk's way of failing without a
    file name)."""
    code = ("import resource, runpy, sys; "
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, resource.RLIM_INFINITY)); "
            f"sys.argv[0] = {module!r}; "
            f"runpy.run_module('holdem.cli.{module}', run_name='__main__')")
    return [sys.executable, "-c", code]


def _without_compile_notice(stderr):
    """stderr less the first-run notice (``compiling kernels ...`` and ``kernels ready ...``),
    which a cold numba cache adds to any command."""
    return "".join(line for line in stderr.splitlines(keepends=True)
                   if not line.startswith(("compiling kernels", "kernels ready")))


@pytest.fixture(scope="module")
def leduc_run(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("leduc")
    return done_fields(run("train_blueprint", "--game", "leduc", "--iters", 2000, "--logdir",
                           logdir, "--quiet").stdout)[4]


def test_an_export_on_a_full_disk_names_the_file(leduc_run, tmp_path):
    """It printed ``error: [Errno 28] No space left on device`` and no file name."""
    warm = tmp_path / "warm.json"          # numba's cache files must not meet the limit
    run("export_strategy", "--checkpoint", leduc_run, "--out", warm)
    warm.unlink()
    out = tmp_path / "leduc.json"
    out.write_text("the previous export\n")
    proc = subprocess.run([*_limited("export_strategy", 4096), "--checkpoint", str(leduc_run),
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr
    assert _without_compile_notice(proc.stderr) == (
        f"export_strategy: error: cannot write {out}: [Errno 27] File too large\n")
    assert out.read_text() == "the previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["leduc.json"]


def test_a_logdir_that_cannot_be_made_is_named_as_the_logdir(tmp_path):
    """``--logdir /proc/x`` printed ``error: [Errno 2] No such file or directory: '/proc/x'``."""
    if not Path("/proc/self").exists():
        pytest.skip("needs /proc")
    proc = run("train_blueprint", "--game", "kuhn", "--iters", 10, "--logdir", "/proc/x",
               check=False)
    assert proc.returncode == 1
    assert _without_compile_notice(proc.stderr) == (
        "python -m holdem.cli.train_blueprint: error: cannot create logdir /proc/x: [Errno 2] "
        "No such file or directory\n")


def test_an_oserror_in_a_write_says_write_and_the_file(tmp_path, monkeypatch):
    """Whatever the block writes: the error keeps its errno (``except OSError`` sees it as
    before) and names the file, not the temporary one beside it; a missing directory is named
    too."""
    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    path = tmp_path / "out.csv"
    with pytest.raises(FileOperationError) as info, atomic_open(path, "w") as f:
        f.write("x")
    assert str(info.value) == f"cannot write {path}: [Errno 28] No space left on device"
    assert info.value.errno == errno.ENOSPC and list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(OSError) as info, atomic_open(blocked / "x" / "out.csv", "w"):
        pass
    assert str(info.value) == (f"cannot write {blocked / 'x' / 'out.csv'}: [Errno 20] Not a "
                               f"directory ({blocked / 'x'})")


# -- Ctrl-C ---------------------------------------------------------------------------------------
INTERRUPT_AT_IMPORT = '''
import importlib.abc, os, signal, sys

class Interrupt(importlib.abc.MetaPathFinder):
    """Ctrl-C as the command starts importing {module!r}."""
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt())
'''


@pytest.mark.parametrize("module", ["numpy", "numba", "holdem.training"])
def test_ctrl_c_while_the_command_is_still_importing_is_one_line_and_130(tmp_path, module):
    """It printed a KeyboardInterrupt traceback within the first 0.3 s (imports loading).
    A sitecustomize sends SIGINT as the command starts importing ``module``: numpy and numba
    load before ``main`` runs, holdem.training inside it."""
    (tmp_path / "sitecustomize.py").write_text(INTERRUPT_AT_IMPORT.format(module=module))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, "-m", "holdem.cli.train_blueprint", "--game", "kuhn",
                           "--iters", "10000000", "--logdir", str(tmp_path / "run")],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == "python -m holdem.cli.train_blueprint: interrupted\n"
    assert not (tmp_path / "run").exists()


def _mapped(pid, library):
    try:
        return library in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.parametrize("delay", [0.0, 0.1, 0.3, 0.6, 1.5])
def test_ctrl_c_at_any_moment_of_the_start_is_one_line_and_130(tmp_path, delay):
    """The real thing: SIGINT ``delay`` seconds after the command began loading numpy (found in
    its memory map), wherever it is then: importing, compiling or loading kernels, training.
    (Before the package's first line runs -- Python's own start-up, some tens of ms -- Python
    prints its own KeyboardInterrupt; nothing of the package can run there.)"""
    if not Path("/proc/self/maps").exists():
        pytest.skip("needs /proc")
    proc = subprocess.Popen([sys.executable, "-m", "holdem.cli.train_blueprint", "--game",
                             "kuhn", "--iters", "100000000", "--logdir", str(tmp_path / "run")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 60
    while not _mapped(proc.pid, "numpy") and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=600)
    assert "Traceback" not in err, err
    if proc.returncode == 0:                # training had started: a final checkpoint
        assert "received SIGINT: writing a final checkpoint" in err and out.startswith("done:")
    else:
        assert proc.returncode == 130 and err.splitlines()[-1] == (
            "python -m holdem.cli.train_blueprint: interrupted"), err
        assert err.count("\n") <= 3, err   # the interrupt's line, maybe a line or two before
