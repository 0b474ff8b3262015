"""Messages between the main process and workers, serialized with msgpack.

Main -> worker (``encode_request``): ``{"op": "batch", "id", "t0", "n", "elapsed", "store":
{"generation", "descriptor"} or None}`` or ``{"op": "stop"}``. ``t0`` is the global index of the
batch's first iteration (schedules depend on it); the batch's RNG stream is derived from the run's
seed and ``t0``, so a re-issued batch is reproducible and no RNG state lives in workers.

Worker -> main: first ``{"op": "ready", "worker", "pid"}`` once its kernels are compiled, then
for every batch (``encode_delta``): the batch's sparse delta -- only the infosets it touched --
split by :class:`holdem.store.delta.DeltaSplitter` into rows the shared store already holds and
rows new to it. Its size depends on the batch, not on how long training has run. A delta is a
msgpack stream of three objects, so that the main process reads its arrays without copying them:

1. a uint 32: the length of the header;
2. the header, a map: ``v``, ``id``, ``worker``, ``generation`` (the store generation the batch
   read), ``iters``, ``utility_sum`` (player 0's sampled values), ``visits``, ``seconds``
   (traversal time), ``counts`` (the element count of each array below) and ``pad`` (bytes that
   align the data);
3. a bin 32 holding the arrays, raw little-endian, each starting 8-byte aligned, in this order:
   ``regret_offsets`` uint32 (value offsets of stored rows with regret updates, shard after
   shard), ``regrets`` float32, ``regret_cuts`` int64[2, SHARDS + 1] (each shard's first row and
   first value), the same three for strategy updates (``strategy_offsets``, ``strategy``,
   ``strategy_cuts``), then the new rows: ``keys`` int64, ``num_actions`` int8, ``new_regrets``
   and ``new_strategy`` float32.

:func:`decode_delta` validates the message and raises :class:`ProtocolError` on a malformed
payload; the offsets are checked against the store before anything is merged.

Version 3 (uint32 offsets in shards, the arrays in one aligned bin) replaced version 2 (int64
offsets, one bin per array, which msgpack copies when decoding); both ends of a run always run
the same code.
"""

import msgpack
import numpy as np

from holdem.store.delta_kernels import SHARDS

VERSION = 3


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
    """A batch's delta: ``split`` is a :class:`holdem.store.delta.SplitDelta`. Returns a
    bytearray (see the module docstring for the layout)."""
    arrays = {"regret_offsets": split.regret.offsets, "regrets": split.regret.values,
              "regret_cuts": split.regret.cuts, "strategy_offsets": split.strategy.offsets,
              "strategy": split.strategy.values, "strategy_cuts": split.strategy.cuts,
              "keys": split.keys, "num_actions": split.num_actions,
              "new_regrets": split.new_regrets, "new_strategy": split.new_strategy}
    header = {"v": VERSION, "id": int(batch_id), "worker": int(worker),
              "generation": int(generation), "iters": int(iters),
              "utility_sum": float(utility_sum), "visits": int(visits), "seconds": float(seconds),
              "counts": {name: int(np.size(arr)) for name, arr in arrays.items()}, "pad": b""}
    head = msgpack.packb(header, use_bin_type=True)
    # Pad the header (its "pad" bin stays under 256 bytes: a 2-byte bin header either way) so
    # that the arrays start 8-byte aligned in the payload.
    header["pad"] = bytes(-(len(head) + 2 * _FRAME) % _ALIGN)
    head = msgpack.packb(header, use_bin_type=True)
    starts, size = _layout(header["counts"])
    out = bytearray(2 * _FRAME + len(head) + size)
    out[:_FRAME] = b"\xce" + len(head).to_bytes(4, "big")
    out[_FRAME:_FRAME + len(head)] = head
    base = _FRAME + len(head)
    out[base:base + _FRAME] = b"\xc6" + size.to_bytes(4, "big")
    base += _FRAME
    for name, dtype in _ARRAYS.items():
        n = header["counts"][name]
        np.frombuffer(out, dtype, n, base + starts[name])[:] = np.asarray(arrays[name]).ravel()
    return out


_FRAME = 5                       # a msgpack uint 32 or bin 32 header
_ALIGN = 8
_ARRAYS = {"regret_offsets": "<u4", "regrets": "<f4", "regret_cuts": "<i8",
           "strategy_offsets": "<u4", "strategy": "<f4", "strategy_cuts": "<i8",
           "keys": "<i8", "num_actions": "<i1", "new_regrets": "<f4", "new_strategy": "<f4"}
_CUTS = 2 * (SHARDS + 1)
_DELTA_FIELDS = {"id": int, "worker": int, "generation": int, "iters": int,
                 "utility_sum": float, "visits": int, "seconds": float, "counts": dict}


def _layout(counts):
    """Start of each array in the data (each 8-byte aligned), and the data's size."""
    starts, pos = {}, 0
    for name, dtype in _ARRAYS.items():
        starts[name] = pos
        pos += -(-counts[name] * np.dtype(dtype).itemsize // _ALIGN) * _ALIGN
    return starts, pos


def decode_delta(payload, max_bytes=1 << 34):
    """Parse and check a worker's delta; returns a dict with numpy arrays (read-only views of
    ``payload``, which must stay alive and unchanged while they are used). The offsets and their
    values are checked against the store when they are merged
    (:class:`holdem.store.delta.RowMerger`); everything else is checked here."""
    view = memoryview(payload).cast("B")
    if len(view) < 2 * _FRAME or view[0] != 0xce:
        raise ProtocolError("delta does not start with its header's length")
    head_len = int.from_bytes(view[1:_FRAME], "big")
    base = _FRAME + head_len
    if len(view) < base + _FRAME or view[base] != 0xc6:
        raise ProtocolError("delta is truncated or has no data after its header")
    try:
        msg = msgpack.unpackb(view[_FRAME:base], raw=False, max_bin_len=1 << 16)
    except Exception as exc:  # msgpack raises several types; it never runs code
        raise ProtocolError(f"delta header is not valid msgpack: {exc}") from None
    if not isinstance(msg, dict) or msg.get("v") != VERSION:
        raise ProtocolError("delta has no or an unknown protocol version")
    for name, kind in _DELTA_FIELDS.items():
        value = msg.get(name)
        if kind is float and isinstance(value, int):
            value = msg[name] = float(value)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ProtocolError(f"delta field {name!r} is missing or not {kind.__name__}")
    counts = msg.pop("counts")
    if set(counts) != set(_ARRAYS) or not all(
            isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= max_bytes
            for n in counts.values()):
        raise ProtocolError(f"delta counts must be non-negative integers for {sorted(_ARRAYS)}")
    starts, size = _layout(counts)
    data = base + _FRAME
    if int.from_bytes(view[base + 1:data], "big") != size or len(view) != data + size:
        raise ProtocolError(f"delta data holds {len(view) - data} bytes, its header "
                            f"describes {size}")
    if counts["regret_cuts"] != _CUTS or counts["strategy_cuts"] != _CUTS:
        raise ProtocolError(f"delta cuts must have {_CUTS} entries")
    for name, dtype in _ARRAYS.items():
        msg[name] = np.frombuffer(view, dtype, counts[name], data + starts[name])
    for name in ("regret_cuts", "strategy_cuts"):
        msg[name] = msg[name].reshape(2, SHARDS + 1)
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
