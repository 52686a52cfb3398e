"""Bearer tokens: what verifies, and the specific error for each way a token fails."""

from __future__ import annotations

import base64
import json
import secrets

import pytest

from servicekit.auth import (
    BadSignature,
    MalformedToken,
    MissingToken,
    Principal,
    Role,
    TokenError,
    TokenExpired,
    TokenVerifier,
    bearer_metadata,
    bearer_token,
    is_public,
    issue_token,
    verify_token,
)
from servicekit.errors import Unauthenticated

SECRET = secrets.token_bytes(32)
NOW = 1_700_000_000


def token_for(subject: str = "player-1", role: Role = Role.PLAYER, ttl_s: int = 60) -> str:
    return issue_token(SECRET, subject=subject, role=role, ttl_s=ttl_s, now=NOW)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signed_claims(claims: object) -> str:
    """A correctly signed token over arbitrary claims, to reach the claim checks."""
    import hashlib
    import hmac

    payload = b64(json.dumps(claims).encode())
    signature = hmac.new(SECRET, payload.encode(), hashlib.sha256).digest()
    return f"{payload}.{b64(signature)}"


@pytest.mark.parametrize("role", list(Role))
def test_a_valid_token_yields_its_principal(role: Role) -> None:
    principal = verify_token(token_for("p-42", role), SECRET, now=NOW + 59)
    assert principal == Principal(subject="p-42", role=role, expires_at=NOW + 60)


def test_an_explicit_expiry_is_kept() -> None:
    token = issue_token(SECRET, subject="p", role=Role.DEALER, expires_at=NOW + 5)
    assert verify_token(token, SECRET, now=NOW).expires_at == NOW + 5


def test_a_token_is_expired_at_its_expiry_second() -> None:
    with pytest.raises(TokenExpired):
        verify_token(token_for(ttl_s=60), SECRET, now=NOW + 60)


def test_a_token_signed_with_another_secret_has_a_bad_signature() -> None:
    with pytest.raises(BadSignature):
        verify_token(token_for(), secrets.token_bytes(32), now=NOW)


def test_tampered_claims_break_the_signature() -> None:
    payload, signature = token_for(role=Role.PLAYER).split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["role"] = "operator"
    forged = f"{b64(json.dumps(claims).encode())}.{signature}"
    with pytest.raises(BadSignature):
        verify_token(forged, SECRET, now=NOW)


def test_a_tampered_signature_is_bad() -> None:
    payload, signature = token_for().split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    with pytest.raises(BadSignature):
        verify_token(f"{payload}.{flipped}", SECRET, now=NOW)


def test_an_expired_token_is_checked_after_the_signature() -> None:
    """A forged token learns nothing from the expiry check: it fails on the signature first."""
    expired_and_forged = issue_token(
        secrets.token_bytes(32), subject="p", role=Role.PLAYER, expires_at=1
    )
    with pytest.raises(BadSignature):
        verify_token(expired_and_forged, SECRET, now=NOW)


def test_a_missing_token_is_missing() -> None:
    with pytest.raises(MissingToken):
        verify_token("", SECRET, now=NOW)


@pytest.mark.parametrize(
    "token",
    ["abc", "a.b.c", ".sig", "claims.", "cl@ims.sig", "cl\u00e9ms.sig", "claims.sig\n", "x" * 5000],
    ids=[
        "one-part",
        "three-parts",
        "no-claims",
        "no-signature",
        "not-base64",
        "not-ascii",
        "newline",
        "too-long",
    ],
)
def test_a_token_of_the_wrong_shape_is_malformed(token: str) -> None:
    with pytest.raises(MalformedToken):
        verify_token(token, SECRET, now=NOW)


@pytest.mark.parametrize(
    "claims",
    [
        "not an object",
        {"role": "player", "exp": NOW + 60},
        {"sub": "p", "role": "croupier", "exp": NOW + 60},
        {"sub": "p", "role": "player", "exp": "tomorrow"},
        {"sub": "p", "role": "player", "exp": True},
        {"sub": "", "role": "player", "exp": NOW + 60},
        {"sub": 7, "role": "player", "exp": NOW + 60},
    ],
    ids=[
        "not-object",
        "no-subject",
        "unknown-role",
        "text-expiry",
        "bool-expiry",
        "empty-subject",
        "number-subject",
    ],
)
def test_signed_but_invalid_claims_are_malformed(claims: object) -> None:
    with pytest.raises(MalformedToken):
        verify_token(signed_claims(claims), SECRET, now=NOW)


def test_every_token_error_is_an_unauthenticated_service_error() -> None:
    for error in (MissingToken, MalformedToken, BadSignature, TokenExpired):
        assert issubclass(error, TokenError)
        assert issubclass(error, Unauthenticated)


def test_a_short_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        issue_token(b"short", subject="p", role=Role.PLAYER)
    with pytest.raises(ValueError, match="at least 32 bytes"):
        verify_token("a.b", b"short")


def test_bearer_metadata_round_trips_through_bearer_token() -> None:
    assert bearer_token(bearer_metadata("tok.en")) == "tok.en"


@pytest.mark.parametrize(
    ("metadata", "token"),
    [
        ((("Authorization", "bearer abc.def"),), "abc.def"),
        ((("user-agent", "x"), ("authorization", "Bearer  abc.def ")), "abc.def"),
        ((("authorization", "Basic dXNlcjpwdw=="),), ""),
        ((), ""),
        (None, ""),
    ],
)
def test_bearer_token_reads_the_authorization_entry(metadata: object, token: str) -> None:
    assert bearer_token(metadata) == token


def test_health_and_reflection_are_public_and_nothing_else() -> None:
    assert is_public("/grpc.health.v1.Health/Check")
    assert is_public("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
    assert not is_public("/poker.Dealer/Act")
    assert not is_public("/grpc.health.v1.HealthX/Check")


def test_the_verifier_caches_good_tokens_but_still_checks_their_expiry() -> None:
    verifier = TokenVerifier(SECRET, size=2)
    token = token_for(ttl_s=60)
    assert verifier.verify(token, NOW) == verify_token(token, SECRET, now=NOW)
    assert verifier.verify(token, NOW + 59).subject == "player-1"  # from the cache
    with pytest.raises(TokenExpired):
        verifier.verify(token, NOW + 60)
    with pytest.raises(TokenExpired):
        verifier.verify(token, NOW + 61)  # dropped from the cache, refused by the full check


def test_the_verifier_never_caches_a_failure_and_stays_bounded() -> None:
    verifier = TokenVerifier(SECRET, size=2)
    forged = issue_token(secrets.token_bytes(32), subject="eve", role=Role.OPERATOR, now=NOW)
    for _ in range(2):
        with pytest.raises(BadSignature):
            verifier.verify(forged, NOW)
    tokens = [token_for(subject=f"p{n}") for n in range(5)]
    assert [verifier.verify(t, NOW).subject for t in tokens] == [f"p{n}" for n in range(5)]
    assert len(verifier._verified) == 2
