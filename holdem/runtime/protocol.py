"""Messages between the main process and workers, serialized with msgpack.

Main -> worker (``encode_request``): ``{"op": "batch", "id", "t0", "n", "flush", "elapsed",
"store": {"generation", "descriptor"} or None}``, ``{"op": "stop"}``, or ``{"op": "go",
"merged"}`` (:func:`encode_go`: the answer to a worker that waits for its records to be
merged). ``t0`` is the global index of the batch's first iteration (schedules depend on it).
The worker runs the batch in *flushes* of ``flush`` iterations and sends one delta after each,
so the other workers see its updates ``flush`` iterations later, however large the batch (the
batch stays the unit of scheduling). A flush's RNG stream is derived from the run's seed and its
first iteration, so a re-issued batch (or the part of it not merged yet) is reproducible and no
RNG state lives in workers.

Worker -> main: first ``{"op": "ready", "worker", "pid"}`` once its kernels are compiled, then
for every flush a *delta record* (:func:`holdem.delta.records.encode_delta`, whose docstring gives
its layout): the sparse delta of the flush's iterations, read by the main process's merge pass
without decoding (:mod:`holdem.delta.merge`). A worker whose unmerged iterations would pass the
run's cap sends a *wait* (:func:`holdem.runtime.ring.encode_wait`) and blocks until it is
answered with a go (:class:`holdem.runtime.worker.UnmergedGate`). Requests and the ready message
carry the same version as records (``VERSION``); both ends of a run always run the same code.
"""

import msgpack

from holdem.delta.records import VERSION


class ProtocolError(ValueError):
    """A message that does not follow the protocol."""


def encode_request(batch_id, t0, n, elapsed, store=None, flush=None):
    """A batch of ``n`` iterations from ``t0``, a delta every ``flush`` (None: one at the end)."""
    return msgpack.packb({"v": VERSION, "op": "batch", "id": int(batch_id), "t0": int(t0),
                          "n": int(n), "flush": int(flush or n), "elapsed": float(elapsed),
                          "store": store}, use_bin_type=True)


def encode_ready(worker, pid):
    """First message of a worker: its kernels are compiled and it waits for batches."""
    return msgpack.packb({"v": VERSION, "op": "ready", "worker": int(worker), "pid": int(pid)},
                         use_bin_type=True)


def encode_stop():
    return msgpack.packb({"v": VERSION, "op": "stop"}, use_bin_type=True)


def encode_go(merged):
    """The answer to a waiting worker: ``merged`` of its iterations are merged now (at least as
    many as its wait asked for)."""
    return msgpack.packb({"v": VERSION, "op": "go", "merged": int(merged)}, use_bin_type=True)


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
            "batch", "stop", "go"):
        raise ProtocolError("malformed request")
    return msg
