"""The client library: Dealer and Wallet stubs that call as one caller, with its token.

pokerctl, the bots, the benchmarks and the tests all call the services through these.
"""

from __future__ import annotations

import uuid
from typing import Any, Final

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from poker.servicekit.auth import bearer_metadata
from poker.servicekit.tokens import Role, TokenKeys, issue_token
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import dealer_pb2_grpc, wallet_pb2_grpc
from poker.v1 import wallet_pb2 as wpb

#: How long one unary call may take before the client gives up.
CALL_TIMEOUT_S = 10.0

#: The client side of the services' keepalive (``poker.servicekit.server.Keepalive``): ping a
#: quiet connection every 30 s (no more often than the server accepts, 10 s), give up on it 10 s
#: later, and keep pinging an open stream that carries nothing (a quiet WatchTable or Play), so a
#: dead link ends the stream instead of leaving it hanging.
CHANNEL_OPTIONS: Final[list[tuple[str, int]]] = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.ping_timeout_ms", 10_000),  # gRPC's own wait for the ping's answer (60 s unset)
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.keepalive_permit_without_calls", 1),
]


def error_reason(error: grpc.aio.AioRpcError) -> str:
    """The stable reason (``google.rpc.ErrorInfo``) a service sent with ``error``, such as
    ``NOT_YOUR_TURN`` (docs/api-errors.md lists them); "" if it sent none."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type] # AioRpcError reads as a Call
    for detail in status.details if status is not None else ():
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info.reason
    return ""


class Client:
    """A Dealer stub with one caller's token."""

    def __init__(self, channel: grpc.aio.Channel, keys: TokenKeys, subject: str, role: Role):
        self.stub = dealer_pb2_grpc.DealerServiceStub(channel)
        self.subject = subject
        self.metadata = bearer_metadata(issue_token(keys, subject=subject, role=role))

    async def call(self, method: str, request: Any) -> Any:
        """Call unary ``method`` with this caller's token."""
        rpc = getattr(self.stub, method)
        return await rpc(request, metadata=self.metadata, timeout=CALL_TIMEOUT_S)

    async def table(self, table_id: str) -> dpb.TableView:
        """GetTable as this caller: the table's view."""
        response: dpb.GetTableResponse = await self.call(
            "GetTable", dpb.GetTableRequest(table_id=table_id)
        )
        return response.table

    async def act(self, table_id: str, hand_id: str, action: int, amount: int = 0) -> Any:
        """One Act with a fresh command id."""
        return await self.call(
            "Act",
            dpb.ActRequest(
                command_id=uuid.uuid4().hex,
                table_id=table_id,
                hand_id=hand_id,
                action=action,  # type: ignore[arg-type]
                amount=amount,
            ),
        )

    async def draw(self, table_id: str, hand_id: str, discards: str = "") -> Any:
        """One Draw with a fresh command id (``discards`` a card string; empty: stand pat)."""
        return await self.call(
            "Draw",
            dpb.DrawRequest(
                command_id=uuid.uuid4().hex, table_id=table_id, hand_id=hand_id, discards=discards
            ),
        )

    async def agree_split(self, table_id: str, hand_id: str, split: bool) -> Any:
        """One AgreeSplit with a fresh command id."""
        return await self.call(
            "AgreeSplit",
            dpb.AgreeSplitRequest(
                command_id=uuid.uuid4().hex, table_id=table_id, hand_id=hand_id, split=split
            ),
        )


class WalletClient:
    """A Wallet stub with one caller's token."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        keys: TokenKeys | None,
        subject: str,
        role: Role,
        *,
        token: str = "",
    ):
        """The token is issued with ``keys`` as ``subject`` and ``role``, unless one is given
        (``keys`` then None): a caller that must fail on a missing key before it connects
        (pokerctl) issues it first."""
        self.stub = wallet_pb2_grpc.WalletServiceStub(channel)
        self.subject = subject
        if not token:
            assert keys is not None, "no keys to issue the token with"
            token = issue_token(keys, subject=subject, role=role)
        self.metadata = bearer_metadata(token)

    async def call(
        self,
        method: str,
        request: Any,
        *,
        timeout: float = CALL_TIMEOUT_S,
        wait_for_ready: bool | None = None,
    ) -> Any:
        """Call unary ``method`` with this caller's token (``wait_for_ready``: gRPC's, for a
        server still starting)."""
        rpc = getattr(self.stub, method)
        return await rpc(
            request, metadata=self.metadata, timeout=timeout, wait_for_ready=wait_for_ready
        )

    async def deposit(self, player_id: str, amount: int, key: str | None = None) -> Any:
        """Deposit (a cashier's or an operator's call) with a fresh key unless one is given."""
        return await self.call(
            "Deposit",
            wpb.DepositRequest(
                player_id=player_id, amount=amount, idempotency_key=key or uuid.uuid4().hex
            ),
        )

    async def balance(self, player_id: str = "") -> wpb.Balance:
        """GetBalance: the player's balance."""
        response: wpb.GetBalanceResponse = await self.call(
            "GetBalance", wpb.GetBalanceRequest(player_id=player_id)
        )
        return response.balance

    async def audit(self, *, deep: bool = False) -> wpb.AuditResponse:
        """Audit (operator); ``deep``: from scratch, over the whole history."""
        timeout = 600.0 if deep else CALL_TIMEOUT_S  # the deep one costs the whole history
        reply: wpb.AuditResponse = await self.call(
            "Audit", wpb.AuditRequest(deep=deep), timeout=timeout
        )
        return reply
