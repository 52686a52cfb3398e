"""Bearer tokens (standard JWTs) and their signing keys: issue, verify, roles, claims.

Nothing here knows gRPC: the interceptor that authenticates every call with these tokens, the
call metadata and the current caller are :mod:`poker.servicekit.auth`'s, at the edge; tools and
settings that only issue tokens or read key files import this module alone.

A token is a JWT (RFC 7519) signed with HMAC-SHA256 (``HS256``, the only algorithm accepted).
Its header names the signing key (``kid``); its claims are ``sub`` (the player or service id),
``role`` (player, cashier, dealer or operator), ``iat`` (issued at) and ``exp`` (expiry), all
required, times in unix seconds. Keys live in a :class:`TokenKeyring`: every key of the ring
verifies, the ``current`` one signs, so a key is rotated with the old and the new valid side by
side (see ``docs/security/tokens.md``). A bare secret (``--token-secret``) is the one-key ring
``{"current": "default", "keys": {"default": <secret>}}``.

Checked in order, each failure its own error (all UNAUTHENTICATED): present
(:class:`MissingToken`), at most :data:`MAX_TOKEN_CHARS` of JWT characters, three parts, a header
with ``alg: HS256`` and a known ``kid`` (:class:`MalformedToken`, or :class:`BadSignature` for
another algorithm, ``none`` included, or a key id the ring does not hold), the signature
(:class:`BadSignature`), the claims (:class:`MalformedToken`), then the times
(:class:`TokenExpired`). ``exp`` is strict; ``iat`` may lie up to :data:`CLOCK_SKEW_S` in the
future (an issuer whose clock runs slightly ahead).

>>> ring = TokenKeyring("k1", {"k1": b"k" * 32})
>>> token = issue_token(ring, subject="p-1", role=Role.PLAYER, expires_at=2_000, now=1_000)
>>> verify_token(token, ring, now=1_500)
Principal(subject='p-1', role=<Role.PLAYER: 'player'>, expires_at=2000)
>>> verify_token(token, ring, now=2_000)
Traceback (most recent call last):
...
poker.servicekit.tokens.TokenExpired: the token expired
>>> rotated = TokenKeyring("k2", {"k1": b"k" * 32, "k2": b"n" * 32})  # k2 signs, k1 still verifies
>>> verify_token(token, rotated, now=1_500).subject
'p-1'
>>> verify_token(token, TokenKeyring("k2", {"k2": b"n" * 32}), now=1_500)  # k1 removed
Traceback (most recent call last):
...
poker.servicekit.tokens.BadSignature: the token's key id 'k1' is not one this service accepts
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
import re
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeAlias

import jwt

from poker.servicekit.errors import Unauthenticated

#: HMAC-SHA256 keys shorter than the hash give away strength; refuse them.
MIN_SECRET_BYTES = 32
MAX_SUBJECT_CHARS = 128
#: Bigger tokens are refused before any decoding work (ours are about 250 characters).
MAX_TOKEN_CHARS = 2048
#: The one signing algorithm; a token naming any other (``none`` included) is refused.
ALGORITHM = "HS256"
#: How far in the future ``iat`` may be: the issuer's clock may run this much ahead of ours.
CLOCK_SKEW_S = 5
#: The key id of a bare ``--token-secret``.
DEFAULT_KID = "default"

_KID = re.compile(r"[A-Za-z0-9._-]{1,64}")
#: The characters of a compact JWS: three base64url parts joined by dots.
_JWT = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
_REQUIRED_CLAIMS = ("sub", "role", "iat", "exp")
#: PyJWT checks the signature, the algorithm and that the claims are there; the times are
#: checked here, against the caller's clock (an injected one in tests, :func:`time.time` else).
_DECODE_OPTIONS: Any = {
    "verify_signature": True,
    "verify_exp": False,
    "verify_iat": False,
    "verify_nbf": False,
    "require": list(_REQUIRED_CLAIMS),
}


class Role(enum.StrEnum):
    """What a caller is: a player at the tables, the payments service (cashier: money in and
    out), a dealer service, or a human operator."""

    PLAYER = "player"
    CASHIER = "cashier"
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

    REASON = "TOKEN_INVALID"


class MissingToken(TokenError):
    """No ``authorization: Bearer <token>`` metadata came with the call."""

    REASON = "TOKEN_MISSING"


class MalformedToken(TokenError):
    """The token is not a JWT of this service's shape, or its claims are not valid."""

    REASON = "TOKEN_MALFORMED"


class BadSignature(TokenError):
    """The signature does not verify: forged, altered, signed with a key this service does not
    hold (an unknown or removed ``kid``), or with another algorithm (``none`` included)."""

    REASON = "TOKEN_SIGNATURE_INVALID"


class TokenExpired(TokenError):
    """The token was valid but its expiry has passed."""

    REASON = "TOKEN_EXPIRED"


# --- keys ---------------------------------------------------------------------------------------


def _verify_secret(secret: bytes) -> None:
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(f"the token secret must be at least {MIN_SECRET_BYTES} bytes")


@dataclass(frozen=True, slots=True)
class TokenKeyring:
    """The token keys of a service: ``keys`` (key id -> secret) all verify, ``current`` signs.

    The file form (``--token-keys PATH``) is JSON with base64 secrets::

        {"current": "2027-01", "keys": {"2026-07": "<base64>", "2027-01": "<base64>"}}
    """

    current: str
    keys: Mapping[str, bytes]

    def __post_init__(self) -> None:
        for kid, secret in self.keys.items():
            if not isinstance(kid, str) or not _KID.fullmatch(kid):
                raise ValueError(f"a token key id must be 1-64 of A-Z a-z 0-9 . _ -, not {kid!r}")
            if not isinstance(secret, bytes):
                raise ValueError(f"token key {kid} must be bytes")
            _verify_secret(secret)
        if self.current not in self.keys:
            raise ValueError(f"the current token key {self.current!r} is not in the keyring")
        object.__setattr__(self, "keys", MappingProxyType(dict(self.keys)))

    def __repr__(self) -> str:  # never print the secrets
        return f"TokenKeyring(current={self.current!r}, kids={sorted(self.keys)!r})"

    @classmethod
    def single(cls, secret: bytes, kid: str = DEFAULT_KID) -> TokenKeyring:
        """The ring of one key (what ``--token-secret`` configures)."""
        return cls(kid, {kid: secret})

    @classmethod
    def from_json(cls, text: str) -> TokenKeyring:
        """The ring of the file form; ValueError with a sentence if it is not one."""
        try:
            document = json.loads(text)
        except ValueError as error:
            raise ValueError("the token keyring is not JSON") from error
        if not isinstance(document, dict) or set(document) != {"current", "keys"}:
            raise ValueError('the token keyring must be {"current": <kid>, "keys": {...}}')
        keys = document["keys"]
        if not isinstance(keys, dict) or not keys or not isinstance(document["current"], str):
            raise ValueError("the token keyring needs a current key id and at least one key")
        decoded: dict[str, bytes] = {}
        for kid, text_secret in keys.items():
            try:
                decoded[kid] = base64.b64decode(str(text_secret), validate=True)
            except (binascii.Error, ValueError) as error:
                raise ValueError(f"token key {kid!r} is not base64") from error
        return cls(document["current"], decoded)

    @classmethod
    def load(cls, path: str | Path) -> TokenKeyring:
        """The ring in the file at ``path``."""
        return cls.from_json(Path(path).read_text(encoding="utf-8"))

    def to_json(self) -> str:
        """The file form of this ring (for tools that write one)."""
        keys = {kid: base64.b64encode(secret).decode("ascii") for kid, secret in self.keys.items()}
        return json.dumps({"current": self.current, "keys": keys}, indent=2, sort_keys=True)

    def signing_key(self) -> tuple[str, bytes]:
        """``(kid, secret)`` of the current key."""
        return self.current, self.keys[self.current]


#: What every function taking keys accepts: a keyring, or one bare secret (its one-key ring).
TokenKeys: TypeAlias = TokenKeyring | bytes


def keyring_of(keys: TokenKeys) -> TokenKeyring:
    """``keys`` as a keyring (a bare secret becomes :meth:`TokenKeyring.single`)."""
    return keys if isinstance(keys, TokenKeyring) else TokenKeyring.single(keys)


# --- issuing and verifying --------------------------------------------------------------------


def issue_token(
    keys: TokenKeys,
    *,
    subject: str,
    role: Role,
    expires_at: int | None = None,
    ttl_s: int = 3600,
    now: float | None = None,
) -> str:
    """A token for ``subject`` acting as ``role``, signed with the ring's current key, valid
    until ``expires_at`` (unix seconds) or for ``ttl_s`` from ``now``."""
    ring = keyring_of(keys)
    if not 0 < len(subject) <= MAX_SUBJECT_CHARS:
        raise ValueError(f"a subject must be 1-{MAX_SUBJECT_CHARS} characters")
    issued_at = int(time.time() if now is None else now)
    if expires_at is None:
        expires_at = issued_at + ttl_s
    kid, secret = ring.signing_key()
    claims = {"sub": subject, "role": Role(role).value, "iat": issued_at, "exp": int(expires_at)}
    return jwt.encode(claims, secret, algorithm=ALGORITHM, headers={"kid": kid})


def verify_token(token: str, keys: TokenKeys, *, now: float | None = None) -> Principal:
    """The principal ``token`` proves, checked in order: shape, header (algorithm, key id),
    signature, claims, times.

    Raises :class:`MissingToken`, :class:`MalformedToken`, :class:`BadSignature` or
    :class:`TokenExpired`. PyJWT compares the signature in constant time.
    """
    ring = keyring_of(keys)
    if not token:
        raise MissingToken("a bearer token is required")
    if len(token) > MAX_TOKEN_CHARS:
        raise MalformedToken("the token is too long")
    if not _JWT.fullmatch(token):
        raise MalformedToken("the token is not a JWT (<header>.<claims>.<signature> in base64url)")
    kid = _key_id(token)
    claims = _verified_claims(token, kid, ring.keys.get(kid))
    principal = _principal_from_claims(claims)
    at = time.time() if now is None else now
    if claims["iat"] > at + CLOCK_SKEW_S:
        raise MalformedToken("the token was issued in the future")
    if at >= principal.expires_at:
        raise TokenExpired("the token expired")
    return principal


def _key_id(token: str) -> str:
    """The header's ``kid``, once the header says HS256; raises otherwise."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError as error:
        raise MalformedToken("the token header is not valid") from error
    algorithm = header.get("alg")
    if algorithm != ALGORITHM:
        shown = algorithm if isinstance(algorithm, str) and len(algorithm) <= 16 else "?"
        raise BadSignature(f"the token's algorithm {shown!r} is not accepted (only {ALGORITHM})")
    kid = header.get("kid")
    if not isinstance(kid, str) or not _KID.fullmatch(kid):
        raise MalformedToken("the token header names no valid key id (kid)")
    return kid


def _verified_claims(token: str, kid: str, secret: bytes | None) -> dict[str, Any]:
    if secret is None:
        raise BadSignature(f"the token's key id {kid!r} is not one this service accepts")
    try:
        claims: dict[str, Any] = jwt.decode(
            token, secret, algorithms=[ALGORITHM], options=_DECODE_OPTIONS
        )
    except jwt.InvalidSignatureError as error:
        raise BadSignature("the token signature is not valid") from error
    except jwt.InvalidAlgorithmError as error:  # pragma: no cover - the header check is first
        raise BadSignature("the token's algorithm is not accepted") from error
    except jwt.InvalidTokenError as error:
        raise MalformedToken("the token claims are not valid") from error
    return claims


def _principal_from_claims(claims: dict[str, Any]) -> Principal:
    subject, expires_at, issued_at = claims["sub"], claims["exp"], claims["iat"]
    try:
        role = Role(claims["role"])
    except (ValueError, TypeError) as error:
        raise MalformedToken("the token role is not valid") from error
    if not isinstance(subject, str) or not 0 < len(subject) <= MAX_SUBJECT_CHARS:
        raise MalformedToken("the token subject is not valid")
    # bool is an int in Python; a claim of `true` is not a time.
    for value in (expires_at, issued_at):
        if not isinstance(value, int) or isinstance(value, bool):
            raise MalformedToken("the token times (iat, exp) must be integers")
    return Principal(subject=subject, role=role, expires_at=expires_at)


#: Verified tokens remembered per authenticator: a client sends the same token on every call.
TOKEN_CACHE_SIZE = 1024


class TokenVerifier:
    """:func:`verify_token` with a small LRU cache of verified tokens, keyed by the raw token.

    Only tokens whose signature and claims checked out are remembered (never a failure); the
    expiry is still checked on every call, so a cached token stops working when it expires. The
    ring is fixed for the verifier's life: removing a key means a new verifier (a restart), so a
    cached token of a removed key cannot outlive its key.
    """

    def __init__(self, keys: TokenKeys, *, size: int = TOKEN_CACHE_SIZE) -> None:
        self._keys = keyring_of(keys)
        self._size = size
        self._verified: OrderedDict[str, Principal] = OrderedDict()

    def verify(self, token: str, now: float) -> Principal:
        """The principal ``token`` proves at ``now``; raises like :func:`verify_token`."""
        principal = self._verified.get(token)
        if principal is None:
            principal = verify_token(token, self._keys, now=now)
            self._verified[token] = principal
            if len(self._verified) > self._size:
                self._verified.popitem(last=False)
            return principal
        if now >= principal.expires_at:
            del self._verified[token]
            raise TokenExpired("the token expired")
        self._verified.move_to_end(token)
        return principal
