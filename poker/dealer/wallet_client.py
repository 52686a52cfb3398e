"""The wallet service as the dealer's :class:`~poker.dealer.wallet_port.WalletPort`: gRPC calls
with a dealer-role token.

Several addresses may be given (the leading wallet and its standby): a call that finds a wallet
UNAVAILABLE (down, or the standby) tries the next one. The hold id is the dealer's command id,
so retrying a hold on another address, or after a lost reply, places it once. With ``tls`` the
channels are TLS (the wallet's CA; and this dealer's client certificate for mutual TLS).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import grpc
import structlog

from poker.dealer.wallet_port import HeldFunds, HoldState, InsufficientFunds, WalletUnavailable
from poker.servicekit.auth import bearer_metadata
from poker.servicekit.errors import InvalidArgument, NotFound
from poker.servicekit.tls import ClientTls, aio_channel
from poker.servicekit.tokens import Role, TokenKeys, issue_token
from pokerpb import wallet_pb2 as wpb
from pokerpb import wallet_pb2_grpc

_log = structlog.get_logger(__name__)

_RETRY_ELSEWHERE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
#: The wallet's hold statuses; one it does not name (an older or a newer wallet) is UNKNOWN,
#: which never seats anybody.
_HOLD_STATES = {
    wpb.HOLD_PENDING: HoldState.OPEN,
    wpb.HOLD_POSTED: HoldState.POSTED,
    wpb.HOLD_VOIDED: HoldState.VOIDED,
    wpb.HOLD_EXPIRED: HoldState.EXPIRED,
}
_TOKEN_TTL_S = 3600
_TOKEN_REFRESH_S = 300


class GrpcWallet:
    """:class:`~poker.dealer.wallet_port.WalletPort` over the Wallet gRPC API.

    Build it inside the running event loop (grpc.aio channels bind to it); :meth:`close` it.
    """

    def __init__(
        self,
        addresses: Sequence[str],
        token_keys: TokenKeys,
        *,
        subject: str = "dealer",
        timeout_s: float = 5.0,
        tls: ClientTls | None = None,
    ) -> None:
        if not addresses:
            raise ValueError("at least one wallet address is needed")
        self._addresses = list(addresses)
        self._keys = token_keys
        self._subject = subject
        self._timeout_s = timeout_s
        self._tls = tls
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._token = ""
        self._token_expires = 0.0
        self._preferred = 0

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        now = time.time()
        if now > self._token_expires - _TOKEN_REFRESH_S:
            self._token = issue_token(
                self._keys, subject=self._subject, role=Role.DEALER, ttl_s=_TOKEN_TTL_S
            )
            self._token_expires = now + _TOKEN_TTL_S
        return bearer_metadata(self._token)

    def _stub(self, address: str) -> wallet_pb2_grpc.WalletStub:
        channel = self._channels.get(address)
        if channel is None:
            channel = self._channels[address] = aio_channel(address, self._tls)
        return wallet_pb2_grpc.WalletStub(channel)

    async def _call(self, method: str, request: Any) -> Any:
        """Call ``method`` on the first wallet that answers, starting with the last good one."""
        last: grpc.aio.AioRpcError | None = None
        count = len(self._addresses)
        for step in range(count):
            index = (self._preferred + step) % count
            rpc = getattr(self._stub(self._addresses[index]), method)
            try:
                reply = await rpc(request, metadata=self._metadata(), timeout=self._timeout_s)
            except grpc.aio.AioRpcError as error:
                if error.code() not in _RETRY_ELSEWHERE:
                    raise
                last = error
                continue
            self._preferred = index
            return reply
        assert last is not None
        raise WalletUnavailable(f"the wallet is unavailable right now: {last.details()}")

    async def place_hold(
        self, player_id: str, amount: int, *, hold_id: str, ttl_s: float, table_id: str
    ) -> HeldFunds:
        """See :meth:`WalletPort.place_hold`: the wallet's HoldView, as the wallet wrote it."""
        request = wpb.PlaceHoldRequest(
            hold_id=hold_id,
            player_id=player_id,
            table_id=table_id,
            amount=amount,
            ttl_ms=max(1, int(ttl_s * 1000)),
        )
        try:
            view: wpb.HoldView = await self._call("PlaceHold", request)
        except grpc.aio.AioRpcError as error:
            details = error.details() or ""
            if error.code() == grpc.StatusCode.FAILED_PRECONDITION:
                raise InsufficientFunds(details) from None
            if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                raise InvalidArgument(details) from None
            if error.code() == grpc.StatusCode.NOT_FOUND:
                raise NotFound(details) from None
            raise WalletUnavailable(f"the wallet refused the hold: {details}") from None
        return HeldFunds(
            hold_id=view.hold_id,
            player_id=view.player_id,
            table_id=view.table_id,
            amount=view.amount,
            state=_HOLD_STATES.get(view.status, HoldState.UNKNOWN),
        )

    async def void_hold(self, player_id: str, hold_id: str) -> None:
        """See :meth:`WalletPort.void_hold`: never raises; a hold left behind expires."""
        request = wpb.VoidHoldRequest(hold_id=hold_id, reason="the seat was not taken")
        try:
            await self._call("VoidHold", request)
        except (grpc.aio.AioRpcError, WalletUnavailable) as error:
            _log.info("void_hold_skipped", hold_id=hold_id, player_id=player_id, error=str(error))

    async def close(self) -> None:
        """Close the channels."""
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()
