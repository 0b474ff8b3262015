"""Card abstraction for No-Limit Hold'em: bet menus, hand isomorphism and card buckets.

Layout
    ``actions``        bet menus and translation of off-menu bets.
    ``isomorphism``    :class:`~holdem.abstraction.isomorphism.HandIndexer`: dense indices of
                       hands up to suit permutation (tables for the kernels).
    ``preflop``        the 169 preflop hand classes and their names.
    ``bucket_tables``  the run-time API (:data:`BucketTables`, :func:`make_work`,
                       :func:`lookup_buckets`); its docstring states what each street's buckets
                       are, what the file stores and what is computed at run time.
    ``bucket_file``    save, load and validate bucket files (:class:`BucketParams`, the format).
    ``bucket_build``   build a bucket file's arrays and header (features, quantile bins).
    ``emd``            the potential-aware (k-means, earth mover's distance) flop and turn buckets.
    ``deal_kernels``   the @njit kernels of a deal: isomorphism index, run-time lookup
                       (:func:`deal_buckets`, :func:`num_buckets`).
    ``build_kernels``  the @njit kernels that build bucket files: census, hand-strength sweeps.
    ``emd_kernels``    the @njit kernels of ``emd``: histograms and distances.
"""

from holdem.abstraction.bucket_build import build_buckets, preflop_equity
from holdem.abstraction.bucket_file import (
    BucketFile,
    BucketFileError,
    BucketParams,
    bucket_file_checksum,
    load_buckets,
    save_buckets,
)
from holdem.abstraction.bucket_tables import (
    BucketTables,
    lookup_buckets,
    make_work,
    river_hand_strength,
)
from holdem.abstraction.deal_kernels import deal_buckets, num_buckets
from holdem.abstraction.preflop import PREFLOP_CLASS_NAMES, preflop_class

__all__ = ["PREFLOP_CLASS_NAMES", "BucketFile", "BucketFileError", "BucketParams",
           "BucketTables", "bucket_file_checksum", "build_buckets", "deal_buckets",
           "load_buckets", "lookup_buckets", "make_work", "num_buckets", "preflop_class",
           "preflop_equity", "river_hand_strength", "save_buckets"]
