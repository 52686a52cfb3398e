"""A lease keeper's renewals are spread in time: leases taken in one burst (a dealer starting, or
taking over hundreds of tables) must not be renewed in one burst every interval ever after."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from poker.eventstore.leases import InMemoryLeaseStore, Lease, LeaseKeeper


def keeper(ttl_s: float, seed: int) -> LeaseKeeper:
    store = InMemoryLeaseStore(ttl_s)
    lease = Lease("table.t1", "dealer-a", revision=1, expires_at=ttl_s)
    return LeaseKeeper(store, lease, rng=random.Random(seed))


@given(ttl_s=st.floats(min_value=0.5, max_value=600.0), seed=st.integers(0, 2**32))
def test_every_wait_is_within_a_fifth_of_a_third_of_the_ttl(ttl_s: float, seed: int) -> None:
    waits = [keeper(ttl_s, seed).next_wait() for _ in range(20)]
    assert all(0.8 * ttl_s / 3 <= wait <= 1.2 * ttl_s / 3 for wait in waits)


def test_a_burst_of_leases_is_renewed_over_the_fifth_either_side_not_at_once() -> None:
    rng = random.Random(7)
    store = InMemoryLeaseStore(10.0)
    keepers = [
        LeaseKeeper(store, Lease(f"table.t{n}", "dealer-a", revision=1, expires_at=10.0), rng=rng)
        for n in range(500)
    ]
    firsts = sorted(each.next_wait() for each in keepers)
    # Spread over most of 0.8-1.2 intervals (2.67-4.0 s): no tenth of the burst within 10 ms.
    assert firsts[-1] - firsts[0] > 1.0
    assert min(firsts[i + 50] - firsts[i] for i in range(len(firsts) - 50)) > 0.01
