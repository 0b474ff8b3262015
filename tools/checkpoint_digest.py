"""Print a digest of what a checkpoint says about training, leaving out when and how long.

Two runs of the same config and seed in one process write the same store, counters, schedule
and RNG state; only the creation time, the training seconds and the library versions differ.
This digest covers everything else (every array's bytes, dtype and shape, and the header minus
``created``, ``elapsed`` and ``versions``), so a refactor that must not change behaviour can be
checked bit for bit::

    python -m holdem.cli.train_blueprint --game leduc --iters 20000 --num-workers 0 \\
        --logdir /tmp/a --quiet
    python tools/checkpoint_digest.py /tmp/a          # newest checkpoint of a logdir, or a file

``--arrays`` hashes the arrays and the iteration count only, for comparing with a version whose
header gained keys that change nothing when left at their defaults (e.g. a new config key).
"""

import argparse
import hashlib
import sys
from pathlib import Path

import msgpack

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from holdem import checkpoint  # noqa: E402

VARYING = ("created", "elapsed", "versions", "arrays")


def digest(path, arrays_only=False):
    """(sha256 hex of the training content, iterations) of the checkpoint at ``path``
    (``arrays_only``: of its arrays and iteration count alone)."""
    ckpt = checkpoint.load(checkpoint.resolve(path))
    header = ({"iterations": ckpt.iterations} if arrays_only
              else {k: v for k, v in ckpt.header.items() if k not in VARYING})
    h = hashlib.sha256(msgpack.packb(header, use_bin_type=True))
    for name in sorted(ckpt.arrays):
        arr = ckpt.arrays[name]
        h.update(f"{name}:{arr.dtype.str}:{arr.shape}".encode())
        h.update(memoryview(arr.copy(order="C")).cast("B"))
    return h.hexdigest(), ckpt.iterations


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("paths", nargs="+", help="checkpoint files or logdirs (newest checkpoint)")
    parser.add_argument("--arrays", action="store_true",
                        help="hash the arrays and the iteration count only, not the header")
    args = parser.parse_args(argv)
    for path in args.paths:
        sha, iterations = digest(path, args.arrays)
        print(f"{sha}  {iterations:>12,} it  {path}")


if __name__ == "__main__":
    main()
