"""The consumer's per-table views, saved beside the journal's snapshot so a restart resumes each
open table where it stopped instead of re-reading the table's whole log.

What is saved, per open table: its :class:`~poker.wallet.mapping.TableView` (seats, stacks at the
hand boundary, the last money version, ...) and its hash-chain head
(:class:`~poker.tablelog.chain.ChainState`: the hash and position of the last record folded), as
of a record whose every signature was verified (no deferred signature is ever saved: a view is
saved only when nothing of it waits to be vouched for). Closed tables are never saved.

**Never trusted for being in the wallet's bucket.** The value is sealed with the wallet's key
exactly as the journal's snapshot is (:class:`~poker.eventstore.sealing.SealedSnapshotStore`:
a MAC binding the bucket, the key and the position), checked before it is decoded, and it is
plain JSON (never a pickle), decoded field by field with its types checked. A value that fails
either is ignored (counted in ``poker_wallet_consumer_views_restored{outcome="refused"}``): every
table is then rebuilt from its log, as before. A view that opens but does not fit the table's
next message (its seal binds another previous position, its chain link another hash) is dropped
the same way and the table rebuilt from its log: money is only ever applied after a view whose
chain head the message itself links to.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from poker.tablelog.chain import ChainState
from poker.wallet.mapping import TableView

#: The snapshot key of the saved views: beside the ledger's snapshot, in the journal's bucket
#: (:func:`poker.eventstore.snapshots.beside`).
VIEWS_KEY: Final = "ledger.a.table-views"
#: Bumped when the layout changes: another layout is ignored (rebuilt from the logs).
VIEWS_FORMAT: Final = 1


class ViewsRefused(ValueError):
    """The saved views are of another layout or malformed: none is used."""


def encode_views(views: Mapping[str, tuple[TableView, ChainState]]) -> bytes:
    """The views as the saved bytes (JSON: never unpickled)."""
    tables = {
        table_id: {
            "position": view.position,
            "version": view.version,
            "game": view.game,
            "seats": {str(seat): player for seat, player in view.seats.items()},
            "stacks": dict(view.stacks),
            "last_money_version": view.last_money_version,
            "last_at": view.last_at,
            "running_turn_ms": view.running_turn_ms,
            "chain": _chain(chain),
        }
        for table_id, (view, chain) in sorted(views.items())
    }
    return json.dumps({"format": VIEWS_FORMAT, "tables": tables}, sort_keys=True).encode()


def _chain(chain: ChainState) -> list[Any]:
    return [
        _hex(chain.last_hash),
        _hex(chain.previous_hash),
        chain.last_version,
        chain.started,
        chain.position,
        chain.last_at,
        chain.last_stored_at,
    ]


def _hex(value: bytes | None) -> str | None:
    return None if value is None else value.hex()


def decode_views(data: bytes) -> dict[str, tuple[TableView, ChainState]]:
    """The views of :func:`encode_views`' bytes (already authenticated); raises
    :class:`ViewsRefused` for anything else."""
    try:
        loaded = json.loads(data)
        if not isinstance(loaded, dict) or loaded.get("format") != VIEWS_FORMAT:
            raise ViewsRefused("another layout")
        tables = loaded["tables"]
        if not isinstance(tables, dict):
            raise ViewsRefused("no tables")
        return {_str(t): _table(_str(t), fields) for t, fields in tables.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        if isinstance(error, ViewsRefused):
            raise
        raise ViewsRefused(f"malformed saved views: {type(error).__name__}") from error


def _table(table_id: str, fields: Any) -> tuple[TableView, ChainState]:
    if not isinstance(fields, dict):
        raise ViewsRefused("a table is no object")
    chain = fields["chain"]
    if not isinstance(chain, list) or len(chain) != 7:
        raise ViewsRefused("a chain head is malformed")
    turn = fields["running_turn_ms"]
    view = TableView(
        table_id,
        position=_int(fields["position"]),
        version=_int(fields["version"]),
        game=_str(fields["game"]),
        seats={_int(int(seat)): _str(p) for seat, p in _dict(fields["seats"]).items()},
        stacks={_str(p): _int(amount) for p, amount in _dict(fields["stacks"]).items()},
        last_money_version=_int(fields["last_money_version"]),
        last_at=_int(fields["last_at"]),
        running_turn_ms=None if turn is None else _int(turn),
    )
    head = ChainState(
        _bytes(chain[0]),
        _bytes(chain[1]),
        _int(chain[2]),
        _bool(chain[3]),
        _int(chain[4]),
        None if chain[5] is None else _int(chain[5]),
        None if chain[6] is None else _int(chain[6]),
    )
    if head.last_hash is None or head.position != view.position or view.position <= 0:
        raise ViewsRefused("a chain head does not stand at its view")
    return view, head


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ViewsRefused("not an integer")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ViewsRefused("not a string")
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ViewsRefused("not a boolean")
    return value


def _dict(value: Any) -> dict[Any, Any]:
    if not isinstance(value, dict):
        raise ViewsRefused("not an object")
    return value


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes.fromhex(_str(value))
