"""Card abstraction for No-Limit Hold'em: hand isomorphism and card buckets.

Layout
    ``isomorphism``  :class:`~holdem.abstraction.isomorphism.HandIndexer`: dense indices of
                     hands up to suit permutation (tables for the kernels).
    ``buckets``      build, save, load and validate bucket files; the run-time API
                     (:data:`BucketTables`, :func:`deal_buckets`, :func:`make_work`,
                     :func:`num_buckets`). Its docstring states what the file stores and what is
                     computed at run time.
    ``deal_kernels``   the @njit kernels of a deal: isomorphism index, run-time lookup.
    ``build_kernels``  the @njit kernels that build bucket files: census, hand-strength sweeps.
"""

from holdem.abstraction.buckets import (
    PREFLOP_CLASS_NAMES,
    BucketFile,
    BucketFileError,
    BucketParams,
    BucketTables,
    bucket_file_checksum,
    build_buckets,
    deal_buckets,
    load_buckets,
    lookup_buckets,
    make_work,
    num_buckets,
    preflop_class,
    preflop_equity,
    river_hand_strength,
    save_buckets,
)

__all__ = ["PREFLOP_CLASS_NAMES", "BucketFile", "BucketFileError", "BucketParams",
           "BucketTables", "bucket_file_checksum", "build_buckets", "deal_buckets",
           "load_buckets", "lookup_buckets", "make_work", "num_buckets", "preflop_class",
           "preflop_equity", "river_hand_strength", "save_buckets"]
