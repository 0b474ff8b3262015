"""Old import path, kept only while work in progress moves off it (issue 23): holdem.games
(load_buckets, BucketFileError, bucket_file_checksum: now in :mod:`.bucket_file`) and
holdem.analysis.export (preflop_hands: now in :mod:`.preflop`). Delete once nothing imports it."""

from holdem.abstraction.bucket_file import BucketFileError, bucket_file_checksum, load_buckets
from holdem.abstraction.preflop import preflop_hands

__all__ = ["BucketFileError", "bucket_file_checksum", "load_buckets", "preflop_hands"]
