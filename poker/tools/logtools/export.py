"""The hands of a rebuilt table log as one PHH file (``.phhs``), the form PokerKit writes."""

from __future__ import annotations

from collections.abc import Sequence

from poker.engine.phh import export_hand
from poker.tools.logtools.replay import HandRecord

__all__ = ["export_phhs"]


def export_phhs(
    hands: Sequence[HandRecord],
    *,
    player: str | None = None,
    since_ms: int | None = None,
    until_ms: int | None = None,
    first: int = 1,
) -> tuple[str, int]:
    """The finished hands (of ``player``'s, started in ``[since_ms, until_ms)``) as one
    ``.phhs`` text (``[first]``, ``[first + 1]``, ... tables, the form PokerKit writes: a
    room's export numbers on from one table's to the next's) and how many; a hand whose
    secrets stayed encrypted (its cards unknown) is left out."""
    parts: list[str] = []
    for hand in hands:
        if not hand.finished or hand.sealed or (player is not None and not hand.dealt_in(player)):
            continue
        if since_ms is not None and hand.started_at < since_ms:
            continue
        if until_ms is not None and hand.started_at >= until_ms:
            continue
        parts.append(f"[{first + len(parts)}]\n{export_hand(hand.events).strip()}\n")
    return "\n".join(parts), len(parts)
