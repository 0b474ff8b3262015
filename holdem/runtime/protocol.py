"""Messages between the main process and workers, serialized with msgpack.

Main -> worker (``encode_request``): ``{"op": "batch", "id", "t0", "n", "elapsed", "store":
{"generation", "descriptor"} or None}`` or ``{"op": "stop"}``. ``t0`` is the global index of the
batch's first iteration (schedules depend on it); the batch's RNG stream is derived from the run's
seed and ``t0``, so a re-issued batch is reproducible and no RNG state lives in workers.

Worker -> main: first ``{"op": "ready", "worker", "pid"}`` once its kernels are compiled, then
for every batch (``encode_delta``): the batch's sparse delta -- only the infosets it touched --
split by :class:`holdem.store.delta.DeltaSplitter` into rows the shared store already holds --
those with regret updates (``regret_offsets`` int64, their value offsets, sorted by merge block,
with ``regrets`` float32) and those with strategy updates (``strategy_offsets``, ``strategy``
float32) -- and rows new to it (``keys`` int64, ``num_actions`` int8, ``new_regrets`` and
``new_strategy`` float32), as raw little-endian arrays, plus ``iters``, ``utility_sum`` (player
0's sampled values), ``visits``, ``seconds`` (traversal time) and ``generation`` (the store
generation it read). Its size depends on the batch, not on how long training has run.
:func:`decode_delta` validates the message and raises :class:`ProtocolError` on a malformed
payload; the offsets are checked against the store before anything is merged.

Version 2 (offset-addressed rows, float32 strategy increments) replaced version 1 (every row by
key, float64 strategy); both ends of a run always run the same code.
"""

import msgpack
import numpy as np

VERSION = 2


class ProtocolError(ValueError):
    """A message that does not follow the protocol."""


def encode_request(batch_id, t0, n, elapsed, store=None):
    return msgpack.packb({"v": VERSION, "op": "batch", "id": int(batch_id), "t0": int(t0),
                          "n": int(n), "elapsed": float(elapsed), "store": store},
                         use_bin_type=True)


def encode_ready(worker, pid):
    """First message of a worker: its kernels are compiled and it waits for batches."""
    return msgpack.packb({"v": VERSION, "op": "ready", "worker": int(worker), "pid": int(pid)},
                         use_bin_type=True)


def encode_stop():
    return msgpack.packb({"v": VERSION, "op": "stop"}, use_bin_type=True)


def decode_request_or_ready(payload):
    """A worker's ``ready`` message (the only non-delta message workers send)."""
    try:
        msg = msgpack.unpackb(payload, raw=False)
    except Exception as exc:
        raise ProtocolError(f"not valid msgpack: {exc}") from None
    if not isinstance(msg, dict) or msg.get("v") != VERSION or msg.get("op") != "ready":
        raise ProtocolError("expected a ready message")
    return msg


def decode_request(payload):
    msg = msgpack.unpackb(payload, raw=False)
    if not isinstance(msg, dict) or msg.get("v") != VERSION or msg.get("op") not in (
            "batch", "stop"):
        raise ProtocolError("malformed request")
    return msg


def encode_delta(batch_id, worker, generation, iters, utility_sum, visits, seconds, split):
    """A batch's delta: ``split`` is a :class:`holdem.store.delta.SplitDelta`."""
    return msgpack.packb({
        "v": VERSION, "id": int(batch_id), "worker": int(worker), "generation": int(generation),
        "iters": int(iters), "utility_sum": float(utility_sum), "visits": int(visits),
        "seconds": float(seconds),
        "regret_offsets": _raw(split.regret_offsets, "<i8"),
        "regrets": _raw(split.regrets, "<f4"),
        "strategy_offsets": _raw(split.strategy_offsets, "<i8"),
        "strategy": _raw(split.strategy, "<f4"),
        "keys": _raw(split.keys, "<i8"), "num_actions": _raw(split.num_actions, "<i1"),
        "new_regrets": _raw(split.new_regrets, "<f4"),
        "new_strategy": _raw(split.new_strategy, "<f4"),
    }, use_bin_type=True)


def _raw(values, dtype):
    """The bytes of ``values`` as ``dtype`` for msgpack, without the copy ``tobytes`` makes
    (msgpack packs a buffer as bin directly)."""
    return memoryview(np.ascontiguousarray(values, dtype)).cast("B")


_ARRAYS = {"regret_offsets": "<i8", "regrets": "<f4", "strategy_offsets": "<i8",
           "strategy": "<f4", "keys": "<i8", "num_actions": "<i1", "new_regrets": "<f4",
           "new_strategy": "<f4"}
_DELTA_FIELDS = {"id": int, "worker": int, "generation": int, "iters": int,
                 "utility_sum": float, "visits": int, "seconds": float,
                 **{name: bytes for name in _ARRAYS}}


def decode_delta(payload, max_bytes=1 << 34):
    """Parse and check a worker's delta; returns a dict with numpy arrays (read-only views of
    the message's bytes). The offsets and their values are checked against the store when they
    are merged (:class:`holdem.store.delta.RowMerger`); everything else is checked here."""
    try:
        msg = msgpack.unpackb(payload, raw=False, max_bin_len=max_bytes)
    except Exception as exc:  # msgpack raises several types; it never runs code
        raise ProtocolError(f"delta is not valid msgpack: {exc}") from None
    if not isinstance(msg, dict) or msg.get("v") != VERSION:
        raise ProtocolError("delta has no or an unknown protocol version")
    for name, kind in _DELTA_FIELDS.items():
        value = msg.get(name)
        if kind is float and isinstance(value, int):
            value = msg[name] = float(value)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ProtocolError(f"delta field {name!r} is missing or not {kind.__name__}")
    for name, dtype in _ARRAYS.items():
        if len(msg[name]) % np.dtype(dtype).itemsize:
            raise ProtocolError(f"delta field {name!r} has a partial element")
        msg[name] = np.frombuffer(msg[name], dtype)
    if (msg["num_actions"].shape != msg["keys"].shape
            or msg["new_strategy"].shape != msg["new_regrets"].shape):
        raise ProtocolError("delta arrays have inconsistent lengths (new rows)")
    if int(msg["num_actions"].sum(dtype=np.int64)) != msg["new_regrets"].shape[0]:
        raise ProtocolError("delta: sum(num_actions) does not match the new rows' values")
    if msg["iters"] < 0:
        raise ProtocolError("delta: negative iteration count")
    if not (np.isfinite(msg["new_regrets"]).all() and np.isfinite(msg["new_strategy"]).all()):
        raise ProtocolError("delta: non-finite values")
    return msg
