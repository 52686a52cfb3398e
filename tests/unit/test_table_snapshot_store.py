"""The table snapshots' sealed store (poker/tablelog/snapshot_store.py): the one rule of which
table snapshot anyone loads (a dealer's seal only; no HMAC seal once the keyring has
``hmac_below``), built in one place for the services' repository and pokerctl's replay."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from poker.eventstore.sealing import (
    Keyring,
    Refusal,
    SealedSnapshotStore,
    SnapshotRefused,
    Writer,
    new_keyring,
    new_service_keyrings,
)
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.tablelog.snapshot_store import sealed_table_snapshots

ROOT = Path(__file__).resolve().parents[2]
ROOM = new_service_keyrings("snap")


async def test_a_dealers_snapshot_loads_with_the_public_keys() -> None:
    inner = InMemorySnapshotStore()
    dealer = sealed_table_snapshots(inner, ROOM.dealer, bucket="B", writer=Writer.DEALER)
    assert await dealer.save("t1", 7, b"state")
    reader = sealed_table_snapshots(inner, ROOM.public, bucket="B", writer=Writer.DEALER)
    loaded = await reader.load("t1")
    assert loaded is not None and (loaded.position, loaded.data) == (7, b"state")


async def test_a_wallets_snapshot_is_refused_and_heard() -> None:
    inner = InMemorySnapshotStore()
    wallet = SealedSnapshotStore(inner, ROOM.wallet, bucket="B", writer=Writer.WALLET)
    assert await wallet.save("t1", 7, b"forged")
    heard: list[Refusal] = []
    store = sealed_table_snapshots(
        inner, ROOM.wallet, bucket="B", writer=Writer.WALLET, on_refused=heard.append
    )
    with pytest.raises(SnapshotRefused):
        await store.load("t1")
    assert heard == [Refusal.WRONG_WRITER]


async def test_an_hmac_snapshot_is_refused_once_the_keyring_signs() -> None:
    old = new_keyring("old")
    inner = InMemorySnapshotStore()
    hmac_made = sealed_table_snapshots(inner, old, bucket="B", writer=Writer.DEALER)
    assert await hmac_made.save("t1", 5, b"state")
    assert await hmac_made.load("t1") is not None  # before the signatures: accepted
    ring = Keyring({**old.keys, **ROOM.dealer.keys}, ROOM.dealer.sign_with, hmac_below=10)
    with pytest.raises(SnapshotRefused) as refused:
        await sealed_table_snapshots(inner, ring, bucket="B", writer=Writer.DEALER).load("t1")
    assert refused.value.reason is Refusal.RETIRED_HMAC


def test_the_table_snapshot_store_is_built_in_one_place() -> None:
    # A second construction of a table snapshot store could drift from the rule (accept a
    # wallet's seal, or an HMAC one past hmac_below): the repository and pokerctl call the one.
    builders = [
        str(path.relative_to(ROOT))
        for folder in ("poker/tablelog", "poker/tools", "poker/dealer")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "SealedSnapshotStore"
    ]
    assert builders == ["poker/tablelog/snapshot_store.py"]
