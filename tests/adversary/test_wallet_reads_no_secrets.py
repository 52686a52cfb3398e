"""Issue #24: the wallet reads only what moves money. On a real authorizing nats-server, with the
dealer and the wallet over real gRPC, players play real-money hands of a button game, a stud game
and a draw game; then an attacker holding the wallet's NATS credentials (a compromised wallet
host, a leaked password) reads everything that user can: every record of the table stream
(the reaper's own reads, and JetStream's direct get) and the dealer's snapshot bucket. No deck,
no server seed (this hand's or the next one's) and no down card, draw or stub of any hand is in
those bytes - the test knows them from the dealer's side, decrypting with the deck key. The
wallet still settles every hand exactly, and still closes an abandoned table (its void writes
no seed it cannot read)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import AsyncIterator

import nats
import nats.errors
import nats.js.errors
import pytest
from nats.aio.client import Client as Nats

from poker.dealer.wallet_client import GrpcWallet
from poker.eventstore.jetstream import BatchDirectGet, JetStreamEventStore
from poker.servicekit.nats_connect import load_credentials
from poker.servicekit.nats_permissions import TABLES_API_PREFIX, WALLET_USER, inbox_prefix
from poker.tablelog.seals import CLOSE_CLOCK_MARGIN_MS, CLOSE_GRACE_MS
from poker.tablelog.secrets import take_secrets
from poker.testing.dealer import TEST_DECK_KEYS, DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, eventually, wallet_settings
from poker.tools.bot import play_turn
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import wallet_pb2 as wpb
from tests.integration.test_wallet_flow import (
    BUY_IN,
    DEPOSIT,
    PLAYERS,
    TABLES,
    Room,
    cid,
    consumer_caught_up,
    leave_table,
    open_table,
    play_hands,
)

HANDS = 6
#: The abandoned table's action timer: long enough for a bot's turn on a loaded machine.
ACTION_TIMER_MS = 5_000
#: The reaper closes a table whose hand runs once the hand's longest turn, the grace and its
#: clock margin passed since the dealer's last record (and the lease was free for 1 s).
REAPED_WITHIN_S = (ACTION_TIMER_MS + CLOSE_GRACE_MS + CLOSE_CLOCK_MARGIN_MS) / 1000 + 30


@pytest.fixture
async def room(nats_server: NatsServer) -> AsyncIterator[Room]:
    # Snapshots every 5 events: the dealer's bucket holds running hands for the attacker.
    dealer_settings = namespace_settings(nats_server.url, new_secret(), snapshot_every=5)
    settings = wallet_settings(dealer_settings, hold_ttl_s=60, abandon_after_s=1.0)
    async with WalletHarness(settings) as wallet:
        port = GrpcWallet([wallet.address], dealer_settings.token_secret)
        try:
            async with DealerHarness(dealer_settings, wallet=port) as dealer:
                yield Room(wallet, dealer)
        finally:
            await port.close()


async def as_wallet_user(server: NatsServer) -> Nats:
    """A NATS connection with the wallet's own credentials: what a compromised wallet holds."""
    credentials = load_credentials(str(server.credentials(WALLET_USER)))
    return await nats.connect(
        servers=[server.service_url],
        user=credentials.user,
        password=credentials.password,
        inbox_prefix=inbox_prefix(WALLET_USER),
        allow_reconnect=False,
    )


async def stolen_bytes(room: Room, server: NatsServer, table_id: str) -> tuple[bytes, int]:
    """Everything the wallet's NATS user reads of the table (its log through the reaper's own
    reads and JetStream's direct get, the dealer's snapshot of it), and how many records."""
    settings = room.dealer.settings
    attacker = await as_wallet_user(server)
    try:
        # The dealer's side, as the wallet reaches it: its account's imports.
        js = attacker.jetstream(timeout=2.0, prefix=TABLES_API_PREFIX)
        direct = BatchDirectGet(attacker, TABLES_API_PREFIX)
        store = JetStreamEventStore(js, settings.table_log.stream_settings, direct=direct)
        records = [record async for record in store.read(table_id)]
        stolen = [record.data for record in records]
        for record in records:
            stolen += [_header_bytes(value) for value in (record.headers or {}).values()]
        # The namespace's stream holds this table alone: its sequences are 1..records.
        for sequence in range(1, len(records) + 1):
            try:
                message = await js.get_msg(settings.table_stream, sequence, direct=True)
            except (nats.errors.Error, nats.js.errors.Error, TimeoutError):
                break  # direct get not granted to the wallet: nothing more to read that way
            stolen.append(message.data or b"")
        try:
            kv = await js.key_value(settings.table_snapshot_bucket)
            entry = await kv.get(table_id)
            stolen.append(entry.value or b"")
        except (nats.errors.Error, nats.js.errors.Error, TimeoutError):
            pass  # the bucket is not the wallet's to read: nothing stolen there
    finally:
        await attacker.close()
    return b"".join(stolen), len(records)


def _header_bytes(value: str) -> bytes:
    """A header as what it carries: a seal's parts (key id, position, signature), its base64
    signature decoded. As text, a 4-character card string such as ``6d2c`` turns up in some
    86-character base64 signatures by chance; in the 64 bytes they stand for it does not."""
    carried = []
    for part in value.split(":"):
        try:
            decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        except (binascii.Error, ValueError):
            decoded = b""
        carried.append(decoded if len(part) >= 40 and decoded else part.encode())
    return b"\0".join(carried)


async def dealer_secrets(room: Room, table_id: str) -> tuple[list[bytes], int]:
    """Every secret the dealer used at the table (decrypted with the deck key), but card strings
    some public text also holds (a board, an upcard, a shown hand), and how many decks."""
    assert room.dealer.dealer is not None
    repository = room.dealer.dealer.repository
    events: list[pb.TableEvent] = []
    async for record in repository.read(table_id):
        opened = TEST_DECK_KEYS.open_batch(table_id, pb.TableEventBatch.FromString(record.data))
        events += opened.events
    public = [e.board_dealt.cards for e in events if e.HasField("board_dealt")]
    public += [e.hand_shown.cards for e in events if e.HasField("hand_shown")]
    public += [
        h.up for e in events if e.HasField("hole_cards_dealt") for h in e.hole_cards_dealt.hands
    ]
    taken = take_secrets(pb.TableEventBatch(events=events))
    secrets = [
        value
        for entry in taken.events
        for value in entry.values
        if len(value) >= 4 and not any(value.decode("latin-1") in text for text in public)
    ]
    decks = sum(1 for e in events if e.HasField("hand_started") and e.hand_started.deck)
    return secrets, decks


@pytest.mark.parametrize("game", sorted(TABLES))
async def test_the_wallet_user_reads_no_deck_seed_or_card_and_still_settles_every_hand(
    room: Room, nats_server: NatsServer, game: str
) -> None:
    for name in PLAYERS:
        await room.operator.deposit(name, DEPOSIT)
    table_id = await open_table(room, game=game)
    for number, name in enumerate(PLAYERS, start=1):
        await room.player(name).call(
            "SitDown",
            dpb.SitDownRequest(command_id=cid(), table_id=table_id, seat=number, buy_in=BUY_IN),
        )
    view = await play_hands(room, table_id, hands=HANDS)
    assert room.dealer.dealer is not None
    await room.dealer.dealer.repository.flush_snapshots()

    stolen, records = await stolen_bytes(room, nats_server, table_id)
    secrets, decks = await dealer_secrets(room, table_id)
    assert records > HANDS and decks >= HANDS
    assert len(secrets) >= 2 * decks  # every deck and seed, and the down cards
    leaked = [secret for secret in secrets if secret in stolen]
    assert not leaked, f"{len(leaked)} secrets readable by the wallet's user"

    # ... and the wallet settled every hand exactly without them.
    escrow = await consumer_caught_up(room, table_id)
    stacks = {seat.player_id: seat.stack for seat in view.seats}
    assert {line.player_id: line.amount for line in escrow.escrow} == stacks
    await leave_table(room, table_id)
    escrow = await consumer_caught_up(room, table_id)
    assert escrow.total == 0
    balances = [await room.operator.balance(name) for name in PLAYERS]
    rake = await room.operator.call("GetRakeReport", wpb.GetRakeReportRequest())
    assert sum(b.cash for b in balances) + rake.total_rake == DEPOSIT * len(PLAYERS)
    assert rake.total_hands >= HANDS
    report = await room.operator.audit()
    assert report.clean, report.breaches


async def test_the_wallet_closes_an_abandoned_table_without_reading_its_seed(
    room: Room, nats_server: NatsServer
) -> None:
    for name in PLAYERS:
        await room.operator.deposit(name, DEPOSIT)
    # The close voids the running hand: readers accept it only once the hand's longest turn
    # and the grace passed since the dealer's last record (CLOSE_GRACE_MS): a short turn.
    table_id = await open_table(room, timer_ms=ACTION_TIMER_MS)
    for number, name in enumerate(PLAYERS, start=1):
        await room.player(name).call(
            "SitDown",
            dpb.SitDownRequest(command_id=cid(), table_id=table_id, seat=number, buy_in=BUY_IN),
        )
    # One bet into a hand dealt from a committed deck, then the dealer leaves with it running.
    view = await eventually(
        lambda: room.dealer_op.table(table_id), lambda v: v.hand.seat_to_act > 0
    )
    to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
    await play_turn(room.player(to_act.player_id), view)
    harness = room.dealer
    await harness.__aexit__(None, None, None)  # drained: the lease released, the hand runs
    harness.dealer, harness.channel = None, None  # stopped once: the fixture's exit is a no-op

    # Nobody takes it back: the wallet's reaper closes it and everyone is refunded.
    await eventually(
        lambda: room.operator.call("GetTableEscrow", wpb.GetTableEscrowRequest(table_id=table_id)),
        lambda e: e.total == 0 and e.last_applied_position > 0,
        timeout_s=REAPED_WITHIN_S,
    )
    for name in PLAYERS:
        balance = await room.operator.balance(name)
        assert (balance.cash, balance.held) == (DEPOSIT, 0)
    report = await room.operator.audit()
    assert report.clean, report.breaches

    attacker = await as_wallet_user(nats_server)
    try:
        store = JetStreamEventStore(
            attacker.jetstream(prefix=TABLES_API_PREFIX),
            room.dealer.settings.table_log.stream_settings,
            direct=BatchDirectGet(attacker, TABLES_API_PREFIX),
        )
        batches = [pb.TableEventBatch.FromString(r.data) async for r in store.read(table_id)]
    finally:
        await attacker.close()
    close = batches[-1]
    bodies = [event.WhichOneof("body") for event in close.events]
    assert close.command_id.startswith("wallet-close-") and "hand_voided" in bodies
    assert "deck_revealed" not in bodies and not close.sealed_secrets  # no seed it cannot read
    started = next(b for b in batches if any(e.HasField("hand_started") for e in b.events))
    assert started.sealed_secrets  # the void's seed stays encrypted, for the operator
