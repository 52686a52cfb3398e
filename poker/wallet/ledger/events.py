"""Encoding between the ledger's protobuf events and its domain values.

``decide`` writes events with :func:`transaction_event`; ``evolve`` reads them back with
:func:`decode_transaction`. Nothing else touches the wire format.

>>> event = transaction_event(
...     sequence=1, transaction_id=1, recorded_at=1_000, kind=Kind.DEPOSIT,
...     idempotency_key="client:k1", postings=[("world:external", -500), ("cash:ann", 500)],
...     occurred_at=1_000)
>>> tx, hold = decode_transaction(event)
>>> tx.kind.name, [amount for _, amount in tx.postings], hold
('DEPOSIT', [-500, 500], None)
"""

from __future__ import annotations

from collections.abc import Iterable

from poker.v1 import ledger_pb2 as pb
from poker.wallet.ledger.commands import SourceEvent
from poker.wallet.ledger.state import Hold, Kind, Transaction


def transaction_event(
    *,
    sequence: int,
    transaction_id: int,
    recorded_at: int,
    kind: Kind,
    idempotency_key: str,
    postings: Iterable[tuple[str, int]],
    occurred_at: int,
    source: SourceEvent | None = None,
    hold: Hold | None = None,
    hand_id: str = "",
    game: str = "",
    rake: int = 0,
    reason: str = "",
    leaves_table: bool = False,
    player_id: str = "",
) -> pb.LedgerEvent:
    """A ``LedgerEvent`` at ``sequence`` carrying one ``TransactionPosted``."""
    body = pb.TransactionPosted(
        transaction_id=transaction_id,
        idempotency_key=idempotency_key,
        kind=kind.value,  # type: ignore[arg-type]  # Kind mirrors the proto enum's numbers
        postings=[pb.LedgerPosting(account=account, amount=amount) for account, amount in postings],
        occurred_at=occurred_at,
        hand_id=hand_id,
        game=game,
        rake=rake,
        reason=reason,
        leaves_table=leaves_table,
        player_id=player_id,
        source=None
        if source is None
        else pb.LedgerSource(
            table_id=source.table_id, position=source.position, occurred_at=source.occurred_at
        ),
    )
    if hold is not None:
        terms = body.hold
        terms.hold_id = hold.hold_id
        terms.player_id = hold.player_id
        terms.table_id = hold.table_id
        terms.amount = hold.amount
        terms.expires_at = hold.expires_at
    return pb.LedgerEvent(sequence=sequence, occurred_at=recorded_at, transaction_posted=body)


_KINDS = {kind.value: kind for kind in Kind}  # Kind(n) is an order of magnitude slower


def decode_transaction(event: pb.LedgerEvent) -> tuple[Transaction, Hold | None]:
    """The transaction of ``event`` and, for hold kinds, the hold's terms (status pending)."""
    body = event.transaction_posted
    table_id, position, source_at = "", 0, 0
    if body.HasField("source"):
        src = body.source
        table_id, position, source_at = src.table_id, src.position, src.occurred_at
    hold = None
    if body.HasField("hold"):
        terms = body.hold
        hold = Hold(
            hold_id=terms.hold_id,
            player_id=terms.player_id,
            table_id=terms.table_id,
            amount=terms.amount,
            expires_at=terms.expires_at,
        )
    tx = Transaction(
        transaction_id=body.transaction_id,
        idempotency_key=body.idempotency_key,
        kind=_KINDS[body.kind],
        postings=tuple([(p.account, p.amount) for p in body.postings]),
        occurred_at=body.occurred_at,
        recorded_at=event.occurred_at,
        source_table_id=table_id,
        source_position=position,
        source_occurred_at=source_at,
        hold_id=hold.hold_id if hold is not None else "",
        hand_id=body.hand_id,
        game=body.game,
        rake=body.rake,
        reason=body.reason,
        leaves_table=body.leaves_table,
        player_id=body.player_id,
    )
    return tx, hold
