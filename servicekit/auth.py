"""Signed bearer tokens, and the gRPC interceptor that authenticates every call with them.

A token is ``base64url(claims JSON) "." base64url(HMAC-SHA256(secret, first part))``, unpadded.
The signature covers the encoded claims exactly as sent, so verifying never depends on how JSON
is re-serialized. Claims: ``sub`` (the player or service id), ``role`` (player, dealer or
operator) and ``exp`` (expiry, unix seconds).

>>> secret = b"k" * 32
>>> token = issue_token(secret, subject="p-1", role=Role.PLAYER, expires_at=2_000, now=1_000)
>>> verify_token(token, secret, now=1_500)
Principal(subject='p-1', role=<Role.PLAYER: 'player'>, expires_at=2000)
>>> verify_token(token, secret, now=2_000)
Traceback (most recent call last):
...
servicekit.auth.TokenExpired: the token expired
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import contextvars
import enum
import hashlib
import hmac
import json
import re
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import grpc

from servicekit.errors import PermissionDenied, Unauthenticated
from servicekit.interceptors import ScopeInterceptor

#: HMAC-SHA256 keys shorter than the hash give away strength; refuse them.
MIN_SECRET_BYTES = 32
MAX_SUBJECT_CHARS = 128
#: Bigger tokens are refused before any decoding work.
MAX_TOKEN_CHARS = 4096

_B64URL = re.compile(r"[A-Za-z0-9_-]+")

#: Services that answer without a token: probes and tooling must reach them.
PUBLIC_SERVICES = (
    "grpc.health.v1.Health",
    "grpc.reflection.v1alpha.ServerReflection",
    "grpc.reflection.v1.ServerReflection",
)


class Role(enum.StrEnum):
    """What a caller is: a player at the tables, a dealer service, or a human operator."""

    PLAYER = "player"
    DEALER = "dealer"
    OPERATOR = "operator"


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated caller."""

    subject: str
    role: Role
    expires_at: int


class TokenError(Unauthenticated):
    """The token does not authenticate its bearer; maps to UNAUTHENTICATED."""


class MissingToken(TokenError):
    """No ``authorization: Bearer <token>`` metadata came with the call."""


class MalformedToken(TokenError):
    """The token is not two base64url parts, or its claims are not valid."""


class BadSignature(TokenError):
    """The signature does not match: forged, altered, or signed with another secret."""


class TokenExpired(TokenError):
    """The token was valid but its expiry has passed."""


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    if not _B64URL.fullmatch(text):
        raise MalformedToken("the token is not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as error:
        raise MalformedToken("the token is not base64url") from error


def _verify_secret(secret: bytes) -> None:
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(f"the token secret must be at least {MIN_SECRET_BYTES} bytes")


def _sign(secret: bytes, payload: str) -> bytes:
    return hmac.new(secret, payload.encode("ascii"), hashlib.sha256).digest()


def issue_token(
    secret: bytes,
    *,
    subject: str,
    role: Role,
    expires_at: int | None = None,
    ttl_s: int = 3600,
    now: float | None = None,
) -> str:
    """A token for ``subject`` acting as ``role``, valid until ``expires_at`` (unix seconds) or
    for ``ttl_s`` from ``now``."""
    _verify_secret(secret)
    if not 0 < len(subject) <= MAX_SUBJECT_CHARS:
        raise ValueError(f"a subject must be 1-{MAX_SUBJECT_CHARS} characters")
    if expires_at is None:
        expires_at = int(time.time() if now is None else now) + ttl_s
    claims = {"sub": subject, "role": Role(role).value, "exp": int(expires_at)}
    payload = _b64encode(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    return f"{payload}.{_b64encode(_sign(secret, payload))}"


def verify_token(token: str, secret: bytes, *, now: float | None = None) -> Principal:
    """The principal ``token`` proves, checked in order: shape, signature, claims, expiry.

    Raises :class:`MissingToken`, :class:`MalformedToken`, :class:`BadSignature` or
    :class:`TokenExpired`. The signature is compared in constant time.
    """
    _verify_secret(secret)
    if not token:
        raise MissingToken("a bearer token is required")
    if len(token) > MAX_TOKEN_CHARS:
        raise MalformedToken("the token is too long")
    payload, _, signature = token.partition(".")
    # Both parts are checked before any use: _sign needs ASCII, and shape errors are not forgeries.
    if not _B64URL.fullmatch(payload) or not _B64URL.fullmatch(signature):
        raise MalformedToken("the token is not of the form <claims>.<signature> in base64url")
    if not hmac.compare_digest(_sign(secret, payload), _b64decode(signature)):
        raise BadSignature("the token signature is not valid")
    principal = _principal_from_claims(_b64decode(payload))
    if (time.time() if now is None else now) >= principal.expires_at:
        raise TokenExpired("the token expired")
    return principal


def _principal_from_claims(raw: bytes) -> Principal:
    try:
        claims = json.loads(raw)
        subject, role, expires_at = claims["sub"], Role(claims["role"]), claims["exp"]
    except (ValueError, TypeError, KeyError) as error:
        raise MalformedToken("the token claims are not valid") from error
    # bool is an int in Python; a claim of `true` is not an expiry.
    if not isinstance(subject, str) or not 0 < len(subject) <= MAX_SUBJECT_CHARS:
        raise MalformedToken("the token subject is not valid")
    if not isinstance(expires_at, int) or isinstance(expires_at, bool):
        raise MalformedToken("the token expiry is not valid")
    return Principal(subject=subject, role=role, expires_at=expires_at)


#: Verified tokens remembered per authenticator: a client sends the same token on every call.
TOKEN_CACHE_SIZE = 1024


class TokenVerifier:
    """:func:`verify_token` with a small LRU cache of verified tokens, keyed by the raw token.

    Only tokens whose signature and claims checked out are remembered (never a failure); the
    expiry is still checked on every call, so a cached token stops working when it expires.
    """

    def __init__(self, secret: bytes, *, size: int = TOKEN_CACHE_SIZE) -> None:
        _verify_secret(secret)
        self._secret = secret
        self._size = size
        self._verified: OrderedDict[str, Principal] = OrderedDict()

    def verify(self, token: str, now: float) -> Principal:
        """The principal ``token`` proves at ``now``; raises like :func:`verify_token`."""
        principal = self._verified.get(token)
        if principal is None:
            principal = verify_token(token, self._secret, now=now)
            self._verified[token] = principal
            if len(self._verified) > self._size:
                self._verified.popitem(last=False)
            return principal
        if now >= principal.expires_at:
            del self._verified[token]
            raise TokenExpired("the token expired")
        self._verified.move_to_end(token)
        return principal


def bearer_token(metadata: Any) -> str:
    """The token of the ``authorization: Bearer <token>`` entry of ``metadata``, or ''."""
    for key, value in metadata or ():
        if key.lower() != "authorization" or not isinstance(value, str):
            continue
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() == "bearer":
            return token.strip()
    return ""


def bearer_metadata(token: str) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying ``token``, for clients."""
    return (("authorization", f"Bearer {token}"),)


# --- the current caller -----------------------------------------------------------------------

_principal: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "servicekit_principal", default=None
)


def current_principal() -> Principal:
    """The caller of the RPC being served; raises :class:`MissingToken` outside one."""
    principal = _principal.get()
    if principal is None:
        raise MissingToken("this call is not authenticated")
    return principal


def require_role(*roles: Role) -> Principal:
    """The caller, if it acts as one of ``roles``; else raises :class:`PermissionDenied`."""
    principal = current_principal()
    if principal.role not in roles:
        raise PermissionDenied(f"a {principal.role} may not do this")
    return principal


def is_public(method: str) -> bool:
    """Whether ``method`` (``/package.Service/Method``) answers without a token."""
    service = method.strip("/").partition("/")[0]
    return service in PUBLIC_SERVICES


class AuthInterceptor(ScopeInterceptor):
    """Authenticates every call but those of :data:`PUBLIC_SERVICES`.

    A call without a valid token ends UNAUTHENTICATED. With ``roles_by_method``, a method listed
    there admits only those roles (PERMISSION_DENIED otherwise). The servicer reads the caller
    with :func:`current_principal`.
    """

    def __init__(
        self,
        secret: bytes,
        *,
        roles_by_method: Mapping[str, Collection[Role]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._verifier = TokenVerifier(secret)
        self._roles_by_method = roles_by_method or {}
        self._clock = clock
        super().__init__(self._authenticated, applies_to=lambda method: not is_public(method))

    async def authenticate(self, context: Any, method: str) -> Principal:
        """The caller of ``method``, or the call is aborted (UNAUTHENTICATED when the token
        does not authenticate, PERMISSION_DENIED when the role may not call ``method``)."""
        try:
            principal = self._verifier.verify(
                bearer_token(context.invocation_metadata()), self._clock()
            )
        except TokenError as error:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, error.message)
            raise  # pragma: no cover - abort raises
        allowed = self._roles_by_method.get(method)
        if allowed is not None and principal.role not in allowed:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED, f"a {principal.role} may not call {method}"
            )
        return principal

    @asynccontextmanager
    async def _authenticated(self, context: Any, method: str) -> AsyncIterator[None]:
        token = _principal.set(await self.authenticate(context, method))
        try:
            yield
        finally:
            # A stream the client dropped may be finished in another context, which never saw
            # this principal: there is nothing to undo there.
            with contextlib.suppress(ValueError):
                _principal.reset(token)
