"""Bearer tokens (standard JWTs) and their signing keys: issue, verify, roles, claims.

Nothing here knows gRPC: the interceptor that authenticates every call with these tokens, the
call metadata and the current caller are :mod:`poker.servicekit.auth`'s, at the edge; tools and
settings that only issue tokens or read key files import this module alone.

A token is a JWT (RFC 7519) signed with Ed25519 (``EdDSA``) by its issuer's private key, or,
in the legacy mode, with HMAC-SHA256 (``HS256``) under a shared secret. Its header names the
signing key (``kid``); its claims are ``sub`` (the player or service id), ``role`` (player,
cashier, dealer or operator), ``iat`` (issued at) and ``exp`` (expiry), all required, times in
unix seconds. Keys live in a :class:`TokenKeyring` of :class:`TokenKey`: each names its
algorithm (the key decides it, never the token's header) and the roles it may sign; every key
verifies, and a host signs a role only with a key whose private part it holds. The services
verify with the public ring; each issuer holds its own private key (see
``docs/security/tokens.md``). A bare secret (``--token-secret``) is the legacy one-key ring
``{"current": "default", "keys": {"default": <secret>}}``, which signs and verifies any role.

Checked in order, each failure its own error (all UNAUTHENTICATED): present
(:class:`MissingToken`), at most :data:`MAX_TOKEN_CHARS` of JWT characters, three parts, a header
with ``alg`` EdDSA or HS256 and a known ``kid`` (:class:`MalformedToken`, or
:class:`BadSignature` for another algorithm, ``none`` included, a key id the ring does not hold,
or an algorithm that is not that key's), the signature (:class:`BadSignature`), the claims
(:class:`MalformedToken`), a role the key may sign (:class:`BadSignature`), then the times
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
import os
import re
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeAlias

import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from poker.servicekit.errors import Unauthenticated

#: HMAC-SHA256 keys shorter than the hash give away strength; refuse them.
MIN_SECRET_BYTES = 32
MAX_SUBJECT_CHARS = 128
#: Bigger tokens are refused before any decoding work (ours are about 250 characters).
MAX_TOKEN_CHARS = 2048
#: The legacy algorithm: HMAC-SHA256 under a shared secret (whoever verifies can also sign).
HMAC_ALGORITHM = "HS256"
#: Ed25519 signatures: the verifiers hold the public key only.
EDDSA_ALGORITHM = "EdDSA"
#: The legacy name of the one algorithm of old (kept for callers that import it).
ALGORITHM = HMAC_ALGORITHM
#: The algorithms a token may name; any other (``none`` included) is refused before a key is
#: looked up. Which of them a token may use is its key's, never the token's, choice.
ALGORITHMS = frozenset({HMAC_ALGORITHM, EDDSA_ALGORITHM})
ED25519_KEY_BYTES = 32
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


def _roles_of(value: Iterable[Role | str] | None) -> frozenset[Role] | None:
    if value is None:
        return None
    if isinstance(value, str):
        raise ValueError("a token key's roles are a list of role names")
    try:
        roles = frozenset(Role(role) for role in value)
    except ValueError as error:
        names = ", ".join(role.value for role in Role)
        raise ValueError(f"a token key's roles are among {names}") from error
    if not roles:
        raise ValueError("a token key must name at least one role it may sign")
    return roles


@dataclass(frozen=True, slots=True, repr=False)
class TokenKey:
    """One key of a ring: its algorithm, what verifies, what signs, and the roles it may sign.

    - ``EdDSA``: ``key`` is the raw 32-byte Ed25519 public key (it only verifies); ``private``,
      the raw 32-byte private key, is on the issuer's host only. ``roles`` is required: a token
      of another role under this key is refused, whoever signed it.
    - ``HS256`` (legacy): ``key`` is the shared secret (>= 32 bytes), which verifies *and* signs;
      ``roles`` None means any role (the shared ring of old), else only those.
    """

    algorithm: str
    key: bytes
    private: bytes | None = None
    roles: frozenset[Role] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "roles", _roles_of(self.roles))
        if self.algorithm == HMAC_ALGORITHM:
            if not isinstance(self.key, bytes):
                raise ValueError("an HS256 token key's secret must be bytes")
            _verify_secret(self.key)
            if self.private is not None:
                raise ValueError("an HS256 token key has one secret, no private key")
        elif self.algorithm == EDDSA_ALGORITHM:
            self._check_ed25519()
        else:
            raise ValueError(
                f"a token key's algorithm is {HMAC_ALGORITHM} or {EDDSA_ALGORITHM}, "
                f"not {str(self.algorithm)[:16]!r}"
            )

    def _check_ed25519(self) -> None:
        if self.roles is None:
            raise ValueError("an EdDSA token key must name the roles it may sign")
        if not isinstance(self.key, bytes) or len(self.key) != ED25519_KEY_BYTES:
            raise ValueError(f"an Ed25519 public key is {ED25519_KEY_BYTES} bytes")
        if self.private is None:
            return
        if not isinstance(self.private, bytes) or len(self.private) != ED25519_KEY_BYTES:
            raise ValueError(f"an Ed25519 private key is {ED25519_KEY_BYTES} bytes")
        derived = Ed25519PrivateKey.from_private_bytes(self.private).public_key()
        if derived.public_bytes(Encoding.Raw, PublicFormat.Raw) != self.key:
            raise ValueError("the Ed25519 private key does not match its public key")

    def __repr__(self) -> str:  # never print a secret or a private key
        roles = "any" if self.roles is None else sorted(role.value for role in self.roles)
        return f"TokenKey({self.algorithm}, roles={roles}, signs={self.signs})"

    @classmethod
    def hmac(cls, secret: bytes, roles: Iterable[Role] | None = None) -> TokenKey:
        """An HS256 key (legacy): the secret verifies and signs; any role unless ``roles``."""
        return cls(HMAC_ALGORITHM, secret, None, None if roles is None else frozenset(roles))

    @classmethod
    def generate(cls, roles: Iterable[Role]) -> TokenKey:
        """A fresh Ed25519 key pair (private part included) that may sign ``roles``."""
        private = Ed25519PrivateKey.generate()
        return cls(
            EDDSA_ALGORITHM,
            private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw),
            private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()),
            frozenset(roles),
        )

    @property
    def secret(self) -> bytes:
        """The HS256 secret (an EdDSA key has none)."""
        if self.algorithm != HMAC_ALGORITHM:
            raise ValueError("an EdDSA key has no shared secret")
        return self.key

    @property
    def signs(self) -> bool:
        """Whether this host can sign with the key (an HS256 secret, or an Ed25519 private key)."""
        return self.algorithm == HMAC_ALGORITHM or self.private is not None

    def may_sign(self, role: Role) -> bool:
        """Whether a token of ``role`` under this key is accepted."""
        return self.roles is None or role in self.roles

    def public_only(self) -> TokenKey:
        """This key without its private part (an HS256 key cannot be split: it stays whole)."""
        if self.algorithm == HMAC_ALGORITHM:
            return self
        return TokenKey(self.algorithm, self.key, None, self.roles)

    def signing_material(self) -> bytes | Ed25519PrivateKey:
        """What PyJWT signs with."""
        if self.algorithm == HMAC_ALGORITHM:
            return self.key
        if self.private is None:
            raise ValueError("this host holds only the public half of the key")
        return Ed25519PrivateKey.from_private_bytes(self.private)

    def verifying_material(self) -> bytes | Ed25519PublicKey:
        """What PyJWT verifies with."""
        if self.algorithm == HMAC_ALGORITHM:
            return self.key
        return Ed25519PublicKey.from_public_bytes(self.key)

    def document(self) -> str | dict[str, Any]:
        """The file form of the key: a bare base64 secret for a legacy any-role HS256 key."""
        if self.algorithm == HMAC_ALGORITHM and self.roles is None:
            return _b64(self.key)
        entry: dict[str, Any] = {"alg": self.algorithm}
        entry["secret" if self.algorithm == HMAC_ALGORITHM else "public"] = _b64(self.key)
        if self.private is not None:
            entry["private"] = _b64(self.private)
        if self.roles is not None:
            entry["roles"] = sorted(role.value for role in self.roles)
        return entry

    @classmethod
    def from_document(cls, kid: str, entry: object) -> TokenKey:
        """The key of a file entry; ValueError naming ``kid`` if it is not one."""
        if isinstance(entry, str):
            return cls.hmac(_unb64(kid, "secret", entry))
        if not isinstance(entry, dict):
            raise ValueError(f"token key {kid!r} must be a base64 secret or an object")
        algorithm = entry.get("alg")
        fields = _KEY_FIELDS.get(algorithm) if isinstance(algorithm, str) else None
        if fields is None:
            raise ValueError(
                f"token key {kid!r} needs an alg: {HMAC_ALGORITHM} or {EDDSA_ALGORITHM}"
            )
        required, optional = fields
        unknown = set(entry) - required - optional
        if unknown or not required <= set(entry):
            raise ValueError(
                f"token key {kid!r} ({algorithm}) has the fields {sorted(required)} "
                f"and optionally {sorted(optional - {'alg'})}, not {sorted(entry)}"
            )
        material = "secret" if algorithm == HMAC_ALGORITHM else "public"
        private = entry.get("private")
        try:
            return cls(
                str(algorithm),
                _unb64(kid, material, entry[material]),
                None if private is None else _unb64(kid, "private", private),
                _roles_of(entry.get("roles")),
            )
        except ValueError as error:
            raise ValueError(f"token key {kid!r}: {error}") from error


#: ``{alg: (required fields, optional fields)}`` of a key entry in the file form.
_KEY_FIELDS: Mapping[str, tuple[frozenset[str], frozenset[str]]] = {
    HMAC_ALGORITHM: (frozenset({"alg", "secret"}), frozenset({"roles"})),
    EDDSA_ALGORITHM: (frozenset({"alg", "public", "roles"}), frozenset({"private"})),
}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(kid: str, field: str, text: object) -> bytes:
    try:
        return base64.b64decode(str(text), validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"token key {kid!r}: its {field} is not base64") from error


class TokenKeyring:
    """The token keys of a host: ``keys`` (key id -> :class:`TokenKey`) all verify; the keys
    this host holds a signing part of sign, each only the roles it may.

    A verifier (the wallet, a dealer) holds the public ring; an issuer (the payments service, the
    login service, pokerctl, a dealer for its own ``dealer`` token) holds its own private keys.
    ``current`` (optional) is the key preferred for signing when several may sign a role (the
    legacy shared ring: the one key that signs everything). The file form (``--token-keys``)::

        {"current": "2027-01",                        # optional
         "keys": {"payments-2027-01": {"alg": "EdDSA", "roles": ["cashier"],
                                       "public": "<base64, 32 bytes>",
                                       "private": "<base64, 32 bytes>"},   # issuer's host only
                  "2026-07": "<base64 HS256 secret>"}}                    # legacy: any role

    Values given as bare ``bytes`` are legacy HS256 keys of any role.
    """

    __slots__ = ("current", "keys")

    def __init__(self, current: str | None, keys: Mapping[str, TokenKey | bytes]) -> None:
        normalized: dict[str, TokenKey] = {}
        for kid, given in keys.items():
            if not isinstance(kid, str) or not _KID.fullmatch(kid):
                raise ValueError(f"a token key id must be 1-64 of A-Z a-z 0-9 . _ -, not {kid!r}")
            key = TokenKey.hmac(given) if isinstance(given, bytes) else given
            if not isinstance(key, TokenKey):
                raise ValueError(f"token key {kid} must be bytes or a TokenKey")
            normalized[kid] = key
        if not normalized:
            raise ValueError("the token keyring needs at least one key")
        if current is not None and current not in normalized:
            raise ValueError(f"the current token key {current!r} is not in the keyring")
        if current is None and self._legacy_signers(normalized):
            raise ValueError("a keyring with shared (HS256) keys of any role needs a current key")
        self.current = current
        self.keys: Mapping[str, TokenKey] = MappingProxyType(normalized)

    @staticmethod
    def _legacy_signers(keys: Mapping[str, TokenKey]) -> bool:
        return any(key.algorithm == HMAC_ALGORITHM and key.roles is None for key in keys.values())

    def __repr__(self) -> str:  # never print the secrets
        return f"TokenKeyring(current={self.current!r}, kids={sorted(self.keys)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TokenKeyring):
            return NotImplemented
        return self.current == other.current and dict(self.keys) == dict(other.keys)

    def __hash__(self) -> int:
        return hash((self.current, tuple(sorted(self.keys))))

    @property
    def legacy(self) -> bool:
        """Whether a shared HS256 key of any role is in the ring: whoever verifies can mint any
        role (the mode to migrate from, docs/security/tokens.md)."""
        return self._legacy_signers(self.keys)

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
        if not isinstance(document, dict) or "keys" not in document:
            raise ValueError('the token keyring must be {"keys": {...}, "current": <kid>}')
        if set(document) - {"current", "keys"}:
            raise ValueError('the token keyring has only "current" and "keys"')
        keys, current = document["keys"], document.get("current")
        if not isinstance(keys, dict) or not keys:
            raise ValueError("the token keyring needs at least one key")
        if current is not None and not isinstance(current, str):
            raise ValueError("the token keyring's current key id must be a string")
        return cls(
            current, {kid: TokenKey.from_document(kid, entry) for kid, entry in keys.items()}
        )

    @classmethod
    def load(cls, path: str | Path) -> TokenKeyring:
        """The ring in the file at ``path``."""
        return cls.from_json(Path(path).read_text(encoding="utf-8"))

    def to_json(self) -> str:
        """The file form of this ring (for tools that write one)."""
        document: dict[str, Any] = {"keys": {kid: key.document() for kid, key in self.keys.items()}}
        if self.current is not None:
            document["current"] = self.current
        return json.dumps(document, indent=2, sort_keys=True)

    def public(self) -> TokenKeyring:
        """This ring as a verifier gets it: every Ed25519 private key left out (a legacy HS256
        key cannot be split and stays: whoever holds it can still sign)."""
        current = self.current if self.current in self.keys else None
        keys = {kid: key.public_only() for kid, key in self.keys.items()}
        return TokenKeyring(current, keys)

    def merged(self, other: TokenKeyring) -> TokenKeyring:
        """Both rings' keys (a key id in both must be the same key but for its private part:
        the issuer's copy, with it, wins); ``other``'s current, else this one's."""
        keys = dict(self.keys)
        for kid, key in other.keys.items():
            mine = keys.get(kid)
            if mine is not None and mine.public_only() != key.public_only():
                raise ValueError(f"token key {kid!r} differs between the two keyrings")
            if mine is None or key.signs:
                keys[kid] = key
        return TokenKeyring(other.current or self.current, keys)

    def signing_roles(self) -> frozenset[Role]:
        """Every role this host can sign a token of."""
        return frozenset(role for role in Role if self._signers(role))

    def _signers(self, role: Role) -> list[str]:
        return [kid for kid, key in self.keys.items() if key.signs and key.may_sign(role)]

    def signing_key(self, role: Role) -> tuple[str, TokenKey]:
        """``(kid, key)`` that signs a token of ``role``: the current key if it may, else the
        one key this host can sign ``role`` with; ValueError saying which key is needed."""
        signers = self._signers(role)
        if self.current in signers:
            return self.current, self.keys[self.current]
        if len(signers) == 1:
            return signers[0], self.keys[signers[0]]
        if not signers:
            raise NoSigningKey(
                f"this keyring holds no private key that may sign a {role.value} token: it needs "
                f"the {ISSUER_OF[role]}'s (an EdDSA key with its private part and "
                f'"roles": ["{role.value}"])'
            )
        raise NoSigningKey(
            f"several keys of this keyring may sign a {role.value} token ({', '.join(signers)}): "
            "name the one to use as its current key, or remove the retired one"
        )


class NoSigningKey(ValueError):
    """The ring cannot sign a token of the role asked for: the sentence names the key needed."""


#: Who issues each role's tokens, i.e. whose private key signs them.
ISSUER_OF: Mapping[Role, str] = MappingProxyType(
    {
        Role.PLAYER: "login service",
        Role.CASHIER: "payments service",
        Role.DEALER: "dealer",
        Role.OPERATOR: "operator (pokerctl)",
    }
)


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
    """A token for ``subject`` acting as ``role``, signed with the ring's key for ``role``
    (:meth:`TokenKeyring.signing_key`), valid until ``expires_at`` (unix seconds) or for
    ``ttl_s`` from ``now``. :class:`NoSigningKey` (a ValueError) if this ring cannot sign it."""
    ring = keyring_of(keys)
    if not 0 < len(subject) <= MAX_SUBJECT_CHARS:
        raise ValueError(f"a subject must be 1-{MAX_SUBJECT_CHARS} characters")
    role = Role(role)
    kid, key = ring.signing_key(role)
    issued_at = int(time.time() if now is None else now)
    if expires_at is None:
        expires_at = issued_at + ttl_s
    claims = {"sub": subject, "role": role.value, "iat": issued_at, "exp": int(expires_at)}
    return jwt.encode(claims, key.signing_material(), algorithm=key.algorithm, headers={"kid": kid})


def verify_token(token: str, keys: TokenKeys, *, now: float | None = None) -> Principal:
    """The principal ``token`` proves, checked in order: shape, header (an accepted algorithm,
    a known key id, the algorithm of that key), signature, claims, the role against the key's
    roles, times.

    Raises :class:`MissingToken`, :class:`MalformedToken`, :class:`BadSignature` or
    :class:`TokenExpired`. PyJWT compares an HMAC in constant time.
    """
    ring = keyring_of(keys)
    if not token:
        raise MissingToken("a bearer token is required")
    if len(token) > MAX_TOKEN_CHARS:
        raise MalformedToken("the token is too long")
    if not _JWT.fullmatch(token):
        raise MalformedToken("the token is not a JWT (<header>.<claims>.<signature> in base64url)")
    algorithm, kid = _header(token)
    key = ring.keys.get(kid)
    if key is None:
        raise BadSignature(f"the token's key id {kid!r} is not one this service accepts")
    if algorithm != key.algorithm:
        # The key decides its algorithm: an HS256 token under an EdDSA key id would be checked
        # with the public key as an HMAC secret, which anybody can compute.
        raise BadSignature(
            f"the token's algorithm {algorithm!r} is not its key's: key {kid!r} is {key.algorithm}"
        )
    claims = _verified_claims(token, key)
    principal = _principal_from_claims(claims)
    if not key.may_sign(principal.role):
        # The claim is not vouched for by anybody entitled to make it: as unauthenticated as a
        # forged signature (and told apart only by this sentence, for the operator's logs).
        raise BadSignature(f"the token's key {kid!r} may not sign a {principal.role} token")
    at = time.time() if now is None else now
    if claims["iat"] > at + CLOCK_SKEW_S:
        raise MalformedToken("the token was issued in the future")
    if at >= principal.expires_at:
        raise TokenExpired("the token expired")
    return principal


def _header(token: str) -> tuple[str, str]:
    """The header's ``alg`` and ``kid``, once ``alg`` is one of :data:`ALGORITHMS`; raises
    otherwise."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError as error:
        raise MalformedToken("the token header is not valid") from error
    algorithm = header.get("alg")
    if algorithm not in ALGORITHMS:
        shown = algorithm if isinstance(algorithm, str) and len(algorithm) <= 16 else "?"
        accepted = " or ".join(sorted(ALGORITHMS))
        raise BadSignature(f"the token's algorithm {shown!r} is not accepted (only {accepted})")
    kid = header.get("kid")
    if not isinstance(kid, str) or not _KID.fullmatch(kid):
        raise MalformedToken("the token header names no valid key id (kid)")
    return str(algorithm), kid


def _verified_claims(token: str, key: TokenKey) -> dict[str, Any]:
    try:
        claims: dict[str, Any] = jwt.decode(
            token, key.verifying_material(), algorithms=[key.algorithm], options=_DECODE_OPTIONS
        )
    except jwt.InvalidSignatureError as error:
        raise BadSignature("the token signature is not valid") from error
    except jwt.InvalidAlgorithmError as error:  # pragma: no cover - the header check is first
        raise BadSignature("the token's algorithm is not accepted") from error
    except jwt.DecodeError as error:
        # An EdDSA signature of the wrong length or encoding is a bad signature, not bad claims.
        if "signature" in str(error).lower():
            raise BadSignature("the token signature is not valid") from error
        raise MalformedToken("the token claims are not valid") from error
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


# --- the operator's command --------------------------------------------------------------------


def write_private(path: Path, text: str, *, replace: bool = False) -> None:
    """Write ``text`` to ``path`` readable by its owner only (0600 from the start: a private
    key is never readable by others, not even for a moment); refuses to replace a file unless
    ``replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if replace else os.O_EXCL)
    descriptor = os.open(path, flags, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    path.chmod(0o600)


def public_ring(rings: Iterable[TokenKeyring]) -> TokenKeyring:
    """The verifiers' ring of every key of ``rings``, private parts left out."""
    merged: TokenKeyring | None = None
    for ring in rings:
        merged = ring if merged is None else merged.merged(ring)
    if merged is None:
        raise ValueError("no keyring given")
    return merged.public()


def main(argv: list[str] | None = None) -> int:
    """``python -m poker.servicekit.tokens``: make an issuer's key pair, or the public ring.

    ``new-key KID --role ROLE [--role ...] PATH`` writes the issuer's ring (its Ed25519 key
    pair, mode 0600; never over an existing file); ``public RING... [-o PATH]`` writes the ring
    every service verifies with: the keys of the rings given, their private parts left out.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m poker.servicekit.tokens", description="Bearer-token keys (EdDSA)."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    new = commands.add_parser("new-key", help="an issuer's Ed25519 key pair, as its keyring")
    new.add_argument("kid", help="the key id (1-64 of A-Z a-z 0-9 . _ -), e.g. payments-2027-01")
    new.add_argument(
        "--role", action="append", required=True, choices=[role.value for role in Role]
    )
    new.add_argument("path", type=Path, help="the issuer's keyring file to write (0600)")
    public = commands.add_parser("public", help="the verifiers' ring of issuers' keyrings")
    public.add_argument("rings", nargs="+", type=Path)
    public.add_argument("-o", "--output", type=Path, help="default: standard output")
    options = parser.parse_args(argv)
    try:
        if options.command == "new-key":
            ring = TokenKeyring(None, {options.kid: TokenKey.generate(map(Role, options.role))})
            write_private(options.path, ring.to_json() + "\n")
            print(f"wrote {options.path}: key {options.kid}, signs {', '.join(options.role)}")
            return 0
        text = public_ring(TokenKeyring.load(path) for path in options.rings).to_json() + "\n"
    except FileExistsError:
        print(f"{options.path} exists: a key is never overwritten", file=sys.stderr)
        return 1
    except (OSError, ValueError) as error:
        print(f"cannot make the keyring: {error}", file=sys.stderr)
        return 1
    if options.output is None:
        sys.stdout.write(text)
    else:
        options.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
