"""Messages between the main process and workers, serialized with msgpack.

Main -> worker (``encode_request``): ``{"op": "batch", "id", "t0", "n", "elapsed", "store":
{"generation", "descriptor"} or None}`` or ``{"op": "stop"}``. ``t0`` is the global index of the
batch's first iteration (schedules depend on it); the batch's RNG stream is derived from the run's
seed and ``id``, so a re-issued batch is reproducible and no RNG state lives in workers.

Worker -> main: first ``{"op": "ready", "worker", "pid"}`` once its kernels are compiled, then
for every batch (``encode_delta``): the batch's sparse delta -- only the infosets it touched --
as raw little-endian arrays (``keys`` int64, ``num_actions`` int8, ``regrets`` float32,
``strategy`` float64) plus ``iters``, ``utility_sum`` (player 0's sampled values), ``visits``,
``seconds`` (traversal time) and ``generation`` (the store generation it read). Its size depends on
the batch, not on how long training has run. :func:`decode_delta` validates everything and raises
:class:`ProtocolError` on a malformed payload, so it is never merged.
"""

import msgpack
import numpy as np

VERSION = 1


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


def encode_delta(batch_id, worker, generation, iters, utility_sum, visits, seconds, keys,
                 num_actions, regrets, strategy):
    return msgpack.packb({
        "v": VERSION, "id": int(batch_id), "worker": int(worker), "generation": int(generation),
        "iters": int(iters), "utility_sum": float(utility_sum), "visits": int(visits),
        "seconds": float(seconds),
        "keys": _raw(keys, "<i8"), "num_actions": _raw(num_actions, "<i1"),
        "regrets": _raw(regrets, "<f4"), "strategy": _raw(strategy, "<f8"),
    }, use_bin_type=True)


def _raw(values, dtype):
    """The bytes of ``values`` as ``dtype`` for msgpack, without the copy ``tobytes`` makes
    (msgpack packs a buffer as bin directly)."""
    return memoryview(np.ascontiguousarray(values, dtype)).cast("B")


_DELTA_FIELDS = {"id": int, "worker": int, "generation": int, "iters": int,
                 "utility_sum": float, "visits": int, "seconds": float, "keys": bytes,
                 "num_actions": bytes, "regrets": bytes, "strategy": bytes}


def decode_delta(payload, max_bytes=1 << 34):
    """Parse and check a worker's delta. Returns a dict with numpy arrays."""
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
    sizes = {"keys": 8, "regrets": 4, "strategy": 8}
    for name, width in sizes.items():
        if len(msg[name]) % width:
            raise ProtocolError(f"delta field {name!r} has a partial element")
    keys = np.frombuffer(msg["keys"], "<i8")
    num_actions = np.frombuffer(msg["num_actions"], "<i1")
    regrets = np.frombuffer(msg["regrets"], "<f4")
    strategy = np.frombuffer(msg["strategy"], "<f8")
    if num_actions.shape != keys.shape or strategy.shape != regrets.shape:
        raise ProtocolError("delta arrays have inconsistent lengths")
    if int(num_actions.sum(dtype=np.int64)) != regrets.shape[0]:
        raise ProtocolError("delta: sum(num_actions) does not match the value arrays")
    if msg["iters"] < 0:
        raise ProtocolError("delta: negative iteration count")
    if not (np.isfinite(regrets).all() and np.isfinite(strategy).all()):
        raise ProtocolError("delta: non-finite values")
    msg.update(keys=keys, num_actions=num_actions, regrets=regrets, strategy=strategy)
    return msg
