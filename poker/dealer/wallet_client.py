"""The wallet service as the dealer's :class:`~poker.dealer.wallet_port.WalletPort`: gRPC calls
with a dealer-role token.

Several addresses may be given (the leading wallet and its standby): they form one channel whose
gRPC service config (:mod:`poker.servicekit.channels`) does what a hand-written loop did before.
The channel health-checks every address (``healthCheckConfig``: the standby reports NOT_SERVING
until it takes the lease, :mod:`poker.wallet.standby`) and sends calls only to the serving one,
and gRPC retries a call that ends UNAVAILABLE (``retryPolicy``: a wallet down, or one that just
stepped down) with backoff, within the call's deadline. The hold id is the dealer's command id,
so a retried hold, on either wallet or after a lost reply, is placed once. Each call's timeout is
the dealer's caller's remaining time, at most ``timeout_s`` (:mod:`poker.servicekit.deadlines`).
With ``tls`` the channel is TLS (the wallet's CA; and this dealer's client certificate for
mutual TLS).
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

import grpc
import structlog
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from poker.dealer.wallet_port import (
    HeldFunds,
    HoldRefused,
    HoldState,
    InsufficientFunds,
    WalletUnavailable,
)
from poker.servicekit.auth import bearer_metadata
from poker.servicekit.channels import health_checked_options
from poker.servicekit.deadlines import timeout_within
from poker.servicekit.errors import InvalidArgument, NotFound
from poker.servicekit.tls import ClientTls, aio_channel
from poker.servicekit.tokens import Role, TokenKeys, issue_token
from poker.v1 import wallet_pb2 as wpb
from poker.v1 import wallet_pb2_grpc

_log = structlog.get_logger(__name__)

#: The wallet's service, as its health checks and method configs name it.
WALLET_SERVICE: Final = "poker.v1.WalletService"
_UNAVAILABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
#: The wallet's hold statuses; one it does not name (an older or a newer wallet) is UNKNOWN,
#: which never seats anybody.
_HOLD_STATES = {
    wpb.HOLD_STATUS_PENDING: HoldState.OPEN,
    wpb.HOLD_STATUS_POSTED: HoldState.POSTED,
    wpb.HOLD_STATUS_VOIDED: HoldState.VOIDED,
    wpb.HOLD_STATUS_EXPIRED: HoldState.EXPIRED,
}
_TOKEN_TTL_S = 3600
_TOKEN_REFRESH_S = 300


def _host_port(address: str) -> tuple[str, str]:
    host, _, port = address.rpartition(":")
    if not host or not (port.isascii() and port.isdigit()):
        raise ValueError(f"a wallet address is host:port, not {address!r}")
    return host.strip("[]"), port


def _ip_version(host: str) -> int | None:
    try:
        return ipaddress.ip_address(host).version
    except ValueError:
        return None


def _resolved(host: str, port: str) -> list[tuple[int, str]]:
    """(IP version, ``ip:port``) of ``host``: itself if an IP, else what it resolves to (IPv4
    first: a name such as localhost resolves to both)."""
    version = _ip_version(host)
    if version is not None:
        return [(version, f"[{host}]:{port}" if version == 6 else f"{host}:{port}")]
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except OSError as error:
        raise ValueError(f"the wallet address {host}:{port} does not resolve: {error}") from None
    found = sorted({(6 if info[0] == socket.AF_INET6 else 4, str(info[4][0])) for info in infos})
    return [(v, f"[{ip}]:{port}" if v == 6 else f"{ip}:{port}") for v, ip in found]


def channel_target(addresses: Sequence[str]) -> tuple[str, list[tuple[str, Any]]]:
    """The channel target naming every wallet address, and the options it needs.

    One address is the target itself. Several become one ``ipv4:``/``ipv6:`` target listing
    them all (names resolved once, here), so the channel's load balancer sees every wallet;
    the authority (and the TLS name checked) stays the first address's name.
    """
    if len(addresses) == 1:
        return addresses[0], []
    endpoints: dict[int, list[str]] = {4: [], 6: []}
    for address in addresses:
        host, port = _host_port(address)
        resolved = _resolved(host, port)
        version = 4 if any(v == 4 for v, _ in resolved) else 6
        endpoints[version].extend(endpoint for v, endpoint in resolved if v == version)
    if endpoints[4] and endpoints[6]:
        raise ValueError("the wallet addresses mix IPv4 and IPv6; give them all in one family")
    version = 4 if endpoints[4] else 6
    target = f"ipv{version}:" + ",".join(dict.fromkeys(endpoints[version]))
    first_host, _ = _host_port(addresses[0])
    options: list[tuple[str, Any]] = [("grpc.default_authority", addresses[0])]
    if _ip_version(first_host) is None:
        options.append(("grpc.ssl_target_name_override", first_host))
    return target, options


def _reason(error: grpc.aio.AioRpcError) -> str:
    """The ErrorInfo reason the wallet sent with ``error`` ("" if none)."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type] # AioRpcError reads as a Call
    if status is None:
        return ""
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info.reason
    return ""


class GrpcWallet:
    """:class:`~poker.dealer.wallet_port.WalletPort` over the Wallet gRPC API.

    Build it inside the running event loop (grpc.aio channels bind to it); :meth:`close` it.
    ``retry_policy`` replaces :data:`~poker.servicekit.channels.DEFAULT_RETRY_POLICY`.
    """

    def __init__(
        self,
        addresses: Sequence[str],
        token_keys: TokenKeys,
        *,
        subject: str = "dealer",
        timeout_s: float = 5.0,
        tls: ClientTls | None = None,
        retry_policy: Mapping[str, Any] | None = None,
    ) -> None:
        if not addresses:
            raise ValueError("at least one wallet address is needed")
        self._target, self._options = channel_target(list(addresses))
        self._options += health_checked_options(WALLET_SERVICE, retry_policy)
        self._keys = token_keys
        self._subject = subject
        self._timeout_s = timeout_s
        self._tls = tls
        self._channel: grpc.aio.Channel | None = None
        self._token = ""
        self._token_expires = 0.0

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        now = time.time()
        if now > self._token_expires - _TOKEN_REFRESH_S:
            self._token = issue_token(
                self._keys, subject=self._subject, role=Role.DEALER, ttl_s=_TOKEN_TTL_S
            )
            self._token_expires = now + _TOKEN_TTL_S
        return bearer_metadata(self._token)

    def _stub(self) -> wallet_pb2_grpc.WalletServiceStub:
        if self._channel is None:
            self._channel = aio_channel(self._target, self._tls, self._options)
        return wallet_pb2_grpc.WalletServiceStub(self._channel)

    async def _call(self, method: str, request: Any) -> Any:
        """Call ``method`` on the serving wallet (the channel picks it and retries), within the
        caller's remaining time (at most ``timeout_s``)."""
        rpc = getattr(self._stub(), method)
        try:
            return await rpc(
                request, metadata=self._metadata(), timeout=timeout_within(self._timeout_s)
            )
        except grpc.aio.AioRpcError as error:
            if error.code() in _UNAVAILABLE:
                raise WalletUnavailable(
                    f"the wallet is unavailable right now: {error.details()}"
                ) from None
            raise

    async def place_hold(
        self, player_id: str, amount: int, *, hold_id: str, ttl_s: float, table_id: str
    ) -> HeldFunds:
        """See :meth:`WalletPort.place_hold`: the wallet's HoldView, as the wallet wrote it."""
        request = wpb.PlaceHoldRequest(
            hold_id=hold_id,
            player_id=player_id,
            table_id=table_id,
            amount=amount,
        )
        request.ttl.FromMilliseconds(max(1, int(ttl_s * 1000)))
        try:
            response: wpb.PlaceHoldResponse = await self._call("PlaceHold", request)
        except grpc.aio.AioRpcError as error:
            details = error.details() or ""
            if error.code() == grpc.StatusCode.FAILED_PRECONDITION:
                if _reason(error) in ("", InsufficientFunds.REASON):
                    raise InsufficientFunds(details) from None
                raise HoldRefused(details) from None
            if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                raise InvalidArgument(details) from None
            if error.code() == grpc.StatusCode.NOT_FOUND:
                raise NotFound(details) from None
            raise WalletUnavailable(f"the wallet refused the hold: {details}") from None
        view = response.hold
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
        """Close the channel."""
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
