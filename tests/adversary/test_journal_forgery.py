"""Adversary test of the wallet's journal (issue #24), on a real authorizing nats-server with a
running wallet and dealer: a crafted deposit of 10^9 is put into the journal subject, by the admin
user directly (unsealed, under a forged seal, sealed with the dealer's or the wallet's table-log
key), and the dealer's own user tries a JetStream API reply (a DIRECT.GET of a record it wrote,
with the journal as the reply subject: on one NATS account the server stored its answer there;
with the accounts of docs/security/nats.md it lands nowhere). Every record put there is
skipped: no money moves, the wallet keeps serving and settles a real hand, a restarted wallet
rebuilds to the same balances, and the Audit names each refused record."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from dataclasses import dataclass

import nats
from nats.aio.client import Client as Nats

from poker.dealer.wallet_client import GrpcWallet
from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.eventstore.sealing import SEAL_HEADER, Writer, seal_batch
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.servicekit.nats_connect import load_credentials
from poker.servicekit.nats_permissions import DEALER_USER, inbox_prefix
from poker.servicekit.tokens import Role
from poker.testing.dealer import (
    TEST_DEALER_LOG_KEYS,
    TEST_WALLET_LOG_KEYS,
    DealerHarness,
    harness_keyring,
    namespace_settings,
    new_secret,
)
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, eventually, wallet_settings
from poker.tools.bot import play_turn
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import ledger_pb2 as lpb
from poker.v1 import wallet_pb2 as wpb
from poker.wallet import ledger
from poker.wallet.journal import LEDGER_KEY, Journal, record_id

FORTUNE = 10**9
BUY_IN = 200


def cid() -> str:
    return uuid.uuid4().hex


@dataclass
class Attack:
    """Where the journal is, for the attacker, and the records it holds."""

    admin: Nats
    stream: str
    subject: str

    async def last_seq(self) -> int:
        info = await self.admin.jetstream().stream_info(self.stream)
        return int(info.state.last_seq)

    async def last_record(self) -> lpb.LedgerEventBatch:
        message = await self.admin.jetstream().get_last_msg(self.stream, self.subject)
        return lpb.LedgerEventBatch.FromString(message.data or b"")


def crafted_deposit(last: lpb.LedgerEventBatch, player: str, tag: str) -> bytes:
    """A valid ``LedgerEventBatch`` right after ``last`` (the next sequence and transaction id)
    crediting ``player`` with 10^9 from the outside world: what the wallet would fold on main."""
    previous = last.events[-1]
    body = previous.transaction_posted
    event = lpb.LedgerEvent(
        sequence=previous.sequence + 1,
        occurred_at=previous.occurred_at + 1,
        transaction_posted=lpb.TransactionPosted(
            transaction_id=body.transaction_id + 1,
            idempotency_key=f"client:{tag}",
            kind=body.kind,  # the last record is a deposit
            postings=[
                lpb.LedgerPosting(account="world:external", amount=-FORTUNE),
                lpb.LedgerPosting(account=f"cash:{player}", amount=FORTUNE),
            ],
            occurred_at=previous.occurred_at + 1,
            player_id=player,
        ),
    )
    return lpb.LedgerEventBatch(events=[event]).SerializeToString()


async def connect_as(server: NatsServer, user: str) -> Nats:
    credentials = load_credentials(str(server.credentials(user)))
    return await nats.connect(
        servers=[server.service_url],
        user=credentials.user,
        password=credentials.password,
        inbox_prefix=inbox_prefix(user),
        allow_reconnect=False,
    )


async def play_one_hand(dealer: DealerHarness, table_id: str) -> None:
    """The seated players play until one hand has started and ended."""
    operator = dealer.client("op", Role.OPERATOR)
    for _ in range(400):
        view = await operator.table(table_id)
        if not view.hand.seat_to_act:
            if view.hands_started >= 1:
                return
            await asyncio.sleep(0.01)
            continue
        to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
        try:
            await play_turn(dealer.client(to_act.player_id), view)
        except Exception:  # a stale view: look again
            continue
    raise AssertionError("the hand did not finish")


def refused_positions(report: wpb.AuditResponse) -> dict[int, str]:
    """Journal position -> the reason named, of the Audit's refused journal records."""
    found = {}
    for breach in report.breaches:
        if breach.kind == "refused_journal_record" and breach.subject.startswith("journal:"):
            reason = re.search(r"\((\w+)\)", breach.message)
            assert reason is not None, breach.message
            found[int(breach.subject.removeprefix("journal:"))] = reason.group(1)
    return found


async def test_foreign_journal_records_move_no_money_and_the_audit_names_them(
    nats_server: NatsServer,
) -> None:
    dealer_settings = namespace_settings(nats_server.url, new_secret(), snapshot_every=1000)
    settings = wallet_settings(dealer_settings, hold_ttl_s=600)
    admin = await nats.connect(nats_server.wallet_url)  # the journal's account's admin
    dealer_user = await connect_as(nats_server, DEALER_USER)
    wallet = WalletHarness(settings)
    try:
        await wallet.__aenter__()
        port = GrpcWallet([wallet.address], dealer_settings.token_secret)
        async with DealerHarness(dealer_settings, wallet=port) as dealer:
            attack = Attack(
                admin, settings.journal_stream, f"{settings.journal_subject_prefix}.{LEDGER_KEY}"
            )
            operator = wallet.client("op", Role.OPERATOR)
            await operator.deposit("mallory", 100)

            # 1. The admin user publishes crafted deposits straight into the journal, each one
            # right after the journal's last record (what a wallet would fold on main).
            ledger_key = TEST_WALLET_LOG_KEYS.signer(Writer.LEDGER)
            forged: dict[int, str] = {}
            for case in ("unsealed", "forged_seal", "dealer_key", "wallet_key"):
                last = await attack.last_seq()
                data = crafted_deposit(await attack.last_record(), "mallory", case)
                msg_id = record_id(data)
                headers: dict[str, str] = {}
                if case == "forged_seal":  # the real ledger key id, a MAC made up
                    headers[SEAL_HEADER] = f"{ledger_key.id}:{last}:{'A' * 43}"
                elif case != "unsealed":
                    writer = Writer.DEALER if case == "dealer_key" else Writer.WALLET
                    key = harness_keyring(writer).signer(writer)
                    headers[SEAL_HEADER] = seal_batch(key, LEDGER_KEY, last, msg_id, data)
                headers["Nats-Msg-Id"] = f"{LEDGER_KEY}:{msg_id}"
                ack = await admin.jetstream().publish(attack.subject, data, headers=headers)
                forged[ack.seq] = {
                    "unsealed": "missing",
                    "forged_seal": "bad_mac",
                    "dealer_key": "wrong_writer",
                    "wallet_key": "wrong_writer",
                }[case]

            # 2. The dealer's user, which may not publish to the journal, writes the crafted
            # deposit into its own table stream, sealed with the dealer key it holds for the
            # journal's next position, and asks the server to copy it there: a DIRECT.GET of
            # that record whose reply subject is the journal. On one NATS account the server
            # stored the copy in the journal (the seal check then refused it); with the
            # accounts the server answers in the dealer's account, where no journal is.
            last = await attack.last_seq()
            data = crafted_deposit(await attack.last_record(), "mallory", "reply-route")
            dealer_key = TEST_DEALER_LOG_KEYS.signer(Writer.DEALER)
            sealed = {SEAL_HEADER: seal_batch(dealer_key, LEDGER_KEY, last, "", data)}
            ack = await dealer_user.jetstream().publish(
                f"{dealer_settings.table_subject_prefix}.copied", data, headers=sealed
            )
            await dealer_user.publish(
                f"$JS.API.DIRECT.GET.{dealer_settings.table_stream}",
                json.dumps({"seq": ack.seq}).encode(),
                reply=attack.subject,
            )
            # Answered after the direct get above (the same stream, in order): no clock.
            await dealer_user.request(
                f"$JS.API.STREAM.INFO.{dealer_settings.table_stream}", timeout=10
            )
            assert await attack.last_seq() == last  # nothing landed

            # The wallet meets them at its next append (a conflict: it catches up, skips them
            # and appends after the last one); no money moved.
            await operator.deposit("ann", 1_000)
            await operator.deposit("bob", 1_000)
            mallory = await operator.balance("mallory")
            assert (mallory.cash, mallory.total) == (100, 100)
            assert (await operator.balance("ann")).cash == 1_000
            report = await operator.audit()
            named = refused_positions(report)
            assert named == forged
            assert all(str(FORTUNE) not in breach.message for breach in report.breaches)
            assert wallet.wallet is not None
            registry = wallet.wallet.metrics.registry
            counted = {
                reason: registry.get_sample_value(
                    "poker_wallet_journal_records_refused_total", {"reason": reason}
                )
                for reason in ("missing", "bad_mac", "wrong_writer")
            }
            assert counted == {"missing": 1, "bad_mac": 1, "wrong_writer": 2}

            # The wallet keeps serving: a real table, buy-ins, a hand settled.
            table_id = await open_table(dealer)
            for seat, name in enumerate(("ann", "bob"), start=1):
                await dealer.client(name).call(
                    "SitDown",
                    dpb.SitDownRequest(
                        command_id=cid(), table_id=table_id, seat=seat, buy_in=BUY_IN
                    ),
                )
            await play_one_hand(dealer, table_id)
            view = await dealer.client("op", Role.OPERATOR).table(table_id)
            stacks = {seat.player_id: seat.stack for seat in view.seats}
            assert stacks != {"ann": BUY_IN, "bob": BUY_IN}  # blinds moved: the hand settled
            await eventually(  # the wallet settled the hand as the dealer played it
                lambda: operator.call(
                    "GetTableEscrow", wpb.GetTableEscrowRequest(table_id=table_id)
                ),
                lambda e: {line.player_id: line.amount for line in e.escrow} == stacks,
            )
            before = {name: await operator.balance(name) for name in ("ann", "bob", "mallory")}
        await port.close()

        # A restarted wallet rebuilds the same balances and still names the refused records.
        await wallet.__aexit__(None, None, None)
        wallet.wallet, wallet.channel = None, None
        restarted = WalletHarness(settings)
        async with restarted:
            operator = restarted.client("op", Role.OPERATOR)
            after = {name: await operator.balance(name) for name in ("ann", "bob", "mallory")}
            assert after == before
            assert refused_positions(await operator.audit()) == forged
            await operator.deposit("mallory", 1)  # and appends after the foreign records
            assert (await operator.balance("mallory")).cash == 101
            assert restarted.wallet is not None
            live = restarted.wallet.book.state

        # A rebuild from scratch (no snapshot) reads every record's seal alike.
        store = JetStreamEventStore(
            admin.jetstream(),
            StreamSettings(
                stream=settings.journal_stream, subject_prefix=settings.journal_subject_prefix
            ),
        )
        rebuilt = await Journal(store, InMemorySnapshotStore(), keyring=TEST_WALLET_LOG_KEYS).load()
        assert rebuilt.state == live
        assert ledger.player_balance(rebuilt.state, "mallory").cash == 101
    finally:
        await wallet.__aexit__(None, None, None)  # nothing left to stop once stopped above
        await dealer_user.close()
        await admin.close()


async def open_table(dealer: DealerHarness) -> str:
    reply = await dealer.client("op", Role.OPERATOR).call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=cid(),
            game="holdem",
            structure=pb.BETTING_STRUCTURE_NO_LIMIT,
            stakes=pb.Stakes(small_blind=5, big_blind=10),
            real_money=True,
            pause_between_hands_ms=60_000,
            settings=pb.TableConfig(gathering_ms=0),
            action_timer_ms=30_000,
        ),
    )
    return str(reply.table_id)
