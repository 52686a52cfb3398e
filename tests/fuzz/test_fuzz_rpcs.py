"""Fuzzing every RPC of both services over real gRPC against a real wallet and dealer.

For every method of ``poker.v1.DealerService`` and ``poker.v1.WalletService`` (read from the
descriptors), the requests are built field by field from the .proto descriptors
(:mod:`tests.fuzz.strategies`):
int64/int32/uint extremes and random values, the documented limits and one past them, unknown
enum numbers, long and odd strings, nested and repeated messages, the room's real ids and
command ids reused with other payloads, and bodies that are not protobuf. Each is sent with a
token of a role the method admits, of any role, or a bad one (none, garbage, forged). Asserted
for every request (:class:`tests.fuzz.world.World`): never INTERNAL or UNKNOWN, and a refused
request appended and changed nothing in either log.

``FUZZ_EXAMPLES`` (default 60) sets the examples per RPC; the run is derandomized (the same
requests every time) unless ``FUZZ_SEED`` names a seed, for longer exploratory runs:
``FUZZ_EXAMPLES=2000 FUZZ_SEED=7 pytest tests/fuzz``. The requests and statuses are printed
at the end of the run and written to ``fuzz-summary.json`` under pytest's temporary directory.
"""

from __future__ import annotations

import os
from typing import Any, Final

import pytest
from google.protobuf.descriptor import MethodDescriptor
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from poker.dealer.bounds import LIMITS as DEALER_LIMITS
from poker.servicekit.tokens import Role
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import wallet_pb2 as wpb
from poker.wallet.bounds import LIMITS as WALLET_LIMITS
from tests.fuzz.strategies import RequestStrategies
from tests.fuzz.world import POOLS, TEMPLATES, World

pytestmark = pytest.mark.slow

EXAMPLES: Final = int(os.environ.get("FUZZ_EXAMPLES", "60"))
SEED: Final = os.environ.get("FUZZ_SEED")

DEALER: Final = dpb.DESCRIPTOR.services_by_name["DealerService"]
WALLET: Final = wpb.DESCRIPTOR.services_by_name["WalletService"]
STRATEGIES: Final = {
    "DealerService": RequestStrategies(DEALER_LIMITS, POOLS),
    "WalletService": RequestStrategies(WALLET_LIMITS, POOLS),
}


def _methods() -> list[Any]:
    # CloseTable last among the dealer's: it may close the room's tables for the rest.
    dealer = sorted(DEALER.methods, key=lambda method: method.name == "CloseTable")
    return [
        pytest.param(method, id=f"{method.containing_service.name}.{method.name}")
        for method in (*dealer, *WALLET.methods)
    ]


def _fuzz_settings(test: Any) -> Any:
    configured = settings(
        max_examples=EXAMPLES,
        derandomize=SEED is None,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )(test)
    return seed(int(SEED))(configured) if SEED is not None else configured


@pytest.mark.parametrize("method", _methods())
def test_no_request_gets_internal_or_changes_anything_when_refused(
    world: World, method: MethodDescriptor
) -> None:
    service = method.containing_service.name
    strategies = STRATEGIES[service]
    body = strategies.body(method.input_type, TEMPLATES.get(method.input_type.full_name, ()))
    bodies = st.lists(body, min_size=1, max_size=3) if method.client_streaming else st.tuples(body)
    allowed = world.callers_for(service, method.name)
    callers = st.one_of(st.sampled_from(allowed), st.sampled_from(world.callers))

    @_fuzz_settings
    @given(caller=callers, requests=bodies)
    def attack(caller: Any, requests: Any) -> None:
        world.call(method, caller, list(requests))

    attack()


def test_the_room_still_adds_up(world: World) -> None:
    """After the attack every ledger invariant holds and each table's escrow matches the
    dealer's stacks (the wallet's Audit)."""
    report = world.run(world.room.wallet_client("op", Role.OPERATOR).audit())
    assert report.clean, list(report.breaches)
