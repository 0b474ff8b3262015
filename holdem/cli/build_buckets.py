"""Build a card-abstraction (bucket) file for No-Limit Hold'em.

    python -m holdem.cli.build_buckets --k-preflop 169 --k-flop 50 --k-turn 50 --k-river 50 \\
        --num-players 2 --seed 0 --out assets/abstraction/default_hu.buckets

Shows a progress bar on stderr and prints one line on stdout at the end:
``wrote PATH: k=K0/K1/K2/K3 num_players=N seed=S bytes=B sha256=HEX seconds=T``. The same
arguments give a byte-identical file. With ``--manifest FILE`` the build (command, parameters,
sha256, size, build time) is also recorded in that JSON manifest, keyed by the file's name.
What the file holds is described in :mod:`holdem.abstraction.bucket_file`.
"""

import datetime
import json
import os
import shlex
import sys
import time
from pathlib import Path

from holdem.cli.common import ArgumentParser, output_file, run_main
from holdem.fileio import atomic_open


def _bounded_int(low, high):
    def parse(text):
        import argparse
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be in {low}..{high}, got {value}")
        return value
    return parse


def buckets_methods():
    from holdem.abstraction.bucket_file import METHODS
    return METHODS


def build_parser():
    from holdem.abstraction.bucket_file import MAX_BUCKETS, BucketParams
    from holdem.abstraction.bucket_tables import MAX_PLAYERS
    d = BucketParams()
    p = ArgumentParser(
        prog="python -m holdem.cli.build_buckets",
        description="Build a card-abstraction file: preflop classes, flop/turn buckets per "
                    "canonical hand (quantile bins of E[HS^2], or potential-aware k-means with "
                    "earth mover's distance), river HS bin boundaries.")
    p.add_argument("--k-preflop", type=_bounded_int(1, 169), default=d.k_preflop, metavar="K",
                   help="preflop buckets; 169 = the lossless classes (default %(default)s)")
    for street, default in (("flop", d.k_flop), ("turn", d.k_turn), ("river", d.k_river)):
        p.add_argument(f"--k-{street}", type=_bounded_int(1, MAX_BUCKETS), default=default,
                       metavar="K", help=f"{street} buckets (default %(default)s)")
    p.add_argument("--num-players", type=_bounded_int(2, MAX_PLAYERS), default=d.num_players,
                   metavar="N", help="equity target: against N-1 random hands; N > 2 is "
                   "approximate (default %(default)s)")
    p.add_argument("--seed", type=_bounded_int(0, 2 ** 63 - 1), default=d.seed,
                   help="seed of every Monte Carlo step (default %(default)s)")
    p.add_argument("--method", choices=buckets_methods(), default=d.method,
                   help="flop and turn buckets: ehs2 = quantile bins of E[HS^2]; emd = "
                   "k-means of next-street bucket histograms with earth mover's distance "
                   "(potential-aware; minutes instead of seconds) (default %(default)s)")
    p.add_argument("--kmeans-iters", type=_bounded_int(0, 1000), default=d.kmeans_iters,
                   metavar="N", help="emd: at most N Lloyd steps per street (default "
                   "%(default)s)")
    p.add_argument("--kmeans-sample", type=_bounded_int(100, 10 ** 8), default=d.kmeans_sample,
                   metavar="N", help="emd: canonical hands per street the k-means is fitted "
                   "on; then every hand goes to its nearest centre (default %(default)s)")
    p.add_argument("--out", required=True, metavar="FILE", type=output_file,
                   help="bucket file to write")
    p.add_argument("--preflop-samples", type=_bounded_int(1, 10 ** 9),
                   default=d.preflop_samples, metavar="N",
                   help="Monte Carlo deals per preflop class (default %(default)s)")
    p.add_argument("--turn-samples", type=_bounded_int(3, 47), default=d.turn_samples,
                   metavar="N", help="turn cards per flop, 47 = all (exact; default "
                   "%(default)s)")
    p.add_argument("--river-samples", type=_bounded_int(3, 48), default=d.river_samples,
                   metavar="N", help="river cards per turn board, 48 = all (exact; default "
                   "%(default)s)")
    p.add_argument("--threads", type=_bounded_int(0, 1024), default=0, metavar="N",
                   help="worker threads, 0 = one per core (default 0; the file does not "
                   "depend on it)")
    p.add_argument("--manifest", metavar="FILE.json",
                   help="also record the build in this JSON manifest")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


class ProgressBar:
    """A one-line text progress bar per stage on a stream (stderr)."""

    def __init__(self, stream=sys.stderr, width=30):
        self.stream = stream
        self.width = width
        self.start = time.perf_counter()
        self.stage = None
        self.last = 0.0

    def __call__(self, stage, done, total):
        now = time.perf_counter()
        if stage != self.stage:
            if self.stage is not None:
                self.stream.write("\n")
            self.stage = stage
        elif done < total and now - self.last < 0.2:
            return
        self.last = now
        filled = self.width * done // max(total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{stage:>14} [{bar}] {100 * done // max(total, 1):3d}% "
                          f"{done}/{total} {now - self.start:6.1f}s")
        self.stream.flush()

    def close(self):
        if self.stage is not None:
            self.stream.write("\n")
            self.stream.flush()


def write_manifest(manifest, out, argv, params, sha256, size, seconds, generator_version):
    """Add or replace the entry of ``out`` in the JSON ``manifest`` (atomic rewrite);
    ``params`` and ``generator_version`` as the file's header holds them."""
    import numba
    import numpy as np

    from holdem.version import __version__
    from holdem.abstraction.bucket_file import FORMAT_VERSION
    manifest = Path(manifest)
    data = {"files": {}}
    if manifest.exists():
        try:
            data = json.loads(manifest.read_text())
        except (OSError, ValueError) as exc:
            raise ValueError(f"manifest {manifest}: cannot read: {exc}") from None
        if not isinstance(data.get("files"), dict):
            raise ValueError(f"manifest {manifest}: files: missing or not a mapping")
    try:
        name = os.path.relpath(Path(out).resolve(), manifest.resolve().parent)
    except ValueError:
        name = str(Path(out).resolve())
    data["files"][name] = {
        "command": "python -m holdem.cli.build_buckets " + shlex.join(argv),
        "params": params,
        "format": FORMAT_VERSION,
        "generator_version": generator_version,
        "sha256": sha256,
        "size_bytes": size,
        "build_seconds": round(seconds, 1),
        "built": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count()},
        "versions": {"holdem": __version__, "numba": numba.__version__,
                     "numpy": np.__version__, "python": sys.version.split()[0]},
    }
    manifest.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(manifest, "w") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)

    from holdem.abstraction import bucket_build, bucket_file
    params = bucket_file.BucketParams(
        k_preflop=args.k_preflop, k_flop=args.k_flop, k_turn=args.k_turn,
        k_river=args.k_river, num_players=args.num_players, seed=args.seed,
        preflop_samples=args.preflop_samples, turn_samples=args.turn_samples,
        river_samples=args.river_samples, method=args.method,
        kmeans_iters=args.kmeans_iters, kmeans_sample=args.kmeans_sample)
    try:
        params.validate()
    except ValueError as exc:       # "k_turn must be ...": named as its flag
        field, _, rest = str(exc).partition(" ")
        parser.error(f"--{field.replace('_', '-')} {rest}")
    out = Path(args.out)
    if out.is_dir():
        parser.error(f"--out {out} is a directory")
    progress = None if args.quiet else ProgressBar()
    start = time.perf_counter()
    try:
        header, arrays = bucket_build.build_buckets(params, progress=progress,
                                               num_threads=args.threads or None)
    finally:
        if progress:
            progress.close()
    try:
        bucket_file.save_buckets(out, header, arrays)
    except OSError as exc:
        print(f"{parser.prog}: error: cannot write {out}: {exc.strerror}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - start
    sha256 = bucket_file.bucket_file_checksum(out)
    size = out.stat().st_size
    if args.manifest:
        try:
            write_manifest(args.manifest, out, argv, header["params"], sha256, size, seconds,
                           header["generator"]["version"])
        except (OSError, ValueError) as exc:
            print(f"{parser.prog}: error: {exc}", file=sys.stderr)
            return 2
    print(f"wrote {out}: method={params.method} k={params.k_preflop}/{params.k_flop}/"
          f"{params.k_turn}/{params.k_river} num_players={params.num_players} "
          f"seed={params.seed} bytes={size} sha256={sha256} seconds={seconds:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
