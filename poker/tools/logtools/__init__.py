"""The operator's tools over the table log itself, no dealer needed: rebuild a table to any
version, check it (the hash chain, every committed deck, the seals), export its hands as PHH,
and judge a record's removal.

Everything here works on records as they are stored (:func:`read_records` reads them from
JetStream with the operator's NATS connection); the fold is the engine's own, the chain
:mod:`poker.tablelog.chain`'s and the deck check :mod:`poker.engine.fairness_check`'s. The
chain is what anyone holding the log checks; with the room's public keys
(``log-keys-public.json``: no private key, no secret) :func:`seal_problems` checks the seals
too, the way the services do (every record screened, the signature of each run's head verified,
each record's when that fails). The decks, seeds and private cards are encrypted to the dealers'
deck key (:mod:`poker.tablelog.secrets`): with it (``deck_keys``) every hand is rebuilt whole
and its deck checked; without it the money still folds, and the hands whose secrets stay sealed
are marked (``HandRecord.sealed``): their decks are not checked and they are not exported.

By responsibility: :mod:`~poker.tools.logtools.replay` (the rebuild, from the first record or a
snapshot), :mod:`~poker.tools.logtools.checks` (what is wrong: chain, decks, seals, a
snapshot), :mod:`~poker.tools.logtools.checkpoints` (where a verify resumes),
:mod:`~poker.tools.logtools.export` (PHH) and :mod:`~poker.tools.logtools.removal`
(``pokerctl log remove-record``'s verdict). Their public names are all here.
"""

from poker.tools.logtools.checkpoints import Checkpoint, CheckpointStore
from poker.tools.logtools.checks import seal_problems, snapshot_difference, verify_replayed
from poker.tools.logtools.export import export_phhs
from poker.tools.logtools.removal import Removal, judge_removal
from poker.tools.logtools.replay import (
    HandRecord,
    Replayed,
    Start,
    latest_snapshot,
    read_log,
    read_records,
    replay_records,
)

__all__ = [
    "Checkpoint",
    "CheckpointStore",
    "HandRecord",
    "Removal",
    "Replayed",
    "Start",
    "export_phhs",
    "judge_removal",
    "latest_snapshot",
    "read_log",
    "read_records",
    "replay_records",
    "seal_problems",
    "snapshot_difference",
    "verify_replayed",
]
