"""Offset-addressed deltas: the row-start bitmap, splitting a worker's delta into shards, checking
offsets and merging shards on threads, against plain numpy references."""

import threading

import numpy as np
import pytest

from holdem.delta import merge as merge_mod
from holdem.delta import shard_kernels as dk
from holdem.delta.merge import RowMerger
from holdem.delta.split import DeltaSplitter, Group, HeldStrategy
from holdem.store import kernels
from holdem.store.store import RegretStore, read_only, read_only_view


# -- two groups merged by hand: the shard kernels as a merge pass calls them for each record
# (holdem.delta.merge), without the record around them
def _row_lengths(arrays, offsets):
    """num_actions of the rows of the store ``arrays`` starting at ``offsets`` (-1 for an
    offset that starts no row)."""
    rows = int(arrays.meta[0])
    length = dict(zip(arrays.row_offset[:rows].tolist(), arrays.row_num_actions[:rows].tolist()))
    return np.array([length.get(int(off), -1) for off in offsets], np.int64)


def group_of(arrays, offsets, values):
    """The :class:`Group` of rows named by ``offsets`` (value offsets of the store ``arrays``'
    rows, any order) with ``values`` (each row's, in that order): what a worker would send."""
    offsets = np.asarray(offsets, np.int64)
    values = np.asarray(values, np.float32)
    num_actions = _row_lengths(arrays, offsets)
    assert (num_actions >= 0).all(), "an offset that does not start a row of the store"
    starts = np.concatenate(([0], np.cumsum(num_actions)))
    assert starts[-1] == values.shape[0]
    shard = (offsets >> dk.BLOCK_SHIFT) % dk.SHARDS
    order = np.argsort(shard, kind="stable")
    picks = [np.arange(starts[i], starts[i + 1]) for i in order]
    sorted_values = values[np.concatenate(picks)] if picks else values[:0]
    cuts = np.zeros((2, dk.SHARDS + 1), np.int64)
    np.add.at(cuts[0], shard + 1, 1)
    np.add.at(cuts[1], shard + 1, num_actions)
    np.cumsum(cuts, axis=1, out=cuts)
    return Group(offsets[order].astype(np.uint32), sorted_values, cuts)


def empty_group():
    return Group(np.zeros(0, np.uint32), np.zeros(0, np.float32),
                 np.zeros((2, dk.SHARDS + 1), np.int64))


def _normalized(group, what):
    """The group as the kernels take it (read-only uint32 offsets, float32 values, int64
    cuts), its shape and cuts checked."""
    offsets, values, cuts = group
    offsets, values, cuts = np.asarray(offsets), np.asarray(values), np.asarray(cuts)
    if offsets.ndim != 1 or values.ndim != 1 or cuts.shape != (2, dk.SHARDS + 1):
        raise ValueError(f"malformed delta: {what} offsets and values must be 1-D and "
                         f"cuts [2, {dk.SHARDS + 1}]")
    if values.dtype != np.float32:
        raise ValueError(f"malformed delta: {what} values must be float32")
    if offsets.dtype != np.uint32:
        if offsets.size and (offsets.min() < 0 or offsets.max() > dk.MAX_OFFSET):
            raise ValueError(f"malformed delta: {what}: an offset outside the store's "
                             "entries")
        offsets = offsets.astype(np.uint32)
    cuts = cuts.astype(np.int64, copy=False)
    if (cuts[:, 0] != 0).any() or (np.diff(cuts, axis=1) < 0).any() or (
            cuts[0, -1] != offsets.shape[0] or cuts[1, -1] != values.shape[0]):
        raise ValueError(f"malformed delta: {what} cuts do not split its "
                         f"{offsets.shape[0]} rows and {values.shape[0]} values")
    return Group(read_only(np.ascontiguousarray(offsets)),
                 read_only(np.ascontiguousarray(values)), read_only(cuts))


def merge_groups(merger, arrays, regret, strategy, regret_floor=None):
    """Check both :class:`Group`s against the store ``arrays`` on ``merger``'s threads and,
    when every row is a row of it in its shard and the values match the rows' sizes and are
    finite, add the values (regrets clamped at ``regret_floor``); else raise ``ValueError``
    with nothing written."""
    groups = [_normalized(g, what) for g, what in ((regret, "regret"), (strategy, "strategy"))]
    num_actions = [np.empty(max(16, g.offsets.shape[0]), np.int8) for g in groups]
    checks = merger.map(lambda lo, hi: [
        dk.check_shards(arrays, g.offsets, g.values.view(np.uint32), g.cuts, lo, hi, na)
        for g, na in zip(groups, num_actions)])
    for (lo, hi), codes in zip(merger.ranges, checks):
        for what, code in zip(("regret", "strategy"), codes):
            if code != 0:
                raise ValueError(f"malformed delta: {what} shards {lo}..{hi - 1}: "
                                 f"{merge_mod.reason(code)}")
    floor = -np.inf if regret_floor is None else float(regret_floor)
    targets = ((arrays.regrets, floor), (arrays.strategy_sum, -np.inf))
    merger.map(lambda lo, hi: [dk.add_shards(target, g.offsets, na, g.values, g.cuts, lo, hi,
                                             clamp, 1.0)
                               for g, na, (target, clamp) in zip(groups, num_actions, targets)])


def _store(num_rows, seed=0, row_capacity=16, max_actions=6):
    """A store of ``num_rows`` random keys with 1..max_actions actions and random values."""
    rng = np.random.default_rng(seed)
    keys = rng.choice(1 << 40, size=num_rows, replace=False).astype(np.int64)
    num_actions = rng.integers(1, max_actions + 1, size=num_rows).astype(np.int8)
    store = RegretStore(row_capacity=row_capacity)
    m = int(num_actions.sum())
    store.merge(keys, num_actions, rng.normal(size=m).astype(np.float32), rng.random(m))
    return store, keys, num_actions


def _offsets_of(store, keys):
    return np.array([kernels.find_entry_py(store.arrays, np.int64(k)) >> 8 for k in keys])


def _random_delta(store, rows, seed=1):
    """A delta of the store's rows ``rows`` (in that order), with random float32 values."""
    rng = np.random.default_rng(seed)
    _, num_actions, offsets, _, _ = store.used()
    offsets, num_actions = offsets[rows], num_actions[rows].astype(np.int64)
    m = int(num_actions.sum())
    return (offsets, num_actions, rng.normal(size=m).astype(np.float32),
            rng.random(m).astype(np.float32))


def _merge(store, offsets, regrets, strategy, threads=1, floor=None):
    """Merge the rows ``offsets`` with these values into both groups, as a worker's delta."""
    merger = RowMerger(threads)
    try:
        merge_groups(merger, store.arrays, group_of(store.arrays, offsets, regrets),
                     group_of(store.arrays, offsets, strategy), regret_floor=floor)
    finally:
        merger.close()


def _reference_add(store, offsets, num_actions, regrets, strategy, floor=-np.inf):
    """Plain numpy: what adding the delta must leave in (regrets, strategy_sum)."""
    r = store.arrays.regrets.copy()
    s = store.arrays.strategy_sum.copy()
    pos = 0
    for off, na in zip(offsets, num_actions):
        idx = slice(off, off + na)
        r[idx] = np.maximum(r[idx] + regrets[pos:pos + na], np.float32(floor))
        s[idx] += strategy[pos:pos + na].astype(np.float64)
        pos += na
    return r, s


def _snapshot(store):
    return [a.copy() for a in store.arrays]


def _assert_unchanged(store, before):
    for name, old, new in zip(store.arrays._fields, before, store.arrays):
        np.testing.assert_array_equal(old, new, err_msg=name)


# -- the row-start bitmap ---------------------------------------------------------------------
def test_row_start_bitmap_gives_every_rows_length_across_growth():
    store, keys, num_actions = _store(3000, row_capacity=16)      # grew many times
    _, stored_na, offsets, _, _ = store.used()
    entries = store.num_entries
    bits = store.arrays.row_start
    lengths = [int(kernels.row_length_py(bits, np.int64(o), np.int64(entries))) for o in offsets]
    assert lengths == [int(n) for n in stored_na]
    starts = set(offsets.tolist())
    assert all(kernels.is_row_start_py(bits, np.int64(o)) == (o in starts)
               for o in range(entries))


def test_cleared_store_forgets_row_starts():
    store, _, _ = _store(200)
    store.clear()
    assert not store.arrays.row_start.any()


# -- offsets survive growth -------------------------------------------------------------------
def test_offsets_survive_store_growth_and_merge_into_the_same_rows():
    store, keys, num_actions = _store(500, row_capacity=512)
    before = _offsets_of(store, keys)
    rows = np.arange(0, 500, 3)
    offsets, na, regrets, strategy = _random_delta(store, rows)
    # The store grows (a new table, value and bitmap arrays: another generation) after the
    # worker named its rows by offset.
    generation = store.arrays.regrets
    store.reserve(5000, 40000)
    assert store.arrays.regrets is not generation
    np.testing.assert_array_equal(_offsets_of(store, keys), before)
    expected = _reference_add(store, offsets, na, regrets, strategy)
    _merge(store, offsets, regrets, strategy)
    np.testing.assert_array_equal(store.arrays.regrets, expected[0])
    np.testing.assert_array_equal(store.arrays.strategy_sum, expected[1])


def test_offsets_survive_a_checkpoint_round_trip(tmp_path):
    from holdem import checkpoint as ckpt

    store, keys, _ = _store(800)
    ckpt.save(tmp_path / "c.ckpt", {"iterations": 1, "game": "x", "config": {}},
              ckpt.store_snapshot(store))
    restored = ckpt.store_from_checkpoint(ckpt.load(tmp_path / "c.ckpt"))
    np.testing.assert_array_equal(_offsets_of(restored, keys), _offsets_of(store, keys))


# -- merging shards on threads against numpy --------------------------------------------------
@pytest.mark.parametrize("threads", [1, 2, 3, 8, dk.SHARDS])
def test_threaded_merge_matches_numpy_reference(threads):
    store, _, _ = _store(40_000, max_actions=5)
    assert store.num_entries >> dk.BLOCK_SHIFT >= dk.SHARDS        # every shard has rows
    rows = np.random.default_rng(2).permutation(40_000)[:15_000]
    offsets, na, regrets, strategy = _random_delta(store, rows)
    expected = _reference_add(store, offsets, na, regrets, strategy, floor=-0.5)
    _merge(store, offsets, regrets, strategy, threads=threads, floor=-0.5)
    np.testing.assert_array_equal(store.arrays.regrets, expected[0])
    np.testing.assert_array_equal(store.arrays.strategy_sum, expected[1])


def test_a_group_is_partitioned_into_shards_by_block():
    store, _, _ = _store(40_000)
    assert store.num_entries >> dk.BLOCK_SHIFT >= dk.SHARDS        # every shard has rows
    offsets, na, regrets, _ = _random_delta(store, np.random.default_rng(6).permutation(40_000))
    group = group_of(store.arrays, offsets, regrets)
    assert group.offsets.dtype == np.uint32 and group.cuts.shape == (2, dk.SHARDS + 1)
    shards = (group.offsets.astype(np.int64) >> dk.BLOCK_SHIFT) % dk.SHARDS
    for s in range(dk.SHARDS):
        lo, hi = group.cuts[0, s], group.cuts[0, s + 1]
        assert hi > lo and np.all(shards[lo:hi] == s)
    assert group.cuts[0, -1] == offsets.size and group.cuts[1, -1] == regrets.size


def test_a_shard_range_adds_only_its_rows():
    store, _, _ = _store(20_000)
    rows = np.random.default_rng(6).permutation(20_000)[:9000]      # any order
    offsets, na, regrets, strategy = _random_delta(store, rows)
    first, last = 5, 11
    mine = np.isin((offsets >> dk.BLOCK_SHIFT) % dk.SHARDS, np.arange(first, last))
    starts = np.concatenate(([0], np.cumsum(na)))[:-1]
    pick = np.concatenate([np.arange(s, s + n) for s, n in zip(starts[mine], na[mine])])
    expected = _reference_add(store, offsets[mine], na[mine], regrets[pick], strategy[pick])
    for values, target in ((regrets, store.arrays.regrets),
                           (strategy, store.arrays.strategy_sum)):
        group = _normalized(group_of(store.arrays, offsets, values), "test")
        num_actions = np.zeros(offsets.size, np.int8)
        assert dk.check_shards(store.arrays, group.offsets, group.values.view(np.uint32),
                               group.cuts, 0, dk.SHARDS, num_actions) == 0
        dk.add_shards(target, group.offsets, num_actions, group.values, group.cuts, first,
                      last, -np.inf, 1.0)
    np.testing.assert_array_equal(store.arrays.regrets, expected[0])
    np.testing.assert_array_equal(store.arrays.strategy_sum, expected[1])


# -- malformed offsets are rejected before anything is written --------------------------------
def _bad(store, kind):
    """A (regret, strategy) pair of groups of the store with one defect ``kind``."""
    offsets, na, regrets, strategy = _random_delta(store, np.arange(0, 5000, 5))
    regret, strat = (group_of(store.arrays, offsets, v) for v in (regrets, strategy))
    r_off, r_val, r_cuts = (a.copy() for a in regret)
    s_val = strat.values.copy()
    last = int(r_cuts[0, -1]) - 1                    # the last row (of the last shard)
    if kind == "past-the-end":
        r_off = r_off.astype(np.int64)
        r_off[last] = store.num_entries
    elif kind == "negative":
        r_off = r_off.astype(np.int64)
        r_off[3] = -1
    elif kind == "huge":
        r_off = r_off.astype(np.int64)
        r_off[0] = 1 << 62
    elif kind == "inside-a-row":
        i = int(np.argmax(na[np.argsort((offsets >> dk.BLOCK_SHIFT) % dk.SHARDS,
                                        kind="stable")] > 1))
        r_off[i] += 1
    elif kind == "wrong-shard":                      # a row moved into the next shard
        s = int(np.argmax(np.diff(r_cuts[0]) > 0))
        r_cuts[0, s + 1] -= 1
        r_cuts[1, s + 1] -= int(na[(offsets >> dk.BLOCK_SHIFT) % dk.SHARDS == s][-1])
    elif kind == "shard-count":                      # a shard claims a value of the next
        s = int(np.argmax(np.diff(r_cuts[0]) > 0))
        r_cuts[1, s + 1] += 1
    elif kind == "decreasing-cuts":
        r_cuts[0, 3], r_cuts[0, 4] = r_cuts[0, 4] + 1, r_cuts[0, 3]
    elif kind == "too-few-values":
        r_val, s_val = r_val[:-1], s_val[:-1]
    elif kind == "too-many-values":
        r_val, s_val = np.append(r_val, np.float32(1)), np.append(s_val, np.float32(1))
    elif kind == "nan":
        r_val[7] = np.nan
    elif kind == "inf-strategy":
        s_val[0] = np.inf
    elif kind == "float64-values":
        r_val = r_val.astype(np.float64)
    return Group(r_off, r_val, r_cuts), Group(strat.offsets, s_val, strat.cuts)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("kind", ["past-the-end", "negative", "huge", "inside-a-row",
                                  "wrong-shard", "shard-count", "decreasing-cuts",
                                  "too-few-values", "too-many-values", "nan", "inf-strategy",
                                  "float64-values"])
def test_malformed_offsets_are_rejected_and_never_merged(kind, threads):
    store, _, _ = _store(5000)
    regret, strategy = _bad(store, kind)
    good_regret = group_of(store.arrays, *_random_delta(store, np.arange(1, 5000, 5))[::2])
    before = _snapshot(store)
    merger = RowMerger(threads)
    try:
        with pytest.raises(ValueError, match="malformed delta"):
            merge_groups(merger, store.arrays, regret, strategy)
        bad = strategy if kind == "inf-strategy" else regret
        with pytest.raises(ValueError, match="malformed delta"):   # as either group, and
            merge_groups(merger, store.arrays, good_regret, bad)    # after a good one
        with pytest.raises(ValueError, match="malformed delta"):
            merge_groups(merger, store.arrays, bad, empty_group())
    finally:
        merger.close()
    _assert_unchanged(store, before)


# -- the worker's split -----------------------------------------------------------------------
def test_split_delta_groups_each_shards_rows_by_number_of_actions_in_the_deltas_order():
    """Within a shard, rows go out by their number of actions (rows of NA_CLASSES actions or
    more together, last), and rows of one class in the order the delta holds them: the main
    process's add loop then runs as many times row after row. The merged store is the same
    whatever the order."""
    shared, keys, num_actions = _store(5000, seed=21, max_actions=2 * dk.NA_CLASSES)
    rng = np.random.default_rng(22)
    rows = rng.choice(5000, size=2000, replace=False)          # the delta's row order
    delta = RegretStore(row_capacity=16)
    m = int(num_actions[rows].sum())
    delta.merge(keys[rows], num_actions[rows], rng.normal(size=m).astype(np.float32),
                rng.random(m))
    split = DeltaSplitter().split(read_only_view(shared.arrays), delta.arrays)
    rank = {int(o): r for r, o in enumerate(_offsets_of(shared, keys[rows]).tolist())}
    for group in (split.regret, split.strategy):
        offsets = group.offsets.astype(np.int64)
        lengths = np.minimum(_row_lengths(shared.arrays, offsets), dk.NA_CLASSES)
        assert set(lengths.tolist()) == set(range(1, dk.NA_CLASSES + 1))
        for s in range(dk.SHARDS):
            lo, hi = group.cuts[0, s], group.cuts[0, s + 1]
            assert np.all(np.diff(lengths[lo:hi]) >= 0)
            for na in range(1, dk.NA_CLASSES + 1):
                ranks = [rank[o] for o in offsets[lo:hi][lengths[lo:hi] == na].tolist()]
                assert ranks == sorted(ranks)
    sample = keys[rows[:300]].tolist()
    before = {k: [v.copy() for v in shared.values_of(k)] for k in sample}
    merger = RowMerger(2)
    try:
        merge_groups(merger, shared.arrays, split.regret, split.strategy)
    finally:
        merger.close()
    for key in sample:
        for got, old, added in zip(shared.values_of(key), before[key], delta.values_of(key)):
            np.testing.assert_allclose(got, old + added.astype(np.float32), rtol=1e-6)


def test_split_delta_names_stored_rows_by_offset_and_new_rows_by_key():
    shared, keys, num_actions = _store(3000, seed=3)
    rng = np.random.default_rng(4)
    old = rng.choice(3000, size=900, replace=False)
    new_keys = np.arange(5, 205, dtype=np.int64) * 7919 + (1 << 45)    # not in the store
    new_na = rng.integers(1, 6, size=new_keys.size).astype(np.int8)
    delta = RegretStore(row_capacity=16)
    all_keys = np.concatenate([keys[old], new_keys])
    all_na = np.concatenate([num_actions[old], new_na])
    order = rng.permutation(all_keys.size)                      # first-visit order
    m = int(all_na.sum())
    delta.merge(all_keys[order], all_na[order], rng.normal(size=m).astype(np.float32),
                rng.random(m))
    split = DeltaSplitter().split(read_only_view(shared.arrays), delta.arrays)

    stored = sorted(_offsets_of(shared, keys[old]).tolist())
    for group in (split.regret, split.strategy):         # values all non-zero here
        assert sorted(group.offsets.tolist()) == stored
        assert group.offsets.dtype == np.uint32
        shards = (group.offsets.astype(np.int64) >> dk.BLOCK_SHIFT) % dk.SHARDS
        np.testing.assert_array_equal(np.searchsorted(group.cuts[0], np.arange(shards.size),
                                                      side="right") - 1, shards)
    assert sorted(split.keys.tolist()) == sorted(new_keys.tolist())
    row_offsets = shared.used()[2]
    for group, which in ((split.regret, 0), (split.strategy, 1)):
        offsets, values = group.offsets, group.values
        pos = 0                                # each stored row carries the delta's values
        for off in offsets.tolist():
            key = int(shared.arrays.row_key[np.searchsorted(row_offsets, off)])
            expected = delta.values_of(key)[which]
            na = expected.shape[0]
            np.testing.assert_array_equal(values[pos:pos + na], expected.astype(np.float32))
            pos += na
        assert pos == values.size
    pos = 0
    for key, na in zip(split.keys.tolist(), split.num_actions.tolist()):
        regrets, strategy = delta.values_of(key)
        np.testing.assert_array_equal(split.new_regrets[pos:pos + na], regrets)
        pos += na
    assert pos == split.new_regrets.size
    merger = RowMerger(2)                      # and the main side accepts it
    try:
        merge_groups(merger, shared.arrays, split.regret, split.strategy)
    finally:
        merger.close()


def _same_split(a, b):
    for x, y in ((a.regret, b.regret), (a.strategy, b.strategy)):
        for name in ("offsets", "values", "cuts"):
            np.testing.assert_array_equal(getattr(x, name), getattr(y, name))
    for name in ("keys", "num_actions", "new_regrets", "new_strategy"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def _copied(split):
    """A split's arrays copied out of the splitter's scratch."""
    import copy
    return copy.deepcopy(split)


def test_split_with_hints_matches_lookups_and_survives_bad_hints():
    shared, keys, num_actions = _store(3000, seed=6)
    rng = np.random.default_rng(7)
    old = rng.choice(3000, size=700, replace=False)
    new_keys = np.arange(3, 103, dtype=np.int64) * 7919 + (1 << 46)
    all_keys = np.concatenate([keys[old], new_keys])
    all_na = np.concatenate([num_actions[old], rng.integers(1, 6, 100).astype(np.int8)])
    delta = RegretStore(row_capacity=16)
    m = int(all_na.sum())
    delta.merge(all_keys, all_na, rng.normal(size=m).astype(np.float32), rng.random(m))
    read = read_only_view(shared.arrays)
    looked_up = _copied(DeltaSplitter().split(read, delta.arrays))

    keys_d, na_d, offsets_d = delta.used()[:3]
    hints = np.full(delta.arrays.regrets.shape[0], kernels.NOT_FOUND, np.int64)
    for key, off in zip(keys_d, offsets_d):
        hints[off] = kernels.find_entry_py(shared.arrays, np.int64(key))
    _same_split(DeltaSplitter().split(read, delta.arrays, hints), looked_up)
    # Hints that are missing, point at a row of another length, or stop short of the delta's
    # offsets are looked up instead: the split is the same.
    bad = hints.copy()
    bad[offsets_d[::3]] = kernels.NOT_FOUND
    bad[offsets_d[1::3]] = 0                    # offset 0, no actions
    _same_split(DeltaSplitter().split(read, delta.arrays, bad[:int(offsets_d[400])]), looked_up)


def test_a_workers_traversal_leaves_the_hints_its_split_uses():
    from holdem import config as config_mod
    from holdem.games import make_game
    from holdem.runtime.worker import BatchRunner

    config = config_mod.default_for_game("leduc")
    game = make_game(config)
    shared = RegretStore(row_capacity=16)            # half the infosets already stored
    warm = BatchRunner(game, config)
    warm.run(read_only_view(shared.arrays), 0, 40, 0.0)
    k, na, off, r, st = warm.delta.used()
    shared.merge(k[::2], na[::2], np.ones(int(na[::2].sum()), np.float32),
                 np.zeros(int(na[::2].sum())))
    read = read_only_view(shared.arrays)
    runner = BatchRunner(game, config, num_workers=2)
    runner.run(read, 1000, 300, 0.0)
    keys_d, _, offsets_d = runner.delta.used()[:3]
    hints = runner.workspace.read_entry
    for key, o in zip(keys_d, offsets_d):
        assert hints[o] == kernels.find_entry_py(shared.arrays, np.int64(key))
    hinted = _copied(runner.splitter.split(read, runner.delta.arrays, hints))
    assert 0 < hinted.keys.size < keys_d.size      # both stored and new rows
    _same_split(hinted, DeltaSplitter().split(read, runner.delta.arrays))


def test_split_leaves_each_row_out_of_the_group_it_does_not_update():
    shared, keys, num_actions = _store(400, seed=5)
    delta = RegretStore(row_capacity=16)
    m = int(num_actions[:300].sum())
    regrets = np.zeros(m, np.float32)
    strategy = np.zeros(m)
    ends = np.cumsum(num_actions[:300].astype(np.int64))
    starts = ends - num_actions[:300]
    for i, (a, b) in enumerate(zip(starts, ends)):
        if i % 3 == 0:
            regrets[a:b] = 1.0                 # traverser visits only
        elif i % 3 == 1:
            strategy[a:b] = 0.5                # other players' visits only
    # i % 3 == 2: no update at all (left out entirely)
    delta.merge(keys[:300], num_actions[:300], regrets, strategy)
    split = DeltaSplitter().split(read_only_view(shared.arrays), delta.arrays)
    offsets = _offsets_of(shared, keys[:300])
    assert sorted(split.regret.offsets.tolist()) == sorted(offsets[0::3].tolist())
    assert sorted(split.strategy.offsets.tolist()) == sorted(offsets[1::3].tolist())
    assert np.all(split.regret.values == 1.0) and np.all(split.strategy.values == 0.5)
    assert split.keys.size == 0


# -- a worker's cold rows ----------------------------------------------------------------------
class _Game:
    initial_rows = 16


def _flush_delta(rows):
    """A delta buffer holding ``rows``: {key: (regrets, strategy)} (one list per value)."""
    store = RegretStore(row_capacity=16)
    for key, (regrets, strategy) in rows.items():
        store.merge(np.array([key]), np.array([len(regrets)]), np.array(regrets, np.float32),
                    np.array(strategy, np.float64))
    return store


def _rows_of(store):
    """{key: (regrets, strategy)} of the rows holding a non-zero value."""
    keys, num_actions, offsets, regrets, strategy = store.used()
    out = {}
    for key, na, off in zip(keys, num_actions, offsets):
        r, s = regrets[off:off + na].tolist(), strategy[off:off + na].tolist()
        if any(r) or any(s):
            out[int(key)] = (r, s)
    return out


def test_cold_rows_wait_for_their_next_touch_or_the_batchs_last_flush():
    from holdem.delta.split import ColdRows

    cold = ColdRows(_Game())
    flushes = [{1: ([1.0, 2.0], [0.0, 0.0]), 2: ([5.0], [1.0])},     # both first touched: held
               {1: ([3.0, 4.0], [0.5, 0.5]), 3: ([0.0, 7.0], [0.0, 0.0])},
               {1: ([1.0, 1.0], [0.0, 0.0]), 2: ([2.0], [0.0])},     # 2: its second touch
               {4: ([9.0], [9.0])}]                                    # the last flush
    sent = []
    for k, rows in enumerate(flushes):
        delta = _flush_delta(rows)
        cold.route(delta, last=k == len(flushes) - 1)
        sent.append(_rows_of(delta))
    assert sent[0] == {}
    assert sent[1] == {1: ([4.0, 6.0], [0.5, 0.5])}        # hot: with what flush 0 held
    assert sent[2] == {1: ([1.0, 1.0], [0.0, 0.0]), 2: ([7.0], [1.0])}
    assert sent[3] == {3: ([0.0, 7.0], [0.0, 0.0]), 4: ([9.0], [9.0])}
    assert cold.flush == 0 and _rows_of(cold.store) == {}      # nothing held
    # The next batch goes on where this one ended: row 4 (touched by the last flush) is hot.
    delta = _flush_delta({4: ([1.0], [0.0]), 5: ([2.0], [0.0])})
    cold.route(delta, last=False)
    assert _rows_of(delta) == {4: ([1.0], [0.0])}


def test_cold_rows_send_every_value_once_over_a_batch():
    from holdem.delta.split import ColdRows

    rng = np.random.default_rng(3)
    cold = ColdRows(_Game())
    total = {}
    sent = {}
    for k in range(40):                     # rows 0..9 hot, the others touched now and then
        keys = set(range(10)) | set(rng.choice(np.arange(10, 3000), size=60).tolist())
        rows = {int(key): (rng.normal(size=3).tolist(), rng.random(3).tolist()) for key in keys}
        for key, (r, s) in rows.items():
            t = total.setdefault(key, np.zeros((2, 3)))
            t += np.float32([r, s])
        delta = _flush_delta(rows)
        cold.route(delta, last=k == 39)
        for key, (r, s) in _rows_of(delta).items():
            t = sent.setdefault(key, np.zeros((2, 3)))
            t += np.float32([r, s])
        if 0 < k < 39:
            assert set(range(10)) <= set(_rows_of(delta))   # hot rows go every flush
    assert sent.keys() == total.keys()
    for key in total:
        np.testing.assert_allclose(sent[key], total[key], rtol=1e-5, atol=1e-5)


def _group_rows(shared, group):
    """{offset: values} of a Group of ``shared``'s rows."""
    out, pos = {}, 0
    lengths = _row_lengths(shared.arrays, group.offsets)
    for off, na in zip(group.offsets.tolist(), lengths.tolist()):
        out[off] = group.values[pos:pos + na].astype(np.float64)
        pos += na
    assert pos == group.values.size
    return out


def test_held_strategy_goes_out_once_a_batch_sorted_and_summed():
    """Flushes of a batch send their regret updates and hold the strategy updates of stored
    rows; the batch's last flush sends every held row once, with the batch's sums, sorted by
    shard, then by number of actions and offset (the main process's order); new rows go out at
    once."""

    shared, keys, num_actions = _store(4000, seed=11)
    read = read_only_view(shared.arrays)
    rng = np.random.default_rng(12)
    held, splitter = HeldStrategy(), DeltaSplitter()
    plain = DeltaSplitter()
    total, sent = {}, {}
    for k in range(12):
        rows = rng.choice(4000, size=300, replace=False)
        new_key = np.int64((1 << 45) + k)              # one row new to the store each flush
        delta = RegretStore(row_capacity=16)
        na = np.concatenate([num_actions[rows], [3]]).astype(np.int8)
        m = int(na.sum())
        delta.merge(np.concatenate([keys[rows], [new_key]]), na,
                    rng.normal(size=m).astype(np.float32), rng.random(m))
        reference = plain.split(read, delta.arrays)
        for off, values in _group_rows(shared, reference.strategy).items():
            total[off] = total.get(off, 0.0) + values.astype(np.float32)
        last = k == 11
        split = splitter.split(read, delta.arrays, held=held, release=last)
        _same_split_regrets(split, reference)
        assert split.keys.tolist() == [new_key]           # new rows are not held
        if not last:
            assert split.strategy.offsets.size == 0 and held.rows > 0
            continue
        assert held.rows == 0 and held.nbytes == 0
        assert not held.values.any() and not held.num_actions.any()
        offsets = split.strategy.offsets.astype(np.int64)
        shards = (offsets >> dk.BLOCK_SHIFT) % dk.SHARDS
        lengths = np.minimum(_row_lengths(shared.arrays, offsets), dk.NA_CLASSES)
        order = np.lexsort((offsets, lengths, shards))
        np.testing.assert_array_equal(order, np.arange(offsets.size))   # sorted
        np.testing.assert_array_equal(np.searchsorted(split.strategy.cuts[0],
                                                      np.arange(shards.size),
                                                      side="right") - 1, shards)
        sent = _group_rows(shared, split.strategy)
    assert sent.keys() == total.keys()
    for off in total:
        np.testing.assert_allclose(sent[off], total[off], rtol=1e-5, atol=1e-6)
    merger = RowMerger(2)                  # and the main side accepts the batch's last record
    try:
        merge_groups(merger, shared.arrays, split.regret, split.strategy)
    finally:
        merger.close()


def test_held_strategy_goes_out_a_room_at_a_time_round_the_shards():
    """A partial release (HeldStrategy.release with max_bytes) sends rows in the order the main
    process adds them, within the bytes, starting where the last one stopped: rows that keep
    coming back in the first shard (as much as a release takes) do not keep the other shards'
    rows held; every held value goes out once."""
    shared, keys, num_actions = _store(4000, seed=13)
    read = read_only_view(shared.arrays)
    rng = np.random.default_rng(14)
    held, splitter = HeldStrategy(), DeltaSplitter()

    def hold(rows):
        delta = RegretStore(row_capacity=16)
        na = num_actions[rows].astype(np.int8)
        m = int(na.sum())
        delta.merge(keys[rows], na, rng.normal(size=m).astype(np.float32), rng.random(m))
        total = _group_rows(shared, DeltaSplitter().split(read, delta.arrays).strategy)
        splitter.split(read, delta.arrays, held=held, release=False)
        return total

    everything = hold(np.arange(4000))
    shard_of = {off: (off >> dk.BLOCK_SHIFT) % dk.SHARDS for off in everything}
    in_first = np.flatnonzero(_offsets_of(shared, keys) >> dk.BLOCK_SHIFT == 0)
    room = 4 * sum(1 + v.size for off, v in everything.items() if shard_of[off] == 0)
    assert len(set(shard_of.values())) >= 3 and in_first.size > 100
    sent, first_sent, portions = {}, {}, 0
    while held.rows:
        group = held.release(splitter, max_bytes=room)
        portions += 1
        got = group.offsets.astype(np.int64)
        assert 0 < 4 * (got.size + group.values.size) <= room
        lengths = np.minimum(_row_lengths(shared.arrays, got), dk.NA_CLASSES)
        order = np.lexsort((got, lengths, (got >> dk.BLOCK_SHIFT) % dk.SHARDS))
        np.testing.assert_array_equal(order, np.arange(got.size))       # the order sent
        for off, values in _group_rows(shared, group).items():
            sent[off] = sent.get(off, 0.0) + values
            first_sent.setdefault(off, portions)
        if portions <= 12:                       # shard 0's rows come back, a release's worth
            for off, values in hold(in_first).items():
                everything[off] = everything[off] + values
        assert portions < 100
    assert sent.keys() == everything.keys()
    for off in everything:
        np.testing.assert_allclose(sent[off], everything[off], rtol=1e-5, atol=1e-5)
    # Starting each release at shard 0 would have sent little else while they came back.
    assert max(first_sent.values()) < 12


def _same_split_regrets(a, b):
    for name in ("offsets", "values", "cuts"):
        np.testing.assert_array_equal(getattr(a.regret, name), getattr(b.regret, name))


def test_held_strategy_goes_out_early_once_it_fills_its_share_of_a_record():
    from holdem import config as config_mod
    from holdem.games import make_game
    from holdem.runtime.worker import BatchRunner
    from holdem.delta import records
    from holdem.delta.merge import merge_one

    config = config_mod.default_for_game("leduc")
    game = make_game(config)
    store = RegretStore(row_capacity=game.initial_rows)
    runner = BatchRunner(game, config)
    runner.warm_up()
    record = runner.flush(read_only_view(store.arrays), 0, 0, 0, 0, 200, True, 0.0)
    merge_one(store, RowMerger(1), record, None, game)          # (every row was new)
    read = read_only_view(store.arrays)
    runner.held = HeldStrategy(max_bytes=64)          # (off by default: worker.HOLD_STRATEGY)
    kinds = []
    for k in range(4):
        msg = records.decode_delta(runner.flush(read, 0, 0, 0, 200 + 10 * k, 10, False, 0.0))
        kinds.append((msg["regret_offsets"].size > 0, msg["strategy_offsets"].size > 0))
    # The first flush holds its strategy (nothing was held); past 64 bytes the next sends it.
    assert kinds[0] == (True, False) and kinds[1] == (True, True)
    runner.held.max_bytes = None
    msg = records.decode_delta(runner.flush(read, 0, 0, 0, 240, 10, False, 0.0))
    assert msg["strategy_offsets"].size == 0 and runner.held.rows > 0


def test_held_strategy_goes_out_when_its_record_would_outgrow_the_rings_room():
    """With a ring (BatchRunner.record_room: a quarter of it) a worker holds until the record
    that carries what it holds, with HELD_MARGIN plain records' worth besides, would outgrow
    the room, and half the room at least: a room that takes a batch's held rows sends them
    once, with the batch's last flush; a room smaller than they grow to sends them early, at
    half the room, but not at every flush, even where plain records are large beside it."""
    from holdem.delta import records

    def run(room_of):
        _, _, store, runner = _leduc_runner(HeldStrategy(), lambda: 0)
        read = read_only_view(store.arrays)
        plain = len(runner.flush(read, 0, 0, 0, 300, 1, False, 0.0))
        runner.record_room = int(room_of(plain))
        early = largest_held = 0
        for k in range(40):
            payload = runner.flush(read, 0, 0, 0, 301 + k, 1, k == 39, 0.0)
            largest_held = max(largest_held, runner.held.nbytes)
            early += records.decode_delta(payload)["strategy_offsets"].size > 0 and k < 39
        return runner.record_room, early, largest_held

    _, early, held = run(lambda plain: 1000 * plain)
    assert early == 0 and held > 0                        # (a Leduc batch holds ~2 kB)
    room, early, largest = run(lambda plain: held)         # a room of a plain record or two
    assert 2 <= early < 39 and largest < room


def test_held_strategy_goes_out_before_a_dcfr_sweep():
    """Leduc sweeps every 1,000 iterations: what a worker holds goes out with the flush that
    reaches the next sweep, so the sweep discounts it as in-process; with no sweep to come
    (past discount_stop) it waits for the batch's end. (Held across sweeps, 8 simulated
    workers' Leduc was 1.3x as exploitable as in-process at 3 M iterations: tests/
    test_convergence.py.)"""
    from holdem import config as config_mod
    from holdem.games import make_game
    from holdem.runtime.worker import BatchRunner
    from holdem.delta import records
    from holdem.delta.merge import merge_one

    def strategy_rows(config, starts):
        game = make_game(config)
        store = RegretStore(row_capacity=game.initial_rows)
        runner = BatchRunner(game, config)
        runner.held = HeldStrategy()                     # (off by default: HOLD_STRATEGY)
        merge_one(store, RowMerger(1), runner.flush(read_only_view(store.arrays), 0, 0, 0, 0,
                                                    300, True, 0.0), None, game)
        read = read_only_view(store.arrays)
        return [records.decode_delta(runner.flush(read, 0, 0, 0, t0, 200, False, 0.0))[
            "strategy_offsets"].size for t0 in starts]

    config = config_mod.default_for_game("leduc")
    assert config.solver.dcfr_interval == 1000
    sent = strategy_rows(config, [400, 600, 800, 1000, 1200])
    assert sent[0] == sent[1] == 0 and sent[2] > 0 and sent[3] == 0      # [800, 1000)
    stopped = config_mod.with_overrides(config, solver={"discount_stop": 500})
    assert strategy_rows(stopped, [400, 600, 800, 1000, 1200]) == [0] * 5


def _leduc_runner(held=None, sweeps=None):
    """A Leduc runner (holding strategy updates in ``held``; the main store's sweeps read from
    ``sweeps``) and a store its first 300 iterations made."""
    from holdem import config as config_mod
    from holdem.games import make_game
    from holdem.runtime.worker import BatchRunner
    from holdem.delta.merge import merge_one

    config = config_mod.default_for_game("leduc")
    game = make_game(config)
    store = RegretStore(row_capacity=game.initial_rows)
    runner = BatchRunner(game, config)
    runner.held = held
    runner.sweeps = sweeps
    merge_one(store, RowMerger(1), runner.flush(read_only_view(store.arrays), 0, 0, 0, 0,
                                                300, True, 0.0), None, game)
    return config, game, store, runner


def test_held_strategy_holds_on_across_the_main_stores_sweeps():
    """Where the worker reads the main store's sweeps (its ring), a sweep does not send what
    it holds: the worker discounts it as the sweep discounted the store's sums and holds on,
    and the batch's last flush sends it, saying the sweeps the store had at the last one;
    the iteration-number rule does not apply then."""
    from holdem.delta import records

    seen = [3]
    config, _, store, runner = _leduc_runner(HeldStrategy(), lambda: seen[0])
    read = read_only_view(store.arrays)

    def flush(t0, last=False):
        msg = records.decode_delta(runner.flush(read, 0, 0, 0, t0, 200, last, 0.0))
        return msg["strategy_offsets"].size, msg["sweeps"]

    assert flush(400) == (0, 3) and flush(800) == (0, 3)      # [800, 1000): still held
    seen[0] = 5
    rows = runner.held.rows
    assert flush(1000) == (0, 5) and runner.held.rows >= rows > 0
    sent, sweeps = flush(1200, last=True)
    assert sent >= rows and sweeps == 5 and runner.held.rows == 0
    runner.held = None                   # not holding: each record says the sweeps it saw
    seen[0] = 6
    sent, sweeps = flush(1400)
    assert sent > 0 and sweeps == 6


def test_strategy_held_across_batches_goes_out_when_old_or_when_no_request_waits():
    """A worker process holds strategy updates past a batch's end (BatchRunner.hold_seconds)
    while another request waits and the hold is younger than hold_seconds; a batch that ends
    with nothing waiting (the run's last) or with the hold that old sends everything, and the
    store the records are merged into ends with the strategy sums that sending them every batch
    gives. Regret rows go out every flush either way, the same."""
    from holdem.delta import records
    from holdem.delta.merge import merge_one

    def run(hold_seconds, batches=6, per_batch=3, room=None):
        _, game, store, runner = _leduc_runner(HeldStrategy(), lambda: 0)
        read = read_only_view(store.arrays)
        merged = RegretStore.copy_of(store.arrays)
        now, waiting = [0.0], [True]
        runner.hold_seconds, runner.clock = hold_seconds, lambda: now[0]
        runner.queued = lambda: waiting[0]
        runner.record_room = room
        sent_at, regrets, merger = [], 0, RowMerger(1)
        try:
            for b in range(batches):
                waiting[0] = b < batches - 1                    # the last: nothing waits
                for k in range(per_batch):
                    t0 = 300 + 60 * (b * per_batch + k)
                    record = runner.flush(read, 0, 0, 0, t0, 60, k == per_batch - 1, 0.0)
                    msg = records.decode_delta(record)
                    regrets += msg["regret_offsets"].size > 0
                    if msg["strategy_offsets"].size:
                        sent_at.append(b * per_batch + k)
                        if room is not None and not (b == batches - 1 and k == per_batch - 1):
                            # a quarter of a record's room at a time
                            assert 4 * (msg["strategy_offsets"].size
                                        + msg["strategy"].size) <= room // 4
                    merge_one(merged, merger, record, None, game)
                    now[0] += 1.0
        finally:
            merger.close()
        assert runner.held.rows == 0 and regrets == batches * per_batch
        return sent_at, merged

    sent, every_batch = run(0.0)                    # off: at each batch's end
    assert sent == [2, 5, 8, 11, 14, 17]
    sent, held = run(100.0)                         # young, a request waits: held to the end
    assert sent == [17]
    np.testing.assert_array_equal(held.arrays.regrets, every_batch.arrays.regrets)
    np.testing.assert_allclose(held.arrays.strategy_sum, every_batch.arrays.strategy_sum,
                               rtol=1e-5, atol=1e-6)
    assert every_batch.arrays.strategy_sum.any()
    sent, _ = run(4.5)                              # held 4.5 s at most: the next batch's end
    assert sent == [5, 11, 17]
    # With a ring's room smaller than what is held, a hold that is over goes out a quarter of
    # the room at a time over the next flushes, then a new hold starts (here: flushes 5-8,
    # 14-17, and the last batch's end); the sums are the same.
    sent, drained = run(4.5, batches=8, room=3000)
    assert sent[:2] == [5, 6] and sent[-1] == 23
    assert not set(range(9, 14)) <= set(sent) and {14, 15} <= set(sent)
    np.testing.assert_allclose(drained.arrays.strategy_sum[:every_batch.arrays.strategy_sum.size],
                               run(0.0, batches=8)[1].arrays.strategy_sum, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("gamma", [2.0, 0.5])
def test_strategy_held_across_sweeps_counts_as_if_each_flush_went_out_on_its_own(gamma):
    # Three flushes, the main store sweeping twice between them, merged after two more
    # sweeps: held (discounted at each sweep, sent with the batch's last flush) they leave the
    # strategy sums that sending each flush on its own, scaled by the sweeps it missed, does.
    from holdem import config as config_mod
    from holdem.delta.merge import merge_one
    from holdem.solver.solver import DcfrSchedule

    config = config_mod.with_overrides(config_mod.default_for_game("leduc"),
                                       solver={"dcfr_gamma": gamma})
    sums = {}
    for held in (HeldStrategy(), None):
        seen = [2]
        _, game, store, runner = _leduc_runner(held, lambda: seen[0])
        runner.config = config
        read = read_only_view(store.arrays)
        sent = []
        for k, sweeps in enumerate((2, 3, 4)):
            seen[0] = sweeps
            sent.append(bytes(runner.flush(read, 0, 0, 0, 300 + 200 * k, 200, k == 2, 0.0)))
        dcfr = DcfrSchedule(config.solver, steps=6)
        for record in sent:
            merge_one(store, RowMerger(1), record, None, game, dcfr=dcfr)
        n = store.arrays.meta[1]
        sums[held is None] = store.arrays.strategy_sum[:n].copy()
    np.testing.assert_allclose(sums[False], sums[True], rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("gamma", [2.0, 0.5])
def test_a_late_records_strategy_counts_as_if_merged_before_the_sweeps_it_missed(gamma):
    # A record made when the store had had 2 sweeps, merged after 3 more, adds to the
    # strategy sums what merging it first and sweeping after would have left of it; regrets
    # are not scaled; -1 (not known) scales nothing.
    from holdem import config as config_mod
    from holdem.delta.merge import merge_one
    from holdem.solver.solver import DcfrSchedule

    config = config_mod.default_for_game("leduc")
    config = config_mod.with_overrides(config, solver={"dcfr_gamma": gamma})
    seen = [2]
    sums = {}
    for order in ("merge, sweep", "sweep, merge", "unknown"):
        _, game, store, runner = _leduc_runner(None, lambda: seen[0])
        runner.sweeps = (lambda: -1) if order == "unknown" else runner.sweeps
        record = runner.flush(read_only_view(store.arrays), 0, 0, 0, 300, 200, True, 0.0)
        dcfr = DcfrSchedule(config.solver, steps=2)
        if order == "merge, sweep":
            merge_one(store, RowMerger(1), record, None, game, dcfr=dcfr)
            dcfr.apply(store, 3)
        else:
            dcfr.apply(store, 3)
            merge_one(store, RowMerger(1), record, None, game, dcfr=dcfr)
        assert dcfr.steps == 5
        n = store.arrays.meta[1]
        sums[order] = (store.arrays.strategy_sum[:n].copy(), store.arrays.regrets[:n].copy())
    first, then = sums["merge, sweep"], sums["sweep, merge"]
    np.testing.assert_allclose(then[0], first[0], rtol=1e-5, atol=1e-9)
    np.testing.assert_array_equal(then[1], sums["unknown"][1])         # regrets: not scaled
    assert not np.allclose(sums["unknown"][0], first[0], rtol=1e-3)
    scales = DcfrSchedule(config.solver, steps=5).strategy_scales([2, 5, -1, 9])
    np.testing.assert_allclose(scales, [(3 / 6) ** gamma, 1, 1, 1])


def test_a_small_pass_runs_every_shard_on_the_calling_thread_in_one_call():
    # RowMerger.map below INLINE_ROWS rows: one call over every shard, on this thread; at or
    # above it (or without a row count) each thread's range, those after the first on the pool.
    merger = RowMerger(3)
    try:
        for rows, inline in ((0, True), (merge_mod.INLINE_ROWS - 1, True),
                             (merge_mod.INLINE_ROWS, False), (None, False)):
            seen = []
            merger.map(lambda lo, hi: seen.append((lo, hi, threading.get_ident())), rows)
            ranges = sorted((lo, hi) for lo, hi, _ in seen)
            assert ranges == ([(0, dk.SHARDS)] if inline else merger.ranges)
            assert merger.ranges_for(rows) == ranges
            here = [t == threading.get_ident() for _, _, t in seen]
            assert all(here) if inline else (here.count(True) == 1)
    finally:
        merger.close()
