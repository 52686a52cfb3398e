"""A lease value read from the bucket is hostile until checked: anything the lease store did
not write names no owner (the lease counts as someone else's), whatever its bytes, and never
raises (a deep nesting would overflow the JSON parser's stack)."""

from __future__ import annotations

import pytest

from poker.eventstore.leases import _decode, _encode


@pytest.mark.parametrize(
    "value",
    [
        b"[" * 100_000,
        b"[" * 2_000 + b"]" * 2_000,
        b'{"owner": ' * 900 + b"1" + b"}" * 900,
        b'{"owner": "' + b"x" * 10_000 + b'"}',
        b'{"owner": 7}',
        b'["owner"]',
        b"\xff\xfe",
        b"",
        None,
    ],
)
def test_a_value_the_store_did_not_write_names_no_owner(value: bytes | None) -> None:
    assert _decode(value) is None


@pytest.mark.parametrize("owner", ["dealer-host-4242-ab12cd", "\U0001f0a1" * 256, "x" * 256])
def test_every_owner_id_the_store_writes_reads_back(owner: str) -> None:
    assert _decode(_encode(owner)) == owner
