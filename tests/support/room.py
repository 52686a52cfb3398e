"""A whole room for attack tests: a real wallet and a real dealer holding buy-ins through it over
gRPC, on one nats-server, plus what an attacker's test needs to say "nothing changed": the last
sequence of both JetStream streams and the records appended since.

Tokens come only from the harnesses' ``client(subject, role)`` helpers, so the room follows the
token scheme the harnesses implement.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import nats
import nats.js.errors
from nats.js import JetStreamContext

from poker.dealer.wallet_client import GrpcWallet
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, wallet_settings
from poker.tools.client import Client, WalletClient
from poker.v1 import ledger_pb2 as lpb


@dataclass(frozen=True, slots=True)
class Appended:
    """One record of a stream: its sequence, subject and Nats-Msg-Id, and its bytes."""

    sequence: int
    subject: str
    msg_id: str
    data: bytes


class Room:
    """A wallet and a dealer that holds buy-ins through it, with a JetStream view of both logs
    (``js``: the TABLES account's admin, ``wallet_js``: the WALLET account's)."""

    def __init__(
        self,
        wallet: WalletHarness,
        dealer: DealerHarness,
        js: JetStreamContext,
        wallet_js: JetStreamContext,
    ):
        self.wallet = wallet
        self.dealer = dealer
        self.js = js
        self.wallet_js = wallet_js

    def js_of(self, stream: str) -> JetStreamContext:
        """The admin's view of the account ``stream`` lives in."""
        return self.wallet_js if stream == self.wallet_stream else self.js

    def dealer_client(self, subject: str, role: Role = Role.PLAYER) -> Client:
        """A Dealer client calling as ``subject``."""
        return self.dealer.client(subject, role)

    def wallet_client(self, subject: str, role: Role = Role.PLAYER) -> WalletClient:
        """A Wallet client calling as ``subject``."""
        return self.wallet.client(subject, role)

    @property
    def table_stream(self) -> str:
        """The dealer's tables stream."""
        return self.dealer.settings.table_stream

    @property
    def wallet_stream(self) -> str:
        """The wallet's journal stream."""
        return self.wallet.settings.journal_stream

    async def last_sequences(self) -> tuple[int, int]:
        """The last sequence of the tables stream and of the wallet stream."""
        tables = await self.js.stream_info(self.table_stream)
        wallet = await self.wallet_js.stream_info(self.wallet_stream)
        return int(tables.state.last_seq), int(wallet.state.last_seq)

    async def appended(self, stream: str, after: int, upto: int) -> list[Appended]:
        """The records of ``stream`` with sequences ``after + 1`` .. ``upto``."""
        records = []
        for sequence in range(after + 1, upto + 1):
            message = await self.js_of(stream).get_msg(stream, sequence)
            headers = message.headers or {}
            records.append(
                Appended(
                    sequence,
                    str(message.subject),
                    str(headers.get("Nats-Msg-Id", "")),
                    message.data or b"",
                )
            )
        return records

    async def consumer_idle(self) -> bool:
        """Whether the wallet's consumer has applied every table event so far."""
        settings = self.wallet.settings
        try:
            info = await self.js.consumer_info(settings.table_stream, settings.consumer_name)
        except nats.js.errors.NotFoundError:
            # The wallet binds its durable consumer in the background, once the dealer has made
            # the table stream: not there yet is not caught up yet.
            return False
        return not info.num_pending and not info.num_ack_pending

    async def quiet(self, bound_s: float = 10.0) -> None:
        """Until the wallet's consumer has applied every table event so far (bounded): only then
        do the two logs stand still for a request whose effects a test compares."""
        deadline = time.monotonic() + bound_s
        while not await self.consumer_idle():
            assert time.monotonic() < deadline, "the wallet's consumer never caught up"
            await asyncio.sleep(0.02)
        # The leader's forget pass drops closed tables the consumer has acked (a journal record
        # each): run it here until nothing is due, so its timer has nothing left to append.
        wallet = self.wallet.wallet
        if wallet is not None:
            while await wallet.forgetter.forget_pass():
                assert time.monotonic() < deadline, "the wallet never ran out of tables to forget"


def ledger_transactions(record: Appended) -> list[lpb.TransactionPosted]:
    """The transactions one wallet journal record holds."""
    batch = lpb.LedgerEventBatch.FromString(record.data)
    events = batch.events
    return [event.transaction_posted for event in events if event.HasField("transaction_posted")]


@contextlib.asynccontextmanager
async def open_room(server: NatsServer, **dealer_overrides: Any) -> AsyncIterator[Room]:
    """A wallet, a dealer using it and a JetStream client, each stopped on the way out."""
    dealer_settings = namespace_settings(server.url, new_secret(), **dealer_overrides)
    nc = await nats.connect(server.url)
    wallet_nc = await nats.connect(server.wallet_url)
    try:
        async with WalletHarness(wallet_settings(dealer_settings, hold_ttl_s=600)) as wallet:
            port = GrpcWallet([wallet.address], dealer_settings.token_keyring)
            try:
                async with DealerHarness(dealer_settings, wallet=port) as dealer:
                    yield Room(wallet, dealer, nc.jetstream(), wallet_nc.jetstream())
            finally:
                await port.close()
    finally:
        await wallet_nc.close()
        await nc.close()
