"""Delta rings and merge passes: records written into shared memory by a worker, merged where
they lie, many at once; malformed records rejected with nothing of them merged."""

import multiprocessing as mp
import os
import time
from pathlib import Path

import numpy as np
import pytest

from holdem import config as config_mod
from holdem.delta import merge as merge_mod
from holdem.delta import record_kernels as rk
from holdem.delta.merge import AFTER_FAILURE, BAD_KEYS, RowMerger, merge_arena
from holdem.delta.records import RecordArena, decode_delta, encode_delta
from holdem.games import make_game
from holdem.runtime import frames, protocol, ring, shm
from holdem.runtime.executor import Batch
from holdem.runtime.flush import flush_iterations, largest_flush, pair_flush, unmerged_cap
from holdem.runtime.process import Pending
from holdem.runtime.worker import BatchRunner, BatchServer, Stopped, UnmergedGate
from holdem.store.store import RegretStore, read_only_view

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def rings(tmp_path):
    r = ring.Rings(2, ring_bytes=4096, allocator=shm.SharedAllocator(tmp_path))
    yield r
    r.close()
    assert not list(tmp_path.iterdir())            # its file is gone


def _record(n):
    return bytes(range(256)) * (n // 256) + bytes(n % 256)


def test_ring_round_trip_wrap_and_full(rings):
    writer = ring.RingWriter(rings.descriptor, 1)
    try:
        notes = [writer.put(_record(1000)) for _ in range(5)]
        assert notes[4] is None                    # 4 x 1,000 bytes: no room for a fifth
        starts = []
        for note, record in zip(notes[:4], [_record(1000)] * 4):
            start, length, end = ring.decode_note(note)
            at = rings.location(1, start, length)
            assert bytes(rings.buffer[at:at + length]) == record
            starts.append(start)
        assert starts == [0, 1000, 2000, 3000]
        rings.consumed(1, ring.decode_note(notes[1])[2])     # the first two are merged
        note = writer.put(_record(1000))           # 4,000 + 1,000 > 4,096: the next lap
        start, length, end = ring.decode_note(note)
        assert start == 0 and end == 4096 + 1000
        at = rings.location(1, start, length)
        assert bytes(rings.buffer[at:at + length]) == _record(1000)
        assert writer.put(_record(2000)) is None   # more than a quarter of the ring: a frame
        rings.reset(1)                             # a replacement worker starts empty
        fresh = ring.RingWriter(rings.descriptor, 1)
        assert ring.decode_note(fresh.put(_record(8)))[0] == 0
        fresh.close()
    finally:
        writer.close()


def test_workers_read_the_sweeps_the_main_process_publishes(rings):
    # The DCFR sweeps the main store has had, in every ring's control words: a worker writes
    # them into its records (the main process scales strategy updates made before later
    # sweeps); a replacement worker's ring starts empty but keeps the count.
    writers = [ring.RingWriter(rings.descriptor, k) for k in range(2)]
    try:
        assert [w.sweeps() for w in writers] == [0, 0]
        rings.sweeps(7)
        rings.merged(1, 500)
        assert [w.sweeps() for w in writers] == [7, 7] and writers[1].merged() == 500
        rings.reset(1)
        assert writers[1].sweeps() == 7 and writers[1].merged() == 0
    finally:
        for w in writers:
            w.close()


def test_workers_read_the_store_generation_the_main_process_publishes(rings):
    # The store's newest generation and its capacities, in every ring: none before the first
    # growth, kept for a replacement worker, and None while it is being rewritten (the
    # generation word cleared), so a worker never pairs one generation with another's layout.
    writers = [ring.RingWriter(rings.descriptor, k) for k in range(2)]
    try:
        assert [w.store() for w in writers] == [None, None]
        rings.store(0, (16, 64, 32))
        rings.store(3, (1024, 4096, 2048))
        assert [w.store() for w in writers] == [(3, (1024, 4096, 2048))] * 2
        rings.reset(1)
        assert writers[1].store() == (3, (1024, 4096, 2048))
        rings._control[0][ring.STORE_AT] = 0            # a rewrite under way
        assert writers[0].store() is None and writers[1].store() is not None
    finally:
        for w in writers:
            w.close()


def test_a_worker_maps_a_grown_store_between_two_flushes_of_a_batch(tmp_path):
    """The main process grows the store while a worker runs a batch of four flushes: from
    its next flush on the worker reads the new generation -- its records say so, and it reads
    the same regrets as the main store -- instead of arrays no merge reaches, until its next
    batch; and it keeps reading it once the old file is unlinked."""
    config = config_mod.with_overrides(config_mod.default_for_game("leduc"),
                                       train={"num_workers": 1})
    allocator = shm.SharedAllocator(tmp_path)
    store = RegretStore(16, allocator=allocator)
    rings = ring.Rings(1, ring_bytes=1 << 20, allocator=allocator)
    writer = ring.RingWriter(rings.descriptor, 0)
    server = BatchServer(config, 0)
    server.newest = writer.store
    generations = []

    def emit(record):
        generations.append(decode_delta(record)["generation"])
        if len(generations) == 2:           # the main process grows the store meanwhile
            store.reserve(100, 400)
            store.arrays.regrets[:8] = 0.5
            a = store.arrays
            rings.store(allocator.generation, (a.row_key.shape[0], a.regrets.shape[0],
                                               a.table.shape[0]))
            allocator.release_before(allocator.generation)
    try:
        generation, descriptor = allocator.descriptor
        store_message = {"generation": generation, "descriptor": descriptor}
        server.serve(protocol.encode_request(0, 0, 40, 0.0, store_message, flush=10), emit)
        assert generations == [0, 0, 1, 1]
        assert server.generation == 1 and not (tmp_path / Path(descriptor["path"]).name).exists()
        assert np.array_equal(server.segment.arrays.regrets, store.arrays.regrets)
        server.serve(protocol.encode_request(1, 40, 10, 0.0, None, flush=10), emit)
        assert generations[-1] == 1
    finally:
        server.close()
        writer.close()
        rings.close()
        allocator.close()


@pytest.mark.parametrize("chunk", [ring.DRAIN_BYTES, 50, 7])
def test_a_drain_reads_every_frame_whole_where_its_reads_cut_them(rings, monkeypatch, chunk):
    """One read takes every frame in the pipe; a length or a body cut by the end of a read
    (chunks of 50 and 7 bytes cut notes, lengths and records everywhere) is finished, and a
    record larger than a read arrives whole, in order with the notes around it."""
    import threading

    monkeypatch.setattr(ring, "DRAIN_BYTES", chunk)
    inbox = ring.Inbox(rings)
    writer = ring.RingWriter(rings.descriptor, 1)
    big = _record(200_000)                         # through the pipe (larger than the ring)
    notes = [writer.put(_record(64 * (k + 1))) for k in range(3)]
    frames_sent = [notes[0], notes[1], big, notes[2], ring.encode_wait(77, 5)]
    read_end, write_end = os.pipe()
    sender = threading.Thread(target=lambda: [frames.send(write_end, f) for f in frames_sent])
    sender.start()
    try:
        read = 0
        while read < len(frames_sent):
            read += inbox.drain(1, read_end, stall=10)
    finally:
        sender.join()
        os.close(read_end)
        os.close(write_end)
        writer.close()
    assert read == len(frames_sent)
    assert inbox.order == [("ring", 0), ("ring", 1), ("heap", 0), ("ring", 2)]
    assert [bytes(inbox.ringed.record(r)) for r in range(3)] == [
        _record(64), _record(128), _record(192)]
    assert bytes(inbox.heap.record(0)) == big
    assert inbox.waits == {1: (77, 5)}


@pytest.mark.parametrize("chunk", [ring.DRAIN_BYTES, 200])
def test_a_drain_says_whether_the_pipe_may_hold_more(rings, monkeypatch, chunk):
    """``filled``: the read took all the chunk holds, so the pipe may hold more (the pool
    then asks the pipe again); a read that took less emptied it (the pool does not ask)."""
    monkeypatch.setattr(ring, "DRAIN_BYTES", chunk)
    inbox = ring.Inbox(rings)
    writer = ring.RingWriter(rings.descriptor, 1)
    read_end, write_end = os.pipe()
    try:
        notes = [writer.put(_record(64)) for _ in range(8)]     # 8 x 41 bytes
        for note in notes:
            frames.send(write_end, note)
        total = len(notes) * (frames.HEADER_SIZE + ring.NOTE_SIZE)
        read = inbox.drain(1, read_end, stall=10)
        assert inbox.filled == (chunk < total)
        while inbox.filled and read < len(notes):
            read += inbox.drain(1, read_end, stall=10)
        assert read == len(notes) and not inbox.filled
    finally:
        os.close(read_end)
        os.close(write_end)
        writer.close()


def test_notes_are_checked(rings):
    assert ring.decode_note(ring.encode_note(8, 16, 24)) == (8, 16, 24)
    assert ring.decode_note(protocol.encode_ready(0, 1)[:ring.NOTE_SIZE]) is None
    assert rings.location(0, 4, 16) is None        # not 8-byte aligned
    assert rings.location(0, 4000, 200) is None    # past the ring's end
    assert rings.location(0, 0, 0) is None
    inbox = ring.Inbox(rings)
    inbox.received(0, _note_view(inbox, 4000, 200))
    assert 0 in inbox.bad_notes and inbox.ringed.count == 0


def _note_view(inbox, start, length):
    view = inbox.reserve(0, ring.NOTE_SIZE)
    view[:] = ring.encode_note(start, length, start + length)
    return view


@pytest.fixture(scope="module")
def leduc():
    config = config_mod.default_for_game("leduc")
    return config, make_game(config)


def _records(config, game, store, flushes, n=200):
    runner = BatchRunner(game, config)
    read = read_only_view(store.arrays)
    out = []
    for k in range(flushes):
        utility, visits = runner.run(read, k * n, n, 0.0)
        out.append(bytes(runner.take_delta(read, 3, 0, 0, k * n, n, k == flushes - 1, utility,
                                           visits, 0.01)))
    return out


def test_a_pass_merges_many_records_like_one_at_a_time(leduc, monkeypatch):
    config, game = leduc
    base = RegretStore(row_capacity=16)
    base.merge(*_new_rows(_records(config, game, base, 1, 2000)[0]))
    records = _records(config, game, base, 5)
    results = []
    # Leduc's passes are small: by default both threads' shard ranges run on the calling
    # thread (RowMerger.map, INLINE_ROWS); with INLINE_ROWS 0 the second runs on the pool.
    for inline_rows in (merge_mod.INLINE_ROWS, 0):
        monkeypatch.setattr(merge_mod, "INLINE_ROWS", inline_rows)
        one, many = (RegretStore.copy_of(base.arrays) for _ in range(2))
        merger = RowMerger(2)
        try:
            for record in records:
                arena = RecordArena()
                arena.add(record, 0)
                assert merge_arena(one, merger, arena, -5.0, game=game).tolist() == [0]
            arena = RecordArena(capacity=64)
            for record in records:
                arena.add(record, 0)
            assert merge_arena(many, merger, arena, -5.0, game=game).tolist() == [0] * 5
        finally:
            merger.close()
        for a, b in zip(one.arrays, many.arrays):
            np.testing.assert_array_equal(a, b)
        assert not np.array_equal(one.arrays.regrets, base.arrays.regrets)
        results.append(many)
    for a, b in zip(results[0].arrays, results[1].arrays):
        np.testing.assert_array_equal(a, b)


def test_new_rows_of_a_pass_are_inserted_together_like_one_at_a_time(leduc):
    # Records made against an empty store hold only new rows, most of them in every record
    # (every flush sends all it touched).
    config, game = leduc
    config = config_mod.with_overrides(config, train={"hold_cold_rows": False})
    records = _records(config, game, RegretStore(row_capacity=16), 4, 30)
    counts = [decode_delta(r)["keys"].size for r in records]
    distinct = set().union(*(decode_delta(r)["keys"].tolist() for r in records))
    assert min(counts) > 0 and sum(counts) > len(distinct)          # keys repeat
    one, many = RegretStore(row_capacity=16), RegretStore(row_capacity=16)
    merger = RowMerger(1)
    try:
        for record in records:
            arena = RecordArena()
            arena.add(record, 0)
            assert merge_arena(one, merger, arena, None, game=game).tolist() == [0]
        arena = RecordArena()
        for record in records:
            arena.add(record, 0)
        assert merge_arena(many, merger, arena, None, game=game).tolist() == [0] * 4
    finally:
        merger.close()
    assert many.num_infosets == one.num_infosets == len(distinct)   # each key one row
    for a, b in zip(one.used(), many.used()):
        np.testing.assert_array_equal(a, b)


def _new_rows(record):
    msg = decode_delta(record)
    return msg["keys"], msg["num_actions"], msg["new_regrets"], msg["new_strategy"]


def test_a_failed_record_keeps_its_sources_later_records_out(leduc):
    config, game = leduc
    base = RegretStore(row_capacity=16)
    base.merge(*_new_rows(_records(config, game, base, 1, 2000)[0]))
    good = _records(config, game, base, 3)
    bad = bytearray(good[1])
    msg = decode_delta(good[1])
    assert msg["regret_offsets"].size
    pos = rk.DATA_AT                               # the first regret offset: not a row start
    bad[pos:pos + 4] = (int(msg["regret_offsets"][0]) + 1).to_bytes(4, "little")
    unknown = _with_unknown_key(good[2], game)
    store = RegretStore.copy_of(base.arrays)
    arena = RecordArena()
    for record, source in ((good[0], 0), (bytes(bad), 0), (good[2], 0), (good[2], 1),
                           (unknown, 2)):
        arena.add(record, source)
    merger = RowMerger(1)
    codes = merge_arena(store, merger, arena, None, game=game, by_source=True)
    assert codes[0] == 0 and codes[1] < 0 and codes[2] == AFTER_FAILURE and codes[3] == 0
    assert codes[4] == BAD_KEYS
    expected = RegretStore.copy_of(base.arrays)
    for record in (good[0], good[2]):
        one = RecordArena()
        one.add(record, 0)
        merge_arena(expected, merger, one, None)
    merger.close()
    np.testing.assert_array_equal(store.arrays.regrets, expected.arrays.regrets)
    np.testing.assert_array_equal(store.arrays.strategy_sum, expected.arrays.strategy_sum)


def _with_unknown_key(record, game):
    """The record with a new row whose key is no infoset of the game."""
    from holdem.delta.split import Group, SplitDelta

    msg = decode_delta(record)
    split = SplitDelta(
        Group(msg["regret_offsets"], msg["regrets"], msg["regret_cuts"]),
        Group(msg["strategy_offsets"], msg["strategy"], msg["strategy_cuts"]),
        np.array([10 ** 12], np.int64), np.array([2], np.int8),
        np.zeros(2, np.float32), np.zeros(2, np.float32))
    assert not game.keys_match(split.keys, split.num_actions)
    return bytes(encode_delta(3, 0, 0, 0, 200, False, 0.0, 1, 0.01, split))


def test_pending_batches_take_flushes_in_order():
    p = Pending(Batch(id=4, t0=1000, n=300, elapsed=0.0))
    assert p.check(1000, 100, False) is None
    batch = "does not continue batch 4 (1000..1299, 0 merged)"
    assert p.check(1100, 100, False) == f"flush of iterations 1100..1199 (last: False) {batch}"
    assert p.check(1000, 300, False) == f"flush of iterations 1000..1299 (last: False) {batch}"
    assert p.check(1000, 301, True) == f"flush of iterations 1000..1300 (last: True) {batch}"
    assert p.check(1000, 0, False) == f"flush of iterations 1000..999 (last: False) {batch}"
    assert p.check(1200, 100, True, merged=200) is None     # merged: as the merge pass counts
    p.merged = 100
    assert p.check(1100, 200, True) is None
    assert p.remainder() == Batch(id=4, t0=1100, n=200, elapsed=0.0)


@pytest.mark.parametrize("n,infosets,flush", [
    (11_000, 206_000, 5000),     # hunl_default: capped (more lag lost head-to-head)
    (2_880, 288, 700),           # Leduc: every row hot, so no coarser than 700
    (300, 288, 300),             # never more than the batch
    (11_000, 2_000, 2_000),      # one iteration per stored infoset in between
])
def test_two_workers_flush_by_the_store_size(n, infosets, flush):
    assert pair_flush(None, n, infosets) == flush
    assert pair_flush(64, n, infosets) == 64            # train.flush_iters decides when set


@pytest.mark.parametrize("workers,flush", [(1, None), (2, None), (3, 350), (4, 233), (8, 100),
                                           (15, 50), (64, 32)])
def test_flush_size_shrinks_with_the_worker_count(workers, flush):
    config = config_mod.default_for_game("leduc")
    assert flush_iterations(config, workers) == flush
    fixed = config_mod.with_overrides(config, train={"flush_iters": 64})
    assert flush_iterations(fixed, workers) == 64


# -- the cap on a worker's unmerged iterations --------------------------------------------------
@pytest.mark.parametrize("workers,cap", [(2, 20_000), (3, 10_000), (15, 1_428), (63, 322),
                                         (1_000, 32)])
def test_the_unmerged_cap_shares_one_budget_among_the_other_workers(workers, cap):
    config = config_mod.default_for_game("leduc")
    assert unmerged_cap(config, workers) == cap
    fixed = config_mod.with_overrides(config, train={"max_unmerged_iters": 500})
    assert unmerged_cap(fixed, workers) == 500


def _wait_of(conn):
    inbox = ring.Inbox()
    inbox.read(0, conn.fileno())
    assert not inbox.heap.count and not inbox.order        # a wait is neither record nor ready
    return inbox.waits[0]


def test_a_worker_past_its_cap_waits_on_its_pipe_for_a_go():
    main, worker = mp.Pipe(duplex=True)
    published = [0]                    # what the main process published in the worker's ring
    gate = UnmergedGate(100, worker, merged=lambda: published[0])
    try:
        assert gate.size(250) == 100                       # a flush is cut to the cap
        gate.admit(60)                                     # 60 unmerged: within the cap
        gate.sent(60)
        published[0] = 50
        gate.admit(90)                                     # 10 + 90: within, no message
        gate.sent(90)
        assert gate.waits == 0 and not main.poll(0)
        # 150 sent, 50 merged, 30 more wanted: it needs 80 merged. The main process has
        # queued a batch for it (kept for later, in order) and then the go.
        batch = protocol.encode_request(7, 0, 10, 0.0)
        main.send_bytes(batch)
        main.send_bytes(protocol.encode_go(80))
        gate.admit(30)
        assert gate.waits == 1
        need, since = _wait_of(main)
        assert need == 80 and 0 < since <= time.monotonic_ns()
        assert gate.next_request() == batch and gate.next_request() is None
        gate.sent(30)
        published[0] = 180                                 # merged since: no wait
        gate.admit(100)
        assert gate.waits == 1 and not main.poll(0)
        gate.sent(100)
        main.send_bytes(protocol.encode_stop())            # a stop ends a wait
        with pytest.raises(Stopped):
            gate.admit(100)
    finally:
        main.close()
        worker.close()


def test_a_slow_main_process_holds_workers_to_the_cap_and_counts_their_waits(
        tmp_path, monkeypatch, capsys):
    """The main process sleeps in every merge pass (it is behind); workers flushing every 100
    iterations under a cap of 300 wait for it: no pass merges more than 300 iterations of one
    worker, the waits are counted, on the merge line and in TensorBoard."""
    from holdem import training
    from holdem.runtime import backends, process

    monkeypatch.setenv("HOLDEM_SHM_DIR", str(tmp_path / "shm"))
    (tmp_path / "shm").mkdir()
    merge_pass = process.merge_pass

    def slow(*args, **kwargs):
        time.sleep(0.02)
        return merge_pass(*args, **kwargs)

    monkeypatch.setattr(process, "merge_pass", slow)
    config = config_mod.with_overrides(
        config_mod.default_for_game("leduc"),
        train={"iters": 60_000, "num_workers": 2, "flush_iters": 100, "max_unmerged_iters": 300,
               "tensorboard": True, "log_interval": 0.2, "eval_interval": 1000.0})
    game = make_game(config)
    executor = process.ProcessExecutor(game, config, 2, make_pool=backends.make_pool)
    scalars = []
    tick = executor.scalars
    monkeypatch.setattr(executor, "scalars", lambda: scalars.append(tick()) or scalars[-1])
    result = training.train(config, tmp_path / "run", executor=executor)
    assert result.iterations == 60_000
    s = executor.stats
    assert executor.cap == 300
    assert 0 < executor.unmerged_seen <= 300                 # the cap held
    assert s["unmerged_waits"] > 10 and s["unmerged_wait_seconds"] > 0
    assert s["delta_iters"] == 60_000 and s["restarts"] == 0
    line = [x for x in capsys.readouterr().err.splitlines() if x.startswith("merge:")][-1]
    assert (f"unmerged iterations capped at 300 a worker: {s['unmerged_waits']:,} waits"
            in line), line
    assert scalars and all({"train/unmerged_waits", "train/unmerged_wait_frac",
                            "train/unmerged_iters_max"} <= set(x) for x in scalars)
    assert sum(x["train/unmerged_waits"] for x in scalars) > 0
    assert max(x["train/unmerged_iters_max"] for x in scalars) <= 300


def test_the_flush_pacer_grows_flushes_for_the_records_cost_not_for_a_pass_fixed_cost(
        tmp_path, monkeypatch):
    """Three Leduc workers (flushes of 350 iterations) beside a main process that spends 3 ms
    more in each pass: where the time goes to merging the records (merge_pass), the pacer
    raises their flushes (far above 350); where it goes to the loop around the merge -- the
    pass's fixed cost, which more records a pass would share -- it raises them far less (not
    at all on a quiet machine)."""
    from holdem import training
    from holdem.runtime import backends, process

    monkeypatch.setenv("HOLDEM_SHM_DIR", str(tmp_path / "shm"))
    (tmp_path / "shm").mkdir()
    config = config_mod.with_overrides(config_mod.default_for_game("leduc"),
                                       train={"iters": 150_000, "num_workers": 3})
    game = make_game(config)

    def slowed(name):
        executor = process.ProcessExecutor(game, config, 3, make_pool=backends.make_pool)
        if name == "records":
            merge_pass = process.merge_pass
            monkeypatch.setattr(process, "merge_pass", lambda *a, **k: (
                time.sleep(0.003), merge_pass(*a, **k))[1])
        else:
            check = executor._check_hung
            monkeypatch.setattr(executor, "_check_hung", lambda: (time.sleep(0.003), check()))
        training.train(config, tmp_path / name, progress=False, executor=executor)
        monkeypatch.undo()
        monkeypatch.setenv("HOLDEM_SHM_DIR", str(tmp_path / "shm"))
        return executor.flushes.pacer.highest

    assert flush_iterations(config, 3) == 350
    records, fixed = slowed("records"), slowed("pass")
    # Quiet: floors of 3,939 and 50; beside other tests (a loaded machine stretches the merge
    # passes too) 4,987 and 887; pacing on the busy time: 5,866 and 6,315.
    assert records > 1_000 and records > 3 * fixed, (records, fixed)


def test_strategy_held_across_batches_reaches_the_final_checkpoint(tmp_path, monkeypatch):
    """Workers holding their strategy updates across batches for longer than the run
    (train.hold_strategy_seconds 1000) send them with their last batch, which finds no request
    waiting: the final checkpoint's strategy sums weigh what an in-process run's do, within
    what runs differ by. (Unweighted, each strategy update adds 1 to its row's sums: a
    worker's lost hold would take thousands.)"""
    from holdem import checkpoint as ckpt
    from holdem import training

    monkeypatch.setenv("HOLDEM_SHM_DIR", str(tmp_path / "shm"))
    (tmp_path / "shm").mkdir()
    config = config_mod.with_overrides(config_mod.default_for_game("leduc"),
                                       solver={"weighting": "none"}, train={"iters": 60_000})

    def mass(run, **train):
        training.train(config_mod.with_overrides(config, train=train), tmp_path / run,
                       progress=False)
        checkpoint = ckpt.load(ckpt.resolve(tmp_path / run))
        return float(ckpt.store_from_checkpoint(checkpoint, make_game(config)).arrays
                     .strategy_sum.sum())

    serial = mass("serial")
    held = mass("held", num_workers=2, hold_strategy_seconds=1000.0)
    assert serial > 10 * 60_000                  # ~14 strategy updates an iteration
    # Runs differ (2 workers' sampling follows what is merged when): 0.970-1.034 in four runs
    # on 2026-11-29. A worker's lost hold would lose about half the mass, none sent 99%.
    assert abs(held / serial - 1) < 0.10, (held, serial)


def test_workers_follow_the_store_as_it_grows_during_a_run(tmp_path, monkeypatch):
    """Leduc's store starts at 144 rows and doubles a few times in its first thousands of
    iterations, while two workers each have two batches of 2,000 iterations in hand: their
    records show them reading each new generation from their next flush (counted as the
    executor's ``store_follows``), the generations both workers have moved past are unlinked
    while the run goes on, and the run ends complete, leaving no shared-memory file."""
    from holdem import training
    from holdem.runtime.backends import make_executor

    monkeypatch.setenv("HOLDEM_SHM_DIR", str(tmp_path / "shm"))
    (tmp_path / "shm").mkdir()
    config = config_mod.with_overrides(config_mod.default_for_game("leduc"), train={
        "iters": 20_000, "num_workers": 2, "batch_size": 2_000, "flush_iters": 100})
    game = make_game(config)
    executor = make_executor(game, config)
    mapped = []                         # the store generations still mapped at the run's end
    close = executor.close
    monkeypatch.setattr(executor, "close", lambda: (
        mapped.extend(sorted(executor.allocator.segments)), close()))
    result = training.train(config, tmp_path / "run", progress=False, executor=executor)
    assert result.iterations == 20_000
    assert executor.stats["store_follows"] >= 2, executor.stats
    assert executor.stats["restarts"] == 0          # every record merged, none refused
    newest = executor.allocator.generation
    assert newest >= 2 and mapped[-1] == newest and mapped[0] > 0, (newest, mapped)
    assert not list((tmp_path / "shm").iterdir())


# -- rings sized from the records -----------------------------------------------------------------
def test_rings_are_sized_from_the_largest_record():
    assert ring.ring_bytes_for(None) == ring.DEFAULT_BYTES
    assert ring.ring_bytes_for(100_000) == ring.DEFAULT_BYTES       # small records: the least
    assert ring.ring_bytes_for(10_000_000) == 39 << 20              # 4 records, whole MiB
    assert ring.ring_bytes_for(10 ** 9) == ring.MAX_BYTES


@pytest.mark.slow
def test_hunl_blueprint_records_fit_their_ring_at_15_workers_flush(tmp_path):
    """15 workers on hunl_blueprint flush at most the cap's 1,428 iterations (the pacer's floor
    rises towards it: the 2-core figures put their paced records at 4.2 MB, over the 2 MB an
    8 MB ring took). The ring the executor sizes from its probe takes that record, and as many
    50-iteration records as the cap lets a worker leave unmerged, against a warmed store:
    nothing goes through the pipe."""
    from holdem.runtime.process import ProcessExecutor
    from holdem.delta.merge import merge_one

    config = config_mod.with_overrides(config_mod.load(ROOT / "configs" / "hunl_blueprint.yaml"),
                                       train={"num_workers": 15})
    game = make_game(config)
    executor = ProcessExecutor(game, config, 15, pool=object())
    executor.prepare(None)
    cap = unmerged_cap(config, 15)
    assert cap == 1_428 and largest_flush(config, 15) == cap
    size = ring.ring_bytes_for(executor.record_bytes)

    store, merger = RegretStore(game.initial_rows), RowMerger()
    runner = BatchRunner(game, config)
    t0 = 0
    for _ in range(8):                                   # a store warmed by 8 x 1,000 iterations
        read = read_only_view(store.arrays)
        merge_one(store, merger, runner.flush(read, 0, 0, 0, t0, 1000, True, 0.0), -1e30,
                  game=game)
        t0 += 1000
    read = read_only_view(store.arrays)
    largest = runner.flush(read, 0, 0, 0, t0, cap, True, 0.0)
    small = [runner.flush(read, 0, 0, 0, t0 + cap + 50 * k, 50, True, 0.0)
             for k in range(cap // 50)]
    assert ring.DEFAULT_BYTES // 4 < len(largest) <= executor.record_bytes <= size // 4
    rings = ring.Rings(1, size, allocator=shm.SharedAllocator(tmp_path))
    writer = ring.RingWriter(rings.descriptor, 0)
    try:
        assert all(writer.put(record) is not None for record in small)   # a backlog of the cap
        rings.consumed(0, writer.position)
        assert writer.put(largest) is not None
    finally:
        writer.close()
        rings.close()
    # With flushes fixed at 50 (train.flush_iters) the largest record is a 50-iteration one,
    # but the cap still lets 28 of them wait in a ring: the ring takes them and a record that
    # carries held strategy rows (up to an eighth of the ring) besides. (Sized from the
    # 50-iteration record alone it was 8 MB, and records went through the pipe.)
    fixed = config_mod.with_overrides(config, train={"flush_iters": 50})
    executor = ProcessExecutor(game, fixed, 15, pool=object())
    executor.prepare(None)
    size = ring.ring_bytes_for(executor.record_bytes)
    rings = ring.Rings(1, size, allocator=shm.SharedAllocator(tmp_path))
    writer = ring.RingWriter(rings.descriptor, 0)
    try:
        assert all(writer.put(record) is not None for record in small)
        assert writer.put(bytes(size // 8)) is not None
    finally:
        writer.close()
        rings.close()


def test_a_ring_for_fixed_flushes_holds_the_caps_backlog_twice_over():
    # (train.flush_iters set: the probe is close to the real records)
    from holdem.runtime.worker import record_bytes_at, ring_record_bytes

    paced = config_mod.default_for_game("leduc")
    config = config_mod.with_overrides(paced, train={"flush_iters": 50})
    game = make_game(config)
    size = record_bytes_at(game, config, 50)
    assert ring_record_bytes(game, config, 50, None) == size            # no cap: the record
    assert ring_record_bytes(game, config, 50, 50) == size              # flushes of the cap
    waiting = -(-1_428 // 50)                                           # 29 records may wait
    assert ring_record_bytes(game, config, 50, 1_428) == 2 * waiting * size // ring.RECORDS_PER_RING
    # Paced or two workers' flushes: the probe against an empty store, as before.
    assert ring_record_bytes(game, paced, 50, 1_428) == size


@pytest.mark.parametrize("with_rings", [True, False])
def test_a_ready_message_of_a_notes_size_is_kept_with_or_without_rings(rings, with_rings):
    """A ready message whose pid takes two bytes is exactly a note's size: read into an inbox
    (as the process pool reads its pipes, or as Ray's pool hands over what its actors returned,
    reserve then received) it is a frame for the heap, not a note nor a wait."""
    ready = protocol.encode_ready(1, 300)
    assert len(ready) == ring.NOTE_SIZE
    inbox = ring.Inbox(rings if with_rings else None)
    view = inbox.reserve(1, len(ready))
    view[:] = ready
    inbox.received(1, view)
    assert inbox.order == [("heap", 0)] and not inbox.waits and not inbox.bad_notes
    assert bytes(inbox.heap.record(0)) == ready
