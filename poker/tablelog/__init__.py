"""The table log: what both services know of the tables stream, in one home.

A table is one subject of the tables stream, each record one sealed ``TableEventBatch``. The
dealer writes it (its ``TableService`` decides with the engine and appends here); the wallet
reads it (its consumer moves the money) and, for an abandoned table only, appends the engine's
close. Neither service imports the other: both import this package.

- :mod:`poker.tablelog.settings`: the stream's and buckets' names (:class:`TableLogSettings`, one
  owner).
- :mod:`poker.tablelog.repository`: the tables as one generic
  :class:`~poker.eventstore.aggregate.Aggregate` (rebuild = snapshot + tail, append one
  command's batch, retry, snapshots) and the reads of the command index's archive;
  :mod:`poker.tablelog.codec`: what its records and snapshots hold, each record's seal checked.
- :mod:`poker.tablelog.seals`: who may seal which batch (the dealer anything, the wallet its close).
- :mod:`poker.tablelog.snapshot_codec`: the table snapshot's bytes;
  :mod:`poker.tablelog.command_ids`: the
  index of every command id a table's log holds.
- :mod:`poker.tablelog.feed`: following a table's log live, and listing the tables.
- :mod:`poker.tablelog.metrics`: the repository's counters, registered on the caller's registry.
"""
