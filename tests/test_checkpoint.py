"""Checkpoint files: round trip, atomicity, and clear errors for damaged files."""

import os

import msgpack
import numpy as np
import pytest

from holdem import checkpoint as ckpt
from holdem import config as config_mod
from holdem.games import make_game
from holdem.games.checkpointed import game_of_checkpoint
from holdem.solver.solver import Solver, save_solver


def _trained(game="leduc", iters=2000, seed=3):
    cfg = config_mod.with_overrides(config_mod.default_for_game(game), train={"seed": seed})
    solver = Solver(make_game(game), cfg)
    solver.run(iters)
    return solver


def solver_from_checkpoint(checkpoint, config=None):
    """A :class:`Solver` restored from a checkpoint (``config`` overrides the stored one; its
    game must match): what resuming an in-process run does, for the round trips below."""
    game, config = game_of_checkpoint(checkpoint, config)
    store = ckpt.store_from_checkpoint(checkpoint, game)
    state = ckpt.run_state(checkpoint)
    return Solver(game, config, store=store, rng_state=state.rng_state,
                  iterations=state.iterations, elapsed=state.elapsed,
                  dcfr_steps=state.schedule.get("dcfr_steps", 0))


def _same_store(a, b):
    for x, y in zip(a.store.used(), b.store.used()):
        np.testing.assert_array_equal(x, y)


def test_round_trip_restores_solver_exactly(tmp_path):
    solver = _trained()
    path = save_solver(solver, tmp_path / ckpt.checkpoint_name(solver.iterations))
    loaded = ckpt.load(path)
    assert loaded.iterations == 2000
    assert loaded.header["versions"]["numba"]
    assert loaded.header["format"] == ckpt.FORMAT_VERSION
    restored = solver_from_checkpoint(loaded)
    _same_store(solver, restored)
    np.testing.assert_array_equal(restored.rng_state, solver.rng_state)
    assert restored.config == solver.config


def test_resume_equals_uninterrupted_run(tmp_path):
    whole = _trained(iters=4000)
    half = _trained(iters=2000)
    path = save_solver(half, tmp_path / "ckpt-000000002000.ckpt")
    resumed = solver_from_checkpoint(ckpt.load(path))
    resumed.run(2000)
    _same_store(whole, resumed)


def test_mmap_load_matches(tmp_path):
    solver = _trained(iters=500)
    path = save_solver(solver, tmp_path / "a.ckpt")
    plain, mapped = ckpt.load(path), ckpt.load(path, mmap=True)
    for name in plain.arrays:
        np.testing.assert_array_equal(plain.arrays[name], mapped.arrays[name])


def test_truncated_file_is_rejected_with_clear_error(tmp_path):
    path = save_solver(_trained(iters=500), tmp_path / "a.ckpt")
    data = path.read_bytes()
    for cut in (4, 20, len(data) // 2, len(data) - 1):
        bad = tmp_path / f"cut{cut}.ckpt"
        bad.write_bytes(data[:cut])
        with pytest.raises(ckpt.CheckpointError, match=str(bad)):
            ckpt.load(bad)


def test_corrupted_array_bytes_are_detected(tmp_path):
    path = save_solver(_trained(iters=500), tmp_path / "a.ckpt")
    header = ckpt.load(path).header
    spec = next(s for s in header["arrays"] if s["name"] == "strategy_sum")
    raw = bytearray(path.read_bytes())
    raw[spec["offset"] + 3] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(ckpt.CheckpointError, match="strategy_sum: checksum mismatch"):
        ckpt.load(path)


def test_corrupted_header_and_wrong_magic(tmp_path):
    path = save_solver(_trained(iters=200), tmp_path / "a.ckpt")
    raw = bytearray(path.read_bytes())
    raw[20] ^= 0x55
    bad = tmp_path / "hdr.ckpt"
    bad.write_bytes(bytes(raw))
    with pytest.raises(ckpt.CheckpointError, match="header"):
        ckpt.load(bad)
    other = tmp_path / "other.ckpt"
    other.write_bytes(b"PK\x03\x04" + b"\0" * 100)
    with pytest.raises(ckpt.CheckpointError, match="magic"):
        ckpt.load(other)


def test_future_version_is_refused_before_reading_more(tmp_path):
    path = save_solver(_trained(iters=200), tmp_path / "a.ckpt")
    raw = bytearray(path.read_bytes())
    raw[8:12] = (99).to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    with pytest.raises(ckpt.CheckpointError, match="version 99"):
        ckpt.load(path)


def test_disallowed_dtype_is_refused(tmp_path):
    # A hand-made file whose header asks for an object dtype (what a pickle would need).
    header = {"iterations": 1, "game": "kuhn", "config": {}, "arrays": [
        {"name": "x", "dtype": "|O", "shape": [1], "offset": 128, "nbytes": 8, "crc32": 0}]}
    packed = msgpack.packb(header)
    import struct
    import zlib
    blob = struct.pack("<8sII", ckpt.MAGIC, ckpt.FORMAT_VERSION, len(packed)) + packed
    blob += struct.pack("<I", zlib.crc32(packed))
    path = tmp_path / "evil.ckpt"
    path.write_bytes(blob + b"\0" * 256)
    with pytest.raises(ckpt.CheckpointError, match="dtype"):
        ckpt.load(path)


def test_resolve_picks_newest_complete_checkpoint(tmp_path):
    """The one written last, whatever its iteration count (a logdir older versions let two
    runs share holds the newer run's checkpoints next to the older run's longer ones)."""
    solver = _trained(iters=100)
    d = ckpt.checkpoint_dir(tmp_path)
    for n in (100, 2000, 300):
        save_solver(solver, d / ckpt.checkpoint_name(n))
    (d / ".ckpt-abc.tmp").write_bytes(b"partial")       # an interrupted write
    assert ckpt.resolve(tmp_path).name == ckpt.checkpoint_name(300)
    assert ckpt.resolve(d).name == ckpt.checkpoint_name(300)
    ckpt.prune(d, keep=2)
    assert [p.name for p in ckpt.list_checkpoints(d)] == [
        ckpt.checkpoint_name(300), ckpt.checkpoint_name(2000)]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ckpt.CheckpointError, match="no checkpoint files"):
        ckpt.resolve(empty)
    with pytest.raises(ckpt.CheckpointError, match="no such file"):
        ckpt.resolve(tmp_path / "missing")


def test_failed_write_leaves_previous_file_intact(tmp_path, monkeypatch):
    solver = _trained(iters=100)
    path = tmp_path / "a.ckpt"
    save_solver(solver, path)
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        save_solver(_trained(iters=300), path)
    assert path.read_bytes() == before
    assert not list(tmp_path.glob(".ckpt-*.tmp"))


def test_checkpoint_of_other_game_is_refused(tmp_path):
    path = save_solver(_trained("kuhn", iters=100), tmp_path / "k.ckpt")
    leduc = config_mod.default_for_game("leduc")
    with pytest.raises(ckpt.CheckpointError, match="game"):
        solver_from_checkpoint(ckpt.load(path), leduc)
