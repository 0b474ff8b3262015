"""Workers as Ray actors (``train.backend: ray``): the same run on one machine or a cluster.

:class:`RayPool` is a pool for :class:`holdem.runtime.process.ProcessExecutor` like
:class:`holdem.runtime.pool.ProcessPool`: the executor, the run loop, checkpoints and TensorBoard
are the same; only where workers run changes. Requests and msgpack deltas travel as bytes
through Ray (``WorkerActor.run``), one call per batch.

- **Placement.** Workers are actors started once for the run, pinned to nodes in proportion to
  their CPUs (the main process's node counts one CPU less: it merges). A replaced worker stays
  on its node while the node is alive, else moves to the least loaded node.
- **The store.** Workers on the main process's node map its shared store, as with processes.
  Every other node with workers holds one :class:`holdem.runtime.replica.Replica`, in that
  node's shared memory, mapped read-only by the node's workers and kept current by the main
  process: after each merge pass it puts the store's changes (the merged deltas, discount
  sweeps, released generations) into Ray's object store *once* and hands that object to every
  replica, so each node fetches it once however many workers it has. A remote worker's view
  lags the main store by the local lag (deltas in flight) plus the replica's: the batches
  merged but not applied there yet (``ray/replica_lag_batches``).
- **Faults.** A worker whose actor dies (killed, its node gone, or failing as it starts) is
  reported as :class:`WorkerDied`; the executor replaces it and re-issues its batches, within
  the same restart budget as worker processes (:class:`holdem.runtime.pool.RestartBudget`). A
  replica that dies takes its node's workers down with it, so none reads a store that stopped
  changing.
- **Priority.** Actors run at the driver's niceness (:func:`match_niceness`), as worker
  processes do, not at the nice 15 Ray gives its workers.
- **Shutdown.** ``close`` kills every actor of the run and has replicas remove their files; a
  local Ray instance this pool started is shut down.

Ray is an optional extra (``pip install -e '.[ray]'``); this module imports it when used.
"""

import functools
import os
import time
import uuid

from holdem import config as config_mod
from holdem.delta.merge import merge_threads
from holdem.metrics import format_bytes, log
from holdem.runtime import protocol, shm
from holdem.runtime.flush import OneDeltaPerBatch
from holdem.runtime.pool import Pool, WorkerDied
from holdem.runtime.ray_cluster import (actor_failure, alive_nodes, cluster_workers, connect,
                                        disconnect, first_line, match_niceness)
from holdem.runtime.replica import Replica, StoreLog, store_copy
from holdem.runtime.worker import BatchServer

# Changes sent to a replica and not yet applied there, before sending more waits for it.
MAX_REPLICA_BACKLOG = 32
REPLICA_TIMEOUT = 600.0         # a replica that takes longer to start or apply is failed

class WorkerActor:
    """A persistent worker in a Ray actor (see :class:`holdem.runtime.worker.BatchServer`);
    ``location``: the node's store replica (None: the main process's node); ``niceness``: the
    driver's (:func:`match_niceness`)."""

    def __init__(self, worker_index, config_dict, location, niceness):
        match_niceness(niceness)
        config = config_mod.from_dict(config_dict, source="worker config")
        relocate = None if location is None else functools.partial(shm.relocate, **location)
        self.index = worker_index
        self.server = BatchServer(config, worker_index, relocate)

    def ready(self):
        return protocol.encode_ready(self.index, os.getpid())

    def run(self, request, applied=None):
        """Serve a request. ``applied`` (resolved by Ray before this runs) is the node
        replica's answer to the store changes sent before the request: the batch starts on a
        replica holding every delta merged when it was handed out."""
        return self.server.serve(request)


class ReplicaActor:
    """A node's :class:`holdem.runtime.replica.Replica`."""

    def __init__(self, config_dict, arrays, generation, seq, deltas, steps, niceness):
        match_niceness(niceness)
        shm.clean_stale()               # files of replicas killed on this node before
        config = config_mod.from_dict(config_dict, source="replica config")
        self.replica = Replica(config.solver, arrays, generation, seq, deltas,
                               merge_threads=merge_threads(config, config.train.num_workers),
                               steps=steps)

    def location(self):
        return self.replica.location

    def apply(self, ops):
        return self.replica.apply(ops)

    def close(self):
        self.replica.close()


class _Node:
    def __init__(self, replica=None):
        self.replica = replica          # actor handle, or None on the main process's node
        self.location = None
        self.backlog = []               # apply() refs not returned yet
        self.last = None                # the newest apply() ref (a request to a worker here
                                        # waits for it)
        self.applied = 0                # deltas the replica has applied
        self.seconds = 0.0              # and the time it spent applying changes


class RayPool(Pool):
    """Persistent workers as Ray actors (see the module docstring). ``store()`` returns (the run's
    store, its generation, the executor's :class:`holdem.runtime.replica.StoreLog`).

    Its policy (:class:`holdem.runtime.pool.Pool`): workers on other machines read a replica
    that follows the store a merge pass late, so each sends one delta per batch; its own-delta
    weight is W by default (:func:`holdem.runtime.worker.own_delta_weight`); its frames come
    whole, without rings; the executor logs the store's changes, and :meth:`sync` sends them to
    the replicas after each merge pass."""

    @classmethod
    def default_workers(cls, config):
        """One worker per CPU of the cluster, less one for the main process."""
        return cluster_workers(config.train.ray_address)

    @classmethod
    def own_delta_default(cls, num_workers):
        """W: a worker's own batch stands in for the other workers' unmerged ones (Leduc on a
        two-node cluster: 1.08x the in-process exploitability, 1.42x with 1;
        docs/parallel.md)."""
        return float(num_workers)

    @classmethod
    def make(cls, config, num_workers, allocator=None, store_state=None, record_bytes=None):
        """A pool of ``num_workers`` actors for ``config``'s run; ``store_state()`` gives (store,
        generation, StoreLog) to its store replicas (``allocator``: the process pool's)."""
        return cls(num_workers, cls.worker_config(config, num_workers),
                   config.train.ray_address, store=store_state)

    def describe(self):
        return "Ray actors"

    def flush_policy(self, config, num_workers):
        return OneDeltaPerBatch(config, num_workers)    # returned by the actor's call

    def store_log(self, steps):
        return StoreLog(steps)

    def __init__(self, num_workers, config_dict, address=None, store=None):
        self.num_workers = int(num_workers)
        self.config_dict = config_dict
        self.address = address
        self.store = store
        self.ray = None
        self.tag = uuid.uuid4().hex[:8]
        self.niceness = os.getpriority(os.PRIO_PROCESS, 0)     # the actors run at the driver's
        self.actors = [None] * self.num_workers
        self.worker_node = [None] * self.num_workers
        self.incarnation = [0] * self.num_workers
        self.pending = {}               # ref -> (worker, incarnation)
        self.nodes = {}                 # node id -> _Node (nodes with workers)
        self.home = None                # the main process's node
        self.stats = {"broadcast_bytes": 0, "remote_delta_bytes": 0, "lag_sum": 0.0,
                      "lag_samples": 0, "replicas_started": 0}
        self._window = dict(self.stats)

    # -- placement -------------------------------------------------------------------------
    def _capacity(self, alive):
        return {node: max(1, cpus - 1) if node == self.home else cpus
                for node, cpus in alive.items()}

    def _place(self, alive, counts):
        """The node for one more worker: the least loaded for its CPUs (the main process's
        node first on a tie)."""
        capacity = self._capacity(alive)
        order = sorted(capacity, key=lambda n: (n != self.home, n))
        return min(order, key=lambda n: (counts.get(n, 0) + 1) / capacity[n])

    def start(self):
        self.ray = connect(self.address)
        self._worker_class = self.ray.remote(WorkerActor)
        self._replica_class = self.ray.remote(ReplicaActor)
        self.home = self.ray.get_runtime_context().get_node_id()
        alive = alive_nodes(self.ray)
        if not alive:
            raise RuntimeError("the Ray cluster has no node with a CPU")
        counts = {}
        for i in range(self.num_workers):
            node = self._place(alive, counts)
            counts[node] = counts.get(node, 0) + 1
            self.worker_node[i] = node
        for node in counts:
            self._node(node)
        self._keep_changes()
        for i in range(self.num_workers):
            self._spawn(i)

    def _affinity(self, node):
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        return NodeAffinitySchedulingStrategy(node_id=node, soft=False)

    def _node(self, node):
        """The node's record, starting its store replica if it needs one and has none."""
        entry = self.nodes.get(node)
        if entry is not None:
            return entry
        entry = _Node()
        if node != self.home:
            store, generation, log = self.store()
            arrays = self.ray.put(store_copy(store))
            actor = self._replica_class.options(
                num_cpus=0, scheduling_strategy=self._affinity(node),
                name=f"holdem-{self.tag}-replica-{node[:12]}-{self.stats['replicas_started']}"
            ).remote(self.config_dict, arrays, generation, log.seq, log.deltas, log.steps,
                     self.niceness)
            self.stats["replicas_started"] += 1
            try:
                entry.location = self.ray.get(actor.location.remote(), timeout=REPLICA_TIMEOUT)
            except BaseException:
                self._kill(actor)
                raise
            entry.replica = actor
            entry.applied = log.deltas
        self.nodes[node] = entry
        return entry

    def _spawn(self, i):
        node = self.worker_node[i]
        location = self.nodes[node].location
        actor = self._worker_class.options(
            num_cpus=0, max_restarts=0, scheduling_strategy=self._affinity(node),
            name=f"holdem-{self.tag}-worker-{i}-{self.incarnation[i]}"
        ).remote(i, self.config_dict, location, self.niceness)
        self.actors[i] = actor
        self.pending[actor.ready.remote()] = (i, self.incarnation[i])

    # -- batches ---------------------------------------------------------------------------
    def submit(self, i, payload):
        entry = self.nodes.get(self.worker_node[i])
        applied = entry.last if entry is not None else None
        ref = self.actors[i].run.remote(bytes(payload), applied)
        self.pending[ref] = (i, self.incarnation[i])

    def wait(self, timeout, inbox=None, stall=None):
        """Block up to ``timeout`` seconds; return [(worker, payload or WorkerDied)]; with
        ``inbox`` (a :class:`holdem.runtime.ring.Inbox` without rings) each payload (a ready
        message or a batch's delta records) is copied into it, tagged with the worker's index.
        ``stall`` is the process pool's (Ray delivers whole results: nothing to stall in)."""
        ray = self.ray
        refs = list(self.pending)
        if not refs:                    # nothing can answer: wait out the timeout
            time.sleep(timeout)
            return []
        ready, _ = ray.wait(refs, num_returns=1, timeout=timeout)
        if not ready:
            return []
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
        events, dead = [], set()
        for ref in ready:
            i, incarnation = self.pending.pop(ref)
            if incarnation != self.incarnation[i] or i in dead:
                continue
            try:
                payload = ray.get(ref)
            except ray.exceptions.RayError as exc:
                dead.add(i)
                events.append((i, WorkerDied(f"worker {i} (Ray actor on node "
                                             f"{self.worker_node[i][:8]}): "
                                             f"{actor_failure(exc)}")))
                continue
            for p in payload if isinstance(payload, list) else [payload]:
                if self.worker_node[i] != self.home:
                    self.stats["remote_delta_bytes"] += len(p)
                if inbox is not None:
                    view = inbox.reserve(i, len(p))
                    view[:] = memoryview(p).cast("B")
                    inbox.received(i, view)
                events.append((i, p))
        return events

    def restart(self, i):
        """Kill worker ``i``'s actor and start a new one: on the same node if it is alive,
        else on the least loaded one."""
        self._kill(self.actors[i])
        self.incarnation[i] += 1
        self.pending = {r: v for r, v in self.pending.items() if v[0] != i}
        alive = alive_nodes(self.ray)
        while True:
            if self.worker_node[i] not in alive:
                self._forget_dead_nodes(alive)
                if not alive:
                    raise RuntimeError("the Ray cluster has no node left with a CPU")
                counts = {}
                for j, node in enumerate(self.worker_node):
                    if j != i and node in alive:
                        counts[node] = counts.get(node, 0) + 1
                self.worker_node[i] = self._place(alive, counts)
            try:
                self._node(self.worker_node[i])
                break
            except (self.ray.exceptions.RayError, TimeoutError) as exc:
                # Its replica could not start there (the node is leaving): try another node.
                log(f"store replica on node {self.worker_node[i][:8]} did not start "
                    f"({first_line(exc)})")
                alive.pop(self.worker_node[i], None)
        self._keep_changes()
        self._spawn(i)

    def _keep_changes(self):
        """The executor's log keeps the store's changes only while some replica needs them."""
        self.store()[2].keep = bool(self._replicas())

    def _replicas(self):
        """The records of the nodes that hold a replica."""
        return [e for e in self.nodes.values() if e.replica is not None]

    def _forget_dead_nodes(self, alive):
        for node in [n for n in self.nodes if n not in alive and n != self.home]:
            self._kill(self.nodes.pop(node).replica)

    def _kill(self, actor):
        if actor is not None:
            try:
                self.ray.kill(actor, no_restart=True)
            except Exception:       # already gone
                pass

    # -- replicas --------------------------------------------------------------------------
    def sync(self):
        """Send the store's changes since the last call to every replica (one object in Ray's
        object store, fetched once per node); note what they have applied."""
        _, _, log = self.store()
        self._harvest(block=False)
        ops, size = log.take()
        remote = self._replicas()
        if not ops or not remote:
            return
        ref = self.ray.put(ops)
        for entry in remote:
            entry.last = entry.replica.apply.remote(ref)
            entry.backlog.append(entry.last)
            self.stats["lag_sum"] += log.deltas - entry.applied
            self.stats["lag_samples"] += 1
        self.stats["broadcast_bytes"] += size * len(remote)
        if any(len(e.backlog) > MAX_REPLICA_BACKLOG for e in remote):
            self._harvest(block=True)

    def _harvest(self, block):
        """Collect replicas' answers; ``block``: first wait until each backlog is back to half
        the limit. A replica that fails (or takes REPLICA_TIMEOUT to catch up) is dropped and
        its node's workers killed: they are replaced, with a new replica if the node lives."""
        ray = self.ray
        for node, entry in list(self.nodes.items()):
            if not entry.backlog:
                continue
            need = max(0, len(entry.backlog) - MAX_REPLICA_BACKLOG // 2) if block else 0
            try:
                if need:
                    ray.wait(entry.backlog[:need], num_returns=need, timeout=REPLICA_TIMEOUT)
                ready, _ = ray.wait(entry.backlog, num_returns=len(entry.backlog), timeout=0)
                ready = set(ready)
                while entry.backlog and entry.backlog[0] in ready:
                    _, entry.applied, entry.seconds = ray.get(entry.backlog.pop(0))
            except ray.exceptions.RayError as exc:
                self._drop_replica(node, first_line(exc))
                continue
            if len(entry.backlog) > MAX_REPLICA_BACKLOG:
                self._drop_replica(node, f"did not apply the store's changes within "
                                         f"{REPLICA_TIMEOUT:.0f} s")

    def _drop_replica(self, node, why):
        entry = self.nodes.pop(node)
        log(f"store replica on node {node[:8]} failed ({why}); its workers are replaced")
        self._kill(entry.replica)
        self._keep_changes()
        for i, n in enumerate(self.worker_node):
            if n == node:
                self._kill(self.actors[i])      # reported by wait(), then restarted

    # -- reporting -------------------------------------------------------------------------
    def scalars(self, iters):
        s, last = self.stats, self._window
        nan = float("nan")
        samples = s["lag_samples"] - last["lag_samples"]
        crossing = (s["broadcast_bytes"] - last["broadcast_bytes"]
                    + s["remote_delta_bytes"] - last["remote_delta_bytes"])
        return {"ray/replica_lag_batches": (s["lag_sum"] - last["lag_sum"]) / samples
                if samples else nan,
                "ray/cross_node_bytes_per_iter": crossing / iters if iters else nan}

    def reset_window(self):
        self._window = dict(self.stats)

    def summary(self, iters, seconds):
        """End-of-run lines: where workers ran, the bytes that crossed node boundaries, and the
        replicas' lag and work."""
        s = self.stats
        replicas = self._replicas()
        workers_away = sum(1 for n in self.worker_node if n != self.home)
        line = (f"ray: {len(self.nodes)} node(s), {workers_away} of {self.num_workers} "
                f"workers on other nodes")
        if s["replicas_started"] or s["remote_delta_bytes"]:
            per_iter = 1.0 / max(iters, 1)
            crossing = s["broadcast_bytes"] + s["remote_delta_bytes"]
            lag = s["lag_sum"] / s["lag_samples"] if s["lag_samples"] else float("nan")
            busy = sum(e.seconds for e in replicas) / max(len(replicas), 1) / max(seconds, 1e-9)
            line += (f"; across nodes {format_bytes(crossing)}, {crossing * per_iter:.0f} "
                     f"bytes/iteration (deltas from other nodes "
                     f"{s['remote_delta_bytes'] * per_iter:.0f}, store changes to replicas "
                     f"{s['broadcast_bytes'] * per_iter:.0f}); {s['replicas_started']} "
                     f"replica(s), lag {lag:.1f} batches when sent, busy {busy:.1%} of a core "
                     "each")
        return [line]

    # -- shutdown --------------------------------------------------------------------------
    def close(self, timeout=10.0):
        """Kill every actor of the run; replicas remove their files first. Shuts down a local
        Ray instance this process started."""
        if self.ray is None:
            return
        try:
            for actor in self.actors:
                self._kill(actor)
            backlog = [r for e in self.nodes.values() for r in e.backlog]
            if backlog:             # the last changes' answers, for the summary
                self.ray.wait(backlog, num_returns=len(backlog), timeout=timeout)
                self._harvest(block=False)
            closing = [e.replica.close.remote() for e in self._replicas()]
            if closing:
                try:
                    self.ray.wait(closing, num_returns=len(closing), timeout=timeout)
                except Exception:
                    pass
            for entry in self.nodes.values():
                self._kill(entry.replica)
            self.pending.clear()
        finally:
            disconnect()
