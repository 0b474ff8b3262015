"""RegretStore and its kernels against the dict-based merge in tests/reference/vanilla_cfr.py.

Values are compared exactly: the reference accumulates in the store's precisions and order
(float32 regrets clamped at the floor after each add, float64 strategy sums).
"""

import numpy as np
import pytest

from holdem.store import kernels
from holdem.store.store import (ENTRY_BYTES, ROW_BYTES, SLOT_BYTES, RegretStore, read_only_view,
                                validate_delta)
from tests.reference.vanilla_cfr import DictStore, dict_contents, store_contents


def random_delta(rng, key_space, actions_of, num_keys, scale=1.0):
    """A delta of ``num_keys`` keys drawn with repeats; ``actions_of[key]`` fixes num_actions."""
    keys = rng.integers(0, key_space, size=num_keys)
    num_actions = actions_of[keys]
    m = int(num_actions.sum())
    regret_delta = (rng.standard_normal(m) * scale).astype(np.float32)
    strategy_delta = rng.random(m) * scale
    return keys, num_actions, regret_delta, strategy_delta


def assert_same(store, reference):
    assert store_contents(store) == dict_contents(reference)
    keys, num_actions, offsets, _, _ = store.used()
    ref_keys, ref_num_actions, _, _ = reference.as_arrays()
    assert np.array_equal(keys, ref_keys)                       # rows in order of first visit
    assert np.array_equal(num_actions, ref_num_actions)
    assert np.array_equal(offsets, np.concatenate([[0], np.cumsum(ref_num_actions)[:-1]]))
    assert store.num_infosets == len(reference.rows)
    assert store.num_entries == int(ref_num_actions.sum())


def snapshot(store):
    return [a.copy() for a in store.arrays], [id(a) for a in store.arrays]


def test_growth_keeps_every_row(rng):
    key_space = 20_000
    actions_of = rng.integers(1, 5, size=key_space)
    store = RegretStore(row_capacity=16, entry_capacity=16)
    reference = DictStore()
    resizes = 0
    for batch in range(60):
        arrays = store.arrays
        num_keys = int(rng.integers(1, 5 + 20 * batch))
        delta = random_delta(rng, key_space, actions_of, num_keys)
        store.merge(*delta)
        reference.merge(*delta)
        resizes += store.arrays is not arrays
        if batch % 10 == 0:
            assert_same(store, reference)
    assert resizes >= 8
    assert_same(store, reference)
    table = store.arrays.table[:, 0]
    assert 2 * store.num_infosets <= table.shape[0]
    assert np.count_nonzero(table != kernels.EMPTY) == store.num_infosets
    for key in rng.integers(0, key_space, size=500):
        row = store.row_of(key)
        if int(key) in reference.rows:
            assert store.arrays.row_key[row] == key
        else:
            assert row == -1


def test_table_is_sized_from_the_rows_not_the_row_capacity():
    # 3,100 rows overflow a 3,000-row store: the row capacity doubles to 6,000, but 8,192 slots
    # still hold 3,100 rows at most half full, so the table keeps its size (it used to double
    # with the capacity, to 16,384 slots: a fifth full).
    store = RegretStore(row_capacity=3000)
    assert store.arrays.table.shape[0] == 8192
    keys = np.arange(3100, dtype=np.int64) * 7919
    store.merge(keys, np.full(3100, 2, np.int8), np.ones(6200, np.float32), np.ones(6200))
    assert store.arrays.row_key.shape[0] == 6000
    assert store.arrays.table.shape[0] == 8192
    # One row more than half the table grows it to the next power of two holding it.
    more = np.arange(3100, 4097, dtype=np.int64) * 7919
    store.merge(more, np.full(more.size, 2, np.int8), np.ones(2 * more.size, np.float32),
                np.ones(2 * more.size))
    assert store.arrays.table.shape[0] == 16384
    for key in (0, 3099 * 7919, 4096 * 7919):
        regrets, _ = store.values_of(key)
        assert regrets.tolist() == [1.0, 1.0]


def test_merge_grows_only_for_rows_that_are_new(rng):
    # A full store: 32 rows in 64 table slots. Deltas of rows it holds, however long, must not
    # grow it (merge used to reserve room for every row of a delta, as if all were new).
    actions_of = rng.integers(1, 5, size=1_000)
    store = RegretStore(row_capacity=32, entry_capacity=4 * 32)
    reference = DictStore()
    held = np.arange(32)
    first = (held, actions_of[held], np.zeros(int(actions_of[held].sum()), np.float32),
             np.zeros(int(actions_of[held].sum())))
    for target in (store, reference):
        target.merge(*first)
    arrays = store.arrays
    for _ in range(5):
        delta = random_delta(rng, 32, actions_of, num_keys=500)
        store.merge(*delta)
        reference.merge(*delta)
    assert store.arrays is arrays
    # New rows scattered through a delta of held rows: the merge stops at each one that does
    # not fit, grows, and carries on where it stopped.
    keys = rng.permutation(np.concatenate([rng.integers(0, 32, size=400),
                                           np.arange(32, 100)]))
    num_actions = actions_of[keys]
    m = int(num_actions.sum())
    delta = (keys, num_actions, rng.standard_normal(m).astype(np.float32), rng.random(m))
    store.merge(*delta)
    reference.merge(*delta)
    assert store.arrays is not arrays
    assert store.arrays.row_key.shape[0] == 128               # 100 rows: two doublings of 32
    assert_same(store, reference)


@pytest.mark.parametrize("floor", [None, -2.0, 0.0])
def test_merge_delta_kernel_against_reference(rng, floor):
    key_space = 3_000
    actions_of = rng.integers(1, 6, size=key_space)
    store = RegretStore(row_capacity=key_space, entry_capacity=int(actions_of.sum()))
    reference = DictStore()
    kernel_floor = -np.inf if floor is None else floor
    for batch in range(20):
        keys, num_actions, regret_delta, strategy_delta = random_delta(
            rng, key_space, actions_of, num_keys=400, scale=3.0)
        done = kernels.merge_delta(store.arrays, keys.astype(np.int64),
                                   num_actions.astype(np.int8), regret_delta, strategy_delta,
                                   kernel_floor, 0, 0, kernels.merge_ring())
        assert done == (len(keys), len(regret_delta))
        reference.merge(keys, num_actions, regret_delta, strategy_delta, kernel_floor)
    assert_same(store, reference)
    regrets = store.used()[3]
    if floor is not None:
        assert regrets.min() >= floor
        assert np.count_nonzero(regrets == floor) > 0            # the floor was reached
    else:
        assert regrets.min() < -2.0


def test_repeated_keys_within_a_batch_clamp_after_each_add():
    store = RegretStore()
    store.merge([7, 7, 7], [1, 1, 1], [-5.0, 3.0, 1.0], [0.5, 0.25, 0.125], regret_floor=-1.0)
    # -5 -> clamped to -1, then +3 = 2, then +1 = 3 (a floor applied to the batch sum would give 0)
    assert store_contents(store) == {7: ([3.0], [0.875])}


def test_merge_dtype_conversion(rng):
    store = RegretStore()
    store.merge([1, 2], np.array([2, 1], dtype=np.int64), [0.5, 1.5, -2.0], [1, 2, 3])
    assert store_contents(store) == {1: ([0.5, 1.5], [1.0, 2.0]), 2: ([-2.0], [3.0])}


@pytest.mark.parametrize("delta, message", [
    (([1, 2], [2], [0.0] * 4, [0.0] * 4), "keys and num_actions"),
    (([1, 2], [2, 2], [0.0] * 4, [0.0] * 3), "regret and strategy"),
    (([[1, 2]], [[2, 2]], [0.0] * 4, [0.0] * 4), "keys and num_actions"),
    (([1, -2], [2, 2], [0.0] * 4, [0.0] * 4), "negative key"),
    (([1, 2], [2, 0], [0.0] * 2, [0.0] * 2), "empty action set"),
    (([1, 2], [2, 2], [0.0] * 5, [0.0] * 5), "sum\\(num_actions\\)"),
    (([1, 2], [2, 2], [0.0] * 3, [0.0] * 3), "sum\\(num_actions\\)"),
    (([1, 2], [2, 2], [0.0, np.nan, 0.0, 0.0], [0.0] * 4), "non-finite"),
    (([1, 2], [2, 2], [0.0] * 4, [0.0, 0.0, np.inf, 0.0]), "non-finite"),
    (([1, 2], [2, 2], ["a", 0.0, 0.0, 0.0], [0.0] * 4), "malformed"),
])
def test_malformed_delta_is_rejected_without_change(delta, message):
    store = RegretStore(row_capacity=16, entry_capacity=16)
    store.merge([1, 3], [2, 1], [1.0, -1.0, 2.0], [0.5, 0.5, 1.0])
    before, ids = snapshot(store)
    with pytest.raises(ValueError, match=message):
        store.merge(*delta)
    with pytest.raises(ValueError, match=message):
        validate_delta(*delta)
    after, after_ids = snapshot(store)
    assert ids == after_ids                              # not even grown
    for a, b in zip(before, after):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("num_actions", [np.array([257]), [257]])
def test_num_actions_out_of_int8_range_is_rejected(num_actions):
    with pytest.raises(ValueError):
        validate_delta([1], num_actions, [0.0], [0.0])


def test_empty_delta_is_a_no_op():
    store = RegretStore()
    store.merge([], [], [], [])
    assert store.num_infosets == 0 and store.num_entries == 0


def test_clear_delta_buffer(rng):
    buffer = RegretStore(row_capacity=16, entry_capacity=16)
    actions_of = rng.integers(1, 4, size=1_000)
    buffer.merge(*random_delta(rng, 1_000, actions_of, 300))
    nbytes = buffer.nbytes
    old_keys = buffer.used()[0].copy()
    buffer.clear()
    assert buffer.num_infosets == 0 and buffer.num_entries == 0
    assert buffer.nbytes == nbytes                       # capacity kept
    assert all(buffer.row_of(k) == -1 for k in old_keys)
    delta = random_delta(rng, 1_000, actions_of, 200)
    buffer.merge(*delta)
    reference = DictStore()
    reference.merge(*delta)
    assert_same(buffer, reference)                       # no leftovers from before the clear


def test_sizes_reported(rng):
    store = RegretStore(row_capacity=100, entry_capacity=300)
    a = store.arrays
    assert a.row_key.shape[0] == 100 and a.regrets.shape[0] == 300
    assert a.table.shape[0] == 256                  # a power of two >= 2 * rows
    bitmap = (300 // 64 + 2) * 8                      # the row-start bitmap
    assert store.nbytes == 256 * SLOT_BYTES + 100 * ROW_BYTES + 300 * ENTRY_BYTES + 2 * 8 + bitmap
    store.merge([5, 9, 5], [3, 1, 3], np.arange(7), np.ones(7))
    assert store.num_infosets == 2 and store.num_entries == 4
    assert store.used_bytes == 2 * (ROW_BYTES + 2 * SLOT_BYTES) + 4 * ENTRY_BYTES
    assert store.reserve(200, 10)                        # grows
    assert store.arrays.row_key.shape[0] >= 202
    assert store.nbytes == sum(x.nbytes for x in store.arrays)
    assert not store.reserve(1, 1)


def test_from_arrays_round_trip(rng):
    actions_of = rng.integers(1, 4, size=500)
    store = RegretStore(row_capacity=16, entry_capacity=16)
    for _ in range(5):
        store.merge(*random_delta(rng, 500, actions_of, 200))
    keys, num_actions, offsets, regrets, sums = store.used()
    copy = RegretStore.from_arrays(keys, num_actions, regrets, sums)
    assert store_contents(copy) == store_contents(store)
    assert np.array_equal(copy.used()[0], keys)


def test_merge_rejects_changed_num_actions_without_writing():
    store = RegretStore(row_capacity=16)
    store.merge([5, 6], [2, 2], [1, 2, 3, 4], [1, 1, 1, 1])
    before = [x.copy() for x in store.used()]
    with pytest.raises(ValueError, match="key 5 has 3 actions"):
        store.merge([7, 5], [1, 3], [9, 9, 9, 9], [9, 9, 9, 9])
    for x, y in zip(before, store.used()):
        np.testing.assert_array_equal(x, y)


def test_prefetch_slot_changes_nothing_and_accepts_every_slot(rng):
    from holdem._jit import njit

    @njit
    def prefetch_then_find(store, keys, out):
        for i in range(keys.shape[0]):
            kernels.prefetch_slot(store, keys[i])
        for i in range(keys.shape[0]):
            out[i] = kernels.find_entry(store, keys[i])

    store = RegretStore(row_capacity=64)
    keys = rng.choice(1 << 40, size=40, replace=False).astype(np.int64)
    store.merge(keys, np.full(40, 3, np.int8), np.ones(120, np.float32), np.ones(120))
    before = [a.copy() for a in store.arrays]
    readonly = store.arrays._replace(table=store.arrays.table.view())
    readonly.table.flags.writeable = False
    probe = np.concatenate([keys, np.arange(1 << 12, dtype=np.int64)])   # every slot is hit
    out = np.empty(probe.shape[0], np.int64)
    prefetch_then_find(readonly, probe, out)
    assert [int(out[i]) for i in range(40)] == [int(kernels.find_entry_py(store.arrays, k))
                                              for k in keys]
    assert (out[40:][~np.isin(probe[40:], keys)] == kernels.NOT_FOUND).all()
    for a, b in zip(before, store.arrays):
        np.testing.assert_array_equal(a, b)


def test_read_only_view_shares_memory_and_refuses_writes():
    store = RegretStore(row_capacity=16)
    store.merge(np.array([7], np.int64), np.array([2], np.int8), np.ones(2, np.float32),
                np.ones(2))
    view = read_only_view(store.arrays)
    assert view._fields == store.arrays._fields
    for name in view._fields:
        assert np.shares_memory(getattr(view, name), getattr(store.arrays, name))
        assert not getattr(view, name).flags.writeable
        assert getattr(store.arrays, name).flags.writeable
    with pytest.raises(ValueError):
        view.regrets[0] = 1.0
