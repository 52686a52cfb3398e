"""Bearer tokens (JWTs with a key id): what verifies, the specific error for each way a token
fails, and key rotation with the old and the new key side by side."""

from __future__ import annotations

import base64
import json
import secrets
from pathlib import Path

import jwt
import pytest

from poker.servicekit.auth import bearer_metadata, bearer_token, is_public
from poker.servicekit.errors import Unauthenticated
from poker.servicekit.tokens import (
    CLOCK_SKEW_S,
    MAX_TOKEN_CHARS,
    BadSignature,
    MalformedToken,
    MissingToken,
    Principal,
    Role,
    TokenError,
    TokenExpired,
    TokenKeyring,
    TokenVerifier,
    issue_token,
    verify_token,
)

SECRET = secrets.token_bytes(32)
NOW = 1_700_000_000


def token_for(subject: str = "player-1", role: Role = Role.PLAYER, ttl_s: int = 60) -> str:
    return issue_token(SECRET, subject=subject, role=role, ttl_s=ttl_s, now=NOW)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signed_claims(claims: object, **header: object) -> str:
    """A correctly signed HS256 token (kid ``default``) over arbitrary claims, to reach the
    claim checks."""
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "default", **header}).encode())
    body = b64(json.dumps(claims).encode())
    signing_input = f"{head}.{body}".encode()
    import hashlib
    import hmac

    signature = hmac.new(SECRET, signing_input, hashlib.sha256).digest()
    return f"{head}.{body}.{b64(signature)}"


def _json_part(text: str) -> dict[str, object]:
    value: dict[str, object] = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    return value


def parts(token: str) -> tuple[dict[str, object], dict[str, object], str]:
    head, body, signature = token.split(".")
    return _json_part(head), _json_part(body), signature


@pytest.mark.parametrize("role", list(Role))
def test_a_valid_token_yields_its_principal(role: Role) -> None:
    principal = verify_token(token_for("p-42", role), SECRET, now=NOW + 59)
    assert principal == Principal(subject="p-42", role=role, expires_at=NOW + 60)


def test_an_explicit_expiry_is_kept() -> None:
    token = issue_token(SECRET, subject="p", role=Role.DEALER, expires_at=NOW + 5, now=NOW)
    assert verify_token(token, SECRET, now=NOW).expires_at == NOW + 5


def test_a_token_is_expired_at_its_expiry_second() -> None:
    with pytest.raises(TokenExpired):
        verify_token(token_for(ttl_s=60), SECRET, now=NOW + 60)


def test_a_token_signed_with_another_secret_has_a_bad_signature() -> None:
    with pytest.raises(BadSignature):
        verify_token(token_for(), secrets.token_bytes(32), now=NOW)


def test_tampered_claims_break_the_signature() -> None:
    head, _, signature = token_for(role=Role.PLAYER).split(".")
    _, claims, _ = parts(token_for(role=Role.PLAYER))
    claims["role"] = "operator"
    forged = f"{head}.{b64(json.dumps(claims).encode())}.{signature}"
    with pytest.raises(BadSignature):
        verify_token(forged, SECRET, now=NOW)


def test_a_tampered_signature_is_bad() -> None:
    head, payload, signature = token_for().split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    with pytest.raises(BadSignature):
        verify_token(f"{head}.{payload}.{flipped}", SECRET, now=NOW)


def test_a_token_is_a_standard_jwt_naming_its_key() -> None:
    header, claims, _ = parts(token_for("p-1", ttl_s=60))
    assert header == {"alg": "HS256", "typ": "JWT", "kid": "default"}
    assert claims == {"sub": "p-1", "role": "player", "iat": NOW, "exp": NOW + 60}
    decoded = jwt.decode(
        token_for("p-1"), SECRET, algorithms=["HS256"], options={"verify_exp": False}
    )
    assert decoded["sub"] == "p-1"


def test_alg_none_is_refused_even_with_a_known_kid() -> None:
    _, claims, _ = parts(token_for(role=Role.OPERATOR))
    head = b64(json.dumps({"alg": "none", "typ": "JWT", "kid": "default"}).encode())
    for signature in ("", "x"):
        token = f"{head}.{b64(json.dumps(claims).encode())}.{signature}"
        with pytest.raises((BadSignature, MalformedToken)):
            verify_token(token, SECRET, now=NOW)


@pytest.mark.parametrize("algorithm", ["HS384", "HS512", "RS256", "ES256", "hs256", "None"])
def test_any_other_algorithm_is_refused(algorithm: str) -> None:
    token = signed_claims(
        {"sub": "p", "role": "operator", "iat": NOW, "exp": NOW + 60}, alg=algorithm
    )
    with pytest.raises(BadSignature, match="algorithm"):
        verify_token(token, SECRET, now=NOW)


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
def test_an_hs512_token_under_a_known_key_is_still_refused() -> None:
    """The configured algorithm only: a token PyJWT would accept as HS512 is not one of ours."""
    token = jwt.encode(
        {"sub": "p", "role": "operator", "iat": NOW, "exp": NOW + 60},
        SECRET,
        algorithm="HS512",
        headers={"kid": "default"},
    )
    with pytest.raises(BadSignature, match="algorithm"):
        verify_token(token, SECRET, now=NOW)


@pytest.mark.parametrize("kid", ["other", "../../etc/passwd", "", 7, None])
def test_an_unknown_or_invalid_kid_is_refused(kid: object) -> None:
    header = {"kid": kid} if kid is not None else {"kid": None}
    token = signed_claims({"sub": "p", "role": "player", "iat": NOW, "exp": NOW + 60}, **header)
    with pytest.raises((BadSignature, MalformedToken)):
        verify_token(token, SECRET, now=NOW)


def test_a_forged_kid_naming_a_real_key_with_another_secret_is_a_bad_signature() -> None:
    token = issue_token(
        TokenKeyring("default", {"default": secrets.token_bytes(32)}),
        subject="eve",
        role=Role.OPERATOR,
        now=NOW,
    )
    with pytest.raises(BadSignature, match="signature"):
        verify_token(token, SECRET, now=NOW)


def test_rotation_old_and_new_verify_side_by_side_the_new_signs() -> None:
    old, new = secrets.token_bytes(32), secrets.token_bytes(32)
    before = TokenKeyring("2026-07", {"2026-07": old})
    during = TokenKeyring("2027-01", {"2026-07": old, "2027-01": new})
    after = TokenKeyring("2027-01", {"2027-01": new})
    old_token = issue_token(before, subject="p", role=Role.PLAYER, now=NOW)
    new_token = issue_token(during, subject="p", role=Role.PLAYER, now=NOW)
    assert parts(new_token)[0]["kid"] == "2027-01"
    for token in (old_token, new_token):
        assert verify_token(token, during, now=NOW).subject == "p"
    assert verify_token(new_token, after, now=NOW).subject == "p"
    with pytest.raises(BadSignature, match="'2026-07' is not one this service accepts"):
        verify_token(old_token, after, now=NOW)
    with pytest.raises(BadSignature):
        verify_token(new_token, before, now=NOW)


def test_a_keyring_file_round_trips_and_bad_ones_say_why(tmp_path: Path) -> None:
    ring = TokenKeyring("b", {"a": secrets.token_bytes(32), "b": secrets.token_bytes(48)})
    path = tmp_path / "keys.json"
    path.write_text(ring.to_json())
    assert TokenKeyring.load(path) == ring
    assert "secret" not in repr(ring) and ring.keys["a"].secret.hex() not in repr(ring)
    bad = {
        "not json": "{",
        "current missing": json.dumps({"current": "x", "keys": {"a": b64(b"k" * 32) + "="}}),
        "short key": json.dumps(
            {"current": "a", "keys": {"a": base64.b64encode(b"k" * 16).decode()}}
        ),
        "not base64": json.dumps({"current": "a", "keys": {"a": "@@@"}}),
        "bad kid": json.dumps(
            {"current": "a b", "keys": {"a b": base64.b64encode(b"k" * 32).decode()}}
        ),
        "no keys": json.dumps({"current": "a", "keys": {}}),
        "extra field": json.dumps({"current": "a", "keys": {}, "x": 1}),
    }
    for name, text in bad.items():
        with pytest.raises(ValueError):
            TokenKeyring.from_json(text)
        assert name


def test_a_token_issued_in_the_future_beyond_the_skew_is_refused() -> None:
    token = issue_token(SECRET, subject="p", role=Role.PLAYER, now=NOW + CLOCK_SKEW_S, ttl_s=60)
    assert verify_token(token, SECRET, now=NOW).subject == "p"  # within the leeway
    later = issue_token(SECRET, subject="p", role=Role.PLAYER, now=NOW + CLOCK_SKEW_S + 1)
    with pytest.raises(MalformedToken, match="future"):
        verify_token(later, SECRET, now=NOW)


@pytest.mark.parametrize("missing", ["sub", "role", "iat", "exp"])
def test_every_required_claim_must_be_there(missing: str) -> None:
    claims = {"sub": "p", "role": "player", "iat": NOW, "exp": NOW + 60}
    del claims[missing]
    with pytest.raises(MalformedToken):
        verify_token(signed_claims(claims), SECRET, now=NOW)


def test_an_oversized_token_is_refused_before_decoding() -> None:
    token = signed_claims(
        {"sub": "p", "role": "player", "iat": NOW, "exp": NOW + 60, "pad": "x" * MAX_TOKEN_CHARS}
    )
    with pytest.raises(MalformedToken, match="too long"):
        verify_token(token, SECRET, now=NOW)


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
    [
        "abc",
        "a.b",
        "a.b.c.d",
        ".b.c",
        "a.b.",
        "a.cl@ims.sig",
        "a.cl\u00e9ms.sig",
        "a.b.sig\n",
        "x" * 5000,
        "a.b.c",
    ],
    ids=[
        "one-part",
        "two-parts",
        "four-parts",
        "no-header",
        "no-signature",
        "not-base64",
        "not-ascii",
        "newline",
        "too-long",
        "header-not-json",
    ],
)
def test_a_token_of_the_wrong_shape_is_malformed(token: str) -> None:
    with pytest.raises(MalformedToken):
        verify_token(token, SECRET, now=NOW)


@pytest.mark.parametrize(
    "claims",
    [
        "not an object",
        {"role": "player", "iat": NOW, "exp": NOW + 60},
        {"sub": "p", "role": "croupier", "iat": NOW, "exp": NOW + 60},
        {"sub": "p", "role": "player", "iat": NOW, "exp": "tomorrow"},
        {"sub": "p", "role": "player", "iat": NOW, "exp": True},
        {"sub": "", "role": "player", "iat": NOW, "exp": NOW + 60},
        {"sub": 7, "role": "player", "iat": NOW, "exp": NOW + 60},
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
        verify_token("a.b.c", b"short")


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
