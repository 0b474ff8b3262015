"""Benchmark the Ray backend against worker processes, end to end through the CLI.

Runs ``python -m holdem.cli.train_blueprint`` with the same config, seconds and worker count
with ``--backend process`` and ``--backend ray`` (a local Ray instance, or ``--ray-address``),
alternating the order each round (process, ray, ray, process, ...), and prints every round's
iterations/s and their ratio, then the median ratio and the ratio of the medians: on a machine
whose speed drifts, one pair taken minutes apart can mislead either way. The Ray runs' ``ray:``
summary line (workers on other nodes, bytes across nodes, replica lag) is printed as it came.

    python tools/bench_backends.py --config configs/hunl_default.yaml --seconds 45 --rounds 5
    python tools/bench_backends.py --game leduc --seconds 20 --workers 3 --ray-address auto
    python tools/bench_backends.py --config configs/hunl_default.yaml --two-nodes --rounds 1

``--two-nodes`` starts a two-node Ray cluster on this machine (``ray.cluster_utils``; the head
has the main process and ``workers // 2`` workers, the other node the rest and a store replica),
so the ``ray:`` line measures the bytes that cross node boundaries and the replica's work.
"""

import re
import statistics
import tempfile
from pathlib import Path

import benchlib

from holdem.cli.common import positive_float

RAY_LINE_RE = re.compile(r"^ray: .*$", re.M)


def build_parser():
    p = benchlib.parser(__doc__, "game (configs/GAME.yaml; default leduc)")
    p.add_argument("--seconds", type=positive_float, default=30.0,
                   help="training seconds per run (default 30)")
    p.add_argument("--workers", type=int, default=2, help="workers of both backends (default 2)")
    p.add_argument("--rounds", type=int, default=3,
                   help="pairs of runs, alternating the order (default 3)")
    p.add_argument("--ray-address", metavar="ADDR",
                   help="Ray cluster for the ray runs (default: a local instance per run)")
    p.add_argument("--two-nodes", action="store_true",
                   help="run the ray runs on a two-node cluster started on this machine")
    p.add_argument("--logdir", metavar="DIR", help="keep the runs under DIR")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.workers < 2 or args.rounds < 1:
        raise SystemExit("--workers must be at least 2 and --rounds at least 1")
    source = benchlib.config_source(args.config, args.game)
    cluster = None
    if args.two_nodes:
        from ray.cluster_utils import Cluster

        home = args.workers // 2
        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": home + 1, "include_dashboard": False})
        cluster.add_node(num_cpus=args.workers - home)
        cluster.wait_for_nodes()
        args.ray_address = cluster.address
    try:
        return run(args, source)
    finally:
        if cluster is not None:
            cluster.shutdown()


def run(args, source):
    ray_args = ["--backend", "ray"] + (["--ray-address", args.ray_address]
                                       if args.ray_address else [])
    print(f"config: {source.name}; each run: {args.seconds:g} s; workers: {args.workers}; "
          f"rounds: {args.rounds}", flush=True)
    rates = {"process": [], "ray": []}
    with tempfile.TemporaryDirectory(prefix="bench-backends-") as tmp:
        base = Path(args.logdir) if args.logdir else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        for k in range(args.rounds):
            order = ("process", "ray") if k % 2 == 0 else ("ray", "process")
            for backend in order:
                logdir = base / f"{backend}-round{k + 1}"
                run = benchlib.train(source, logdir, args.workers, seconds=args.seconds,
                                     extra_args=ray_args if backend == "ray" else (),
                                     memory=False)
                rates[backend].append(run.rate)
                if backend == "ray":
                    found = RAY_LINE_RE.findall(logdir.with_suffix(".stderr").read_text())
                    ray_line = found[-1] if found else "(no ray: line)"
            p, r = rates["process"][-1], rates["ray"][-1]
            print(f"round {k + 1}: process {p:,.0f} it/s, ray {r:,.0f} it/s ({r / p:.2f}x)",
                  flush=True)
            print(f"  {ray_line}", flush=True)
    ratios = [r / p for p, r in zip(rates["process"], rates["ray"])]
    print(f"median ratio ray/process: {statistics.median(ratios):.2f}x "
          f"({', '.join(f'{x:.2f}x' for x in ratios)})")
    print(f"median process: {statistics.median(rates['process']):,.0f} it/s; median ray: "
          f"{statistics.median(rates['ray']):,.0f} it/s; ratio of the medians: "
          f"{statistics.median(rates['ray']) / statistics.median(rates['process']):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
