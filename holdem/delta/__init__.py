"""The delta wing: what a worker sends after each flush and how the main process merges it.

- :mod:`holdem.delta.split` (on :mod:`holdem.delta.shard_kernels`): a flush's delta buffer split
  into shards by value offset (rows the store holds) and keys (rows new to it), with the
  strategy updates and cold rows a worker holds back within a batch;
- :mod:`holdem.delta.records` (on :mod:`holdem.delta.record_kernels`): the split as one msgpack
  *record*, and the arena a merge pass indexes records in;
- :mod:`holdem.delta.merge`: a merge pass over many records (checked, then added shard by shard
  on the merge threads of a :class:`holdem.delta.merge.RowMerger`), and a replica's merge of one.

Its own floor, above the store (docs/architecture.md): it imports only the store and the
ground floor, and only the runtime imports it.
"""
