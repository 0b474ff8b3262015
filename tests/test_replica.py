"""Store replicas (holdem.runtime.replica): a copy of the main store that applies the main
process's logged changes stays equal to it bit for bit -- through growth, discount sweeps and
released generations -- also when started in the middle of a run. No Ray needed."""

import numpy as np
import pytest

from holdem import config as config_mod
from holdem.delta.merge import RowMerger, merge_one
from holdem.games import make_game
from holdem.runtime import shm
from holdem.runtime.replica import Replica, StoreLog, store_copy
from holdem.runtime.worker import BatchRunner
from holdem.solver.solver import DcfrSchedule
from holdem.store.store import RegretStore, read_only_view


def _assert_same(store, replica):
    a, b = store.arrays, replica.store.arrays
    for name, x, y in zip(a._fields, a, b):
        assert x.shape == y.shape and x.dtype == y.dtype, name
        assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), name


@pytest.fixture
def leduc():
    config = config_mod.with_overrides(config_mod.default_for_game("leduc"),
                                       solver={"weighting": "dcfr"})
    return config, make_game(config)


def test_replica_follows_merges_growth_and_discounts(leduc, tmp_path):
    config, game = leduc
    main_alloc = shm.SharedAllocator(tmp_path / "main")
    (tmp_path / "main").mkdir()
    (tmp_path / "r1").mkdir()
    (tmp_path / "r2").mkdir()
    store = RegretStore(row_capacity=16, allocator=main_alloc)     # grows several times
    log = StoreLog()
    first = Replica(config.solver, store_copy(store), main_alloc.generation, log.seq,
                    log.deltas, merge_threads=2, directory=tmp_path / "r1")
    runner = BatchRunner(game, config, num_workers=2)
    merger = RowMerger(3)
    dcfr = DcfrSchedule(config.solver)
    second = None
    t0 = 0
    try:
        for batch in range(12):
            read = read_only_view(store.arrays)
            utility, visits = runner.run(read, t0, 300, 0.0)
            payload = bytes(runner.take_delta(read, batch, 0, main_alloc.generation, t0, 300,
                                              True, utility, visits, 0.01))
            floor = -50.0 if batch % 2 else None
            merge_one(store, merger, payload, floor)
            log.delta(payload, floor)
            t0 += 300
            if batch in (3, 7):
                dcfr.apply(store, 2)
                log.discounts(dcfr.steps)
            if batch == 8:
                kept_from = main_alloc.generation
                log.release(main_alloc.generation)
                main_alloc.release_before(main_alloc.generation)
            if batch == 5:      # a replica started mid-pass: the copy holds changes not sent
                second = Replica(config.solver, store_copy(store), main_alloc.generation,
                                 log.seq, log.deltas, directory=tmp_path / "r2")
            if batch % 4 == 3 or batch == 11:
                ops, size = log.take()
                assert size == sum(len(op[2]) for op in ops if op[1] == "delta")
                assert first.apply(ops)[:2] == (log.seq, log.deltas)
                if second is not None:
                    second.apply(ops)
                    _assert_same(store, second)
                _assert_same(store, first)
        assert main_alloc.generation >= 3 and log.deltas == 12 and dcfr.steps == 4
        assert first.allocator.generation == main_alloc.generation
        # A worker told the main store's generation maps the replica's file of it.
        main_desc = main_alloc.descriptor[1]
        seg = shm.Segment(shm.relocate(main_desc, **first.location))
        for x, y in zip(store.arrays, seg.arrays):
            assert np.array_equal(x, y)
        seg.close()
        # Released generations are gone on the replica too; only the newest remain.
        assert sorted(p.name for p in (tmp_path / "r1").iterdir()) == [
            shm.segment_path(g, **first.location).name
            for g in range(kept_from, main_alloc.generation + 1)]
        # A gap in the numbering is refused, not applied.
        with pytest.raises(ValueError, match="was sent change"):
            first.apply([(log.seq + 2, "discount", 9, None)])
    finally:
        first.close()
        if second is not None:
            second.close()
        merger.close()
        main_alloc.close()
    assert list((tmp_path / "r1").iterdir()) == [] and list((tmp_path / "r2").iterdir()) == []


def test_relocate_keeps_layout_and_generation(tmp_path):
    alloc = shm.SharedAllocator(tmp_path, first_generation=5)
    RegretStore(row_capacity=16, allocator=alloc)
    desc = alloc.descriptor[1]
    moved = shm.relocate(desc, directory="/elsewhere", pid=42, run_id="abc123")
    assert moved["path"] == "/elsewhere/holdem-42-abc123-g5.store"
    assert moved["arrays"] == desc["arrays"] and moved["size"] == desc["size"]
    with pytest.raises(ValueError, match="not a holdem segment"):
        shm.relocate({**desc, "path": "/tmp/other.bin"}, "/x", 1, "ab")
    alloc.close()


def test_log_without_replicas_only_counts():
    log = StoreLog(dcfr_steps=2)
    log.keep = False
    log.delta(b"x" * 10, None)
    log.discounts(4)
    log.release(3)
    assert (log.seq, log.deltas, log.steps) == (4, 1, 4)
    assert log.take() == ([], 0)
    log.keep = True
    log.delta(b"abc", -1.0)
    assert log.take() == ([(5, "delta", b"abc", -1.0)], 3)
    assert log.take() == ([], 0)


def test_ray_backend_without_ray_says_how_to_install_it(monkeypatch):
    import sys

    from holdem.runtime import ray_cluster

    monkeypatch.setitem(sys.modules, "ray", None)        # import ray raises ImportError
    with pytest.raises(config_mod.ConfigError, match=r"pip install -e '\.\[ray\]'"):
        ray_cluster.connect()


def test_unreachable_ray_address_is_a_one_line_error():
    from holdem.runtime import ray_cluster

    assert not ray_cluster._reachable("127.0.0.1:1", timeout=1.0)
    assert ray_cluster._reachable("auto") and ray_cluster._reachable("ray://head:10001")
