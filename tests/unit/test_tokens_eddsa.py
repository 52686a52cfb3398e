"""Asymmetric (EdDSA) bearer tokens: verifiers hold public keys only, each key signs only its
roles, and no token header can make a verifier check an EdDSA key as an HMAC secret (issue #24:
a compromised service host must not mint a cashier's or an operator's token)."""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Mapping
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from poker.servicekit import tokens
from poker.servicekit.tokens import (
    BadSignature,
    MalformedToken,
    NoSigningKey,
    Role,
    TokenExpired,
    TokenKey,
    TokenKeyring,
    TokenVerifier,
    issue_token,
    verify_token,
)

NOW = 1_700_000_000

PAYMENTS = TokenKey.generate([Role.CASHIER])
LOGIN = TokenKey.generate([Role.PLAYER])
OPERATOR = TokenKey.generate([Role.OPERATOR])
DEALER = TokenKey.generate([Role.DEALER])
ISSUERS = {"payments-1": PAYMENTS, "login-1": LOGIN, "operator-1": OPERATOR, "dealer-1": DEALER}
#: What every service verifies with: the public halves only.
PUBLIC = TokenKeyring(None, ISSUERS).public()


def issuer(kid: str) -> TokenKeyring:
    """The ring of one issuer's host: its own private key only."""
    return TokenKeyring(None, {kid: ISSUERS[kid]})


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hand_made(header: Mapping[str, object], claims: Mapping[str, object], signature: bytes) -> str:
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}.{b64(signature)}"


def claims_of(role: Role, subject: str = "eve") -> dict[str, object]:
    return {"sub": subject, "role": role.value, "iat": NOW, "exp": NOW + 60}


# --- what works --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kid", "role"),
    [
        ("payments-1", Role.CASHIER),
        ("login-1", Role.PLAYER),
        ("operator-1", Role.OPERATOR),
        ("dealer-1", Role.DEALER),
    ],
)
def test_each_issuer_signs_its_role_and_the_public_ring_verifies_it(kid: str, role: Role) -> None:
    token = issue_token(issuer(kid), subject="s-1", role=role, now=NOW)
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "EdDSA" and header["kid"] == kid
    principal = verify_token(token, PUBLIC, now=NOW)
    assert (principal.subject, principal.role) == ("s-1", role)


def test_the_public_ring_holds_no_private_key_and_cannot_sign() -> None:
    assert all(key.private is None and not key.signs for key in PUBLIC.keys.values())
    assert PUBLIC.signing_roles() == frozenset()
    assert "private" not in PUBLIC.to_json()
    for role in Role:
        with pytest.raises(NoSigningKey, match=f"no private key that may sign a {role.value}"):
            issue_token(PUBLIC, subject="eve", role=role, now=NOW)


def test_a_ring_with_several_issuers_picks_the_key_of_the_role() -> None:
    """pokerctl's dev ring: the player, cashier and operator keys; each role its own key."""
    ring = TokenKeyring(None, {k: ISSUERS[k] for k in ("payments-1", "login-1", "operator-1")})
    assert ring.signing_roles() == {Role.CASHIER, Role.PLAYER, Role.OPERATOR}
    for role, kid in ((Role.CASHIER, "payments-1"), (Role.OPERATOR, "operator-1")):
        token = issue_token(ring, subject="x", role=role, now=NOW)
        assert jwt.get_unverified_header(token)["kid"] == kid
    with pytest.raises(NoSigningKey, match="dealer's"):
        issue_token(ring, subject="x", role=Role.DEALER, now=NOW)


def test_eddsa_tokens_still_expire_and_are_cached_only_when_valid() -> None:
    token = issue_token(issuer("payments-1"), subject="pay", role=Role.CASHIER, now=NOW, ttl_s=5)
    verifier = TokenVerifier(PUBLIC)
    assert verifier.verify(token, NOW).subject == "pay"
    with pytest.raises(TokenExpired):
        verifier.verify(token, NOW + 5)


# --- a key signs only its roles ----------------------------------------------------------------


@pytest.mark.parametrize("role", [Role.CASHIER, Role.OPERATOR, Role.PLAYER])
def test_the_dealers_own_key_cannot_sign_another_role(role: Role) -> None:
    """The dealer's host holds the dealer's private key: signing any other role with it, by
    hand (the ring's own refusal bypassed), is refused by every verifier."""
    with pytest.raises(NoSigningKey):
        issue_token(issuer("dealer-1"), subject="eve", role=role, now=NOW)
    private = DEALER.signing_material()
    forged = jwt.encode(claims_of(role), private, algorithm="EdDSA", headers={"kid": "dealer-1"})
    with pytest.raises(BadSignature, match=f"'dealer-1' may not sign a {role.value} token"):
        verify_token(forged, PUBLIC, now=NOW)


def test_an_hs256_key_restricted_to_roles_signs_only_them() -> None:
    secret = secrets.token_bytes(32)
    ring = TokenKeyring(None, {"login-hs": TokenKey.hmac(secret, [Role.PLAYER])})
    token = issue_token(ring, subject="ann", role=Role.PLAYER, now=NOW)
    assert verify_token(token, ring, now=NOW).role is Role.PLAYER
    with pytest.raises(NoSigningKey):
        issue_token(ring, subject="eve", role=Role.CASHIER, now=NOW)
    forged = jwt.encode(claims_of(Role.CASHIER), secret, headers={"kid": "login-hs"})
    with pytest.raises(BadSignature, match="may not sign a cashier token"):
        verify_token(forged, ring, now=NOW)


def test_a_shared_hs256_ring_without_roles_keeps_todays_behaviour() -> None:
    """The legacy mode: one secret of any role (whoever verifies can mint any role)."""
    ring = TokenKeyring.single(secrets.token_bytes(32))
    assert ring.legacy and ring.signing_roles() == frozenset(Role)
    for role in Role:
        assert verify_token(issue_token(ring, subject="s", role=role, now=NOW), ring, now=NOW)
    assert not PUBLIC.legacy


# --- algorithm confusion -----------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
def test_an_hs256_token_under_an_eddsa_kid_signed_with_the_public_key_is_refused() -> None:
    """The classic confusion: the public key (which every verifier, so every attacker on a
    service host, holds) used as an HMAC secret. The key decides the algorithm, not the token."""
    public = OPERATOR.key
    for secret in (public, b64(public).encode(), base64.b64encode(public)):
        forged = jwt.encode(
            claims_of(Role.OPERATOR), secret, algorithm="HS256", headers={"kid": "operator-1"}
        )
        with pytest.raises(BadSignature, match="'HS256' is not its key's: key 'operator-1' is"):
            verify_token(forged, PUBLIC, now=NOW)


def test_an_eddsa_token_under_an_hs256_kid_is_refused() -> None:
    secret = secrets.token_bytes(32)
    ring = TokenKeyring(None, {"shared": TokenKey.hmac(secret, [Role.PLAYER]), **PUBLIC.keys})
    forged = jwt.encode(
        claims_of(Role.PLAYER), Ed25519PrivateKey.generate(), algorithm="EdDSA",
        headers={"kid": "shared"},
    )  # fmt: skip
    with pytest.raises(BadSignature, match="'EdDSA' is not its key's: key 'shared' is HS256"):
        verify_token(forged, ring, now=NOW)


@pytest.mark.parametrize("signature", [b"", b"x", b"\0" * 64])
def test_alg_none_under_an_eddsa_kid_is_refused(signature: bytes) -> None:
    header = {"alg": "none", "typ": "JWT", "kid": "payments-1"}
    with pytest.raises((BadSignature, MalformedToken)):
        verify_token(hand_made(header, claims_of(Role.CASHIER), signature), PUBLIC, now=NOW)


@pytest.mark.parametrize("algorithm", ["ES256", "RS256", "eddsa", "Ed25519", "HS512"])
def test_other_algorithm_names_under_an_eddsa_kid_are_refused(algorithm: str) -> None:
    header = {"alg": algorithm, "typ": "JWT", "kid": "payments-1"}
    token = hand_made(header, claims_of(Role.CASHIER), b"\0" * 64)
    with pytest.raises(BadSignature, match="algorithm"):
        verify_token(token, PUBLIC, now=NOW)


def test_a_forged_eddsa_signature_is_refused() -> None:
    """Another key pair under the payments key id; a real token with its claims altered; a
    signature of the wrong length."""
    stranger = jwt.encode(
        claims_of(Role.CASHIER), Ed25519PrivateKey.generate(), algorithm="EdDSA",
        headers={"kid": "payments-1"},
    )  # fmt: skip
    genuine = issue_token(issuer("login-1"), subject="ann", role=Role.PLAYER, now=NOW)
    head, _, signature = genuine.split(".")
    altered = f"{head}.{b64(json.dumps(claims_of(Role.PLAYER, 'bob')).encode())}.{signature}"
    short = f"{head}.{genuine.split('.')[1]}.{b64(b'x' * 10)}"
    for token in (stranger, altered, short):
        with pytest.raises(BadSignature, match="signature"):
            verify_token(token, PUBLIC, now=NOW)


# --- rotation and the file form ----------------------------------------------------------------


def test_rotation_of_an_issuers_key_old_and_new_verify_side_by_side() -> None:
    new = TokenKey.generate([Role.CASHIER])
    old_token = issue_token(issuer("payments-1"), subject="pay", role=Role.CASHIER, now=NOW)
    new_token = issue_token(TokenKeyring(None, {"payments-2": new}), subject="pay",
                            role=Role.CASHIER, now=NOW)  # fmt: skip
    during = PUBLIC.merged(TokenKeyring(None, {"payments-2": new.public_only()}))
    for token in (old_token, new_token):
        assert verify_token(token, during, now=NOW).role is Role.CASHIER
    after = TokenKeyring(None, {k: v for k, v in during.keys.items() if k != "payments-1"})
    assert verify_token(new_token, after, now=NOW).subject == "pay"
    with pytest.raises(BadSignature, match="'payments-1' is not one this service accepts"):
        verify_token(old_token, after, now=NOW)
    # Both private keys on the issuer during the switch: the current one signs.
    both = TokenKeyring("payments-2", {"payments-1": PAYMENTS, "payments-2": new})
    token = issue_token(both, subject="pay", role=Role.CASHIER, now=NOW)
    assert jwt.get_unverified_header(token)["kid"] == "payments-2"
    with pytest.raises(NoSigningKey, match="several keys"):
        issue_token(TokenKeyring(None, both.keys), subject="pay", role=Role.CASHIER, now=NOW)


def test_the_file_form_round_trips_and_bad_entries_say_why(tmp_path: Path) -> None:
    ring = TokenKeyring(None, {**ISSUERS, "legacy": TokenKey.hmac(b"s" * 32, [Role.PLAYER])})
    path = tmp_path / "ring.json"
    path.write_text(ring.to_json())
    assert TokenKeyring.load(path) == ring
    assert PAYMENTS.private is not None and b64(PAYMENTS.private) not in repr(ring)
    assert TokenKeyring.from_json(PUBLIC.to_json()) == PUBLIC
    pub = base64.b64encode(PAYMENTS.key).decode()
    other = base64.b64encode(LOGIN.private or b"").decode()
    bad = {
        "no roles": {"alg": "EdDSA", "public": pub},
        "empty roles": {"alg": "EdDSA", "public": pub, "roles": []},
        "unknown role": {"alg": "EdDSA", "public": pub, "roles": ["god"]},
        "roles a string": {"alg": "EdDSA", "public": pub, "roles": "cashier"},
        "no alg": {"public": pub, "roles": ["cashier"]},
        "alg none": {"alg": "none", "public": pub, "roles": ["cashier"]},
        "short public": {"alg": "EdDSA", "public": pub[:8], "roles": ["cashier"]},
        "wrong private": {"alg": "EdDSA", "public": pub, "private": other, "roles": ["dealer"]},
        "hs256 with a public": {"alg": "HS256", "public": pub, "roles": ["cashier"]},
        "extra field": {"alg": "EdDSA", "public": pub, "roles": ["cashier"], "x": 1},
    }  # fmt: skip
    for name, entry in bad.items():
        with pytest.raises(ValueError, match="token key 'k'"):
            TokenKeyring.from_json(json.dumps({"keys": {"k": entry}}))
        assert name
    with pytest.raises(ValueError, match="needs a current key"):
        TokenKeyring.from_json(json.dumps({"keys": {"k": base64.b64encode(b"s" * 32).decode()}}))


def test_the_command_makes_a_key_pair_and_the_public_ring(tmp_path: Path) -> None:
    key_file, public_file = tmp_path / "payments.json", tmp_path / "public.json"
    assert tokens.main(["new-key", "payments-2027", "--role", "cashier", str(key_file)]) == 0
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert tokens.main(["new-key", "payments-2027", "--role", "cashier", str(key_file)]) != 0
    dealer_file = tmp_path / "dealer.json"
    assert tokens.main(["new-key", "dealer-a", "--role", "dealer", str(dealer_file)]) == 0
    assert tokens.main(["public", str(key_file), str(dealer_file), "-o", str(public_file)]) == 0
    public = TokenKeyring.load(public_file)
    assert set(public.keys) == {"payments-2027", "dealer-a"}
    assert not public.signing_roles() and "private" not in public_file.read_text()
    token = issue_token(TokenKeyring.load(key_file), subject="pay", role=Role.CASHIER, now=NOW)
    assert verify_token(token, public, now=NOW).role is Role.CASHIER


# --- the services' configuration ---------------------------------------------------------------


def test_the_services_take_the_public_ring_and_the_dealer_only_its_own_key(tmp_path: Path) -> None:
    from poker.dealer.config import load_settings as dealer_settings
    from poker.wallet.config import load_settings as wallet_settings

    files = {}
    for name, ring in {
        "public": PUBLIC,
        "dealer": issuer("dealer-1"),
        "payments": issuer("payments-1"),
        "all": TokenKeyring(None, ISSUERS),
    }.items():
        files[name] = str(tmp_path / f"{name}.json")
        Path(files[name]).write_text(ring.to_json())
    wallet = wallet_settings(["--token-keys", files["public"]], environ={})
    assert wallet.token_keyring.signing_roles() == frozenset()
    with pytest.raises(SystemExit, match=r"holds the private key '\w+-1', which may sign"):
        wallet_settings(["--token-keys", files["all"]], environ={})
    dealer_flags = ["--token-keys", files["public"], "--wallet-address", "127.0.0.1:1"]
    with pytest.raises(SystemExit, match="--token-signing-key"):
        dealer_settings(dealer_flags, environ={})
    dealer = dealer_settings([*dealer_flags, "--token-signing-key", files["dealer"]], environ={})
    assert dealer.token_keyring.signing_roles() == {Role.DEALER}
    token = issue_token(dealer.token_keyring, subject="dealer-a", role=Role.DEALER, now=NOW)
    assert verify_token(token, wallet.token_keyring, now=NOW).role is Role.DEALER
    with pytest.raises(SystemExit, match="must sign dealer tokens only, not cashier"):
        dealer_settings([*dealer_flags, "--token-signing-key", files["payments"]], environ={})
    with pytest.raises(SystemExit, match="holds the private key"):
        dealer_settings(["--token-keys", files["all"]], environ={})


# --- the deployment's keys ---------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def test_make_secrets_gives_each_issuer_its_key_and_the_services_the_public_ring() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_secrets", ROOT / "deploy" / "compose" / "make_secrets.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    files = {name: TokenKeyring.from_json(text) for name, text in module.token_key_files().items()}
    public = files.pop("token-keys.json")
    assert public.signing_roles() == frozenset() and not public.legacy
    signs = {name: ring.signing_roles() for name, ring in files.items()}
    assert signs == {
        "dealer-token-key.json": {Role.DEALER},
        "payments-token-key.json": {Role.CASHIER},
        "login-token-key.json": {Role.PLAYER},
        "operator-token-key.json": {Role.OPERATOR},
    }
    for ring in files.values():
        (role,) = ring.signing_roles()
        assert verify_token(issue_token(ring, subject="s", role=role, now=NOW), public, now=NOW)


def test_no_wallet_mounts_a_private_token_key_and_the_dealer_only_its_own() -> None:
    import yaml

    compose = yaml.safe_load((ROOT / "deploy" / "compose" / "compose.yaml").read_text())
    for name, service in compose["services"].items():
        mounted = {secret["source"] for secret in service.get("secrets", [])}
        private = {source for source in mounted if source.endswith("token-key")}
        assert private == ({"dealer-token-key"} if name == "dealer" else set()), name
    kustomization = yaml.safe_load((ROOT / "deploy" / "k8s" / "kustomization.yaml").read_text())
    for generator in kustomization["secretGenerator"]:
        private = {f for f in generator["files"] if f.endswith("-token-key.json")}
        expected = (
            {"secrets/dealer-token-key.json"} if generator["name"] == "poker-dealer" else set()
        )
        assert private == expected, generator["name"]


def test_the_migration_ring_verifies_the_shared_secret_and_the_issuers_keys() -> None:
    """Step 1 of the migration: the shared secret (current) beside the public keys."""
    secret = secrets.token_bytes(32)
    document = json.loads(PUBLIC.to_json())
    document["current"] = "default"
    document["keys"]["default"] = base64.b64encode(secret).decode()
    ring = TokenKeyring.from_json(json.dumps(document))
    assert ring.legacy
    old = issue_token(TokenKeyring.single(secret), subject="pay", role=Role.CASHIER, now=NOW)
    new = issue_token(issuer("payments-1"), subject="pay", role=Role.CASHIER, now=NOW)
    for token in (old, new):
        assert verify_token(token, ring, now=NOW).role is Role.CASHIER
    dealer = ring.merged(issuer("dealer-1"))
    assert dealer.signing_key(Role.DEALER)[0] == "default"  # until default is removed
    after = TokenKeyring(None, {k: v for k, v in dealer.keys.items() if k != "default"})
    assert after.signing_key(Role.DEALER)[0] == "dealer-1"
    with pytest.raises(BadSignature, match="'default' is not one"):
        verify_token(old, after, now=NOW)


def test_make_runs_keys_serve_the_services_and_pokerctl_which_names_a_missing_key(
    tmp_path: Path,
) -> None:
    import os
    import subprocess
    import sys

    from poker.dealer.config import load_settings as dealer_settings
    from poker.tools.devrun import token_key_files
    from poker.wallet.config import load_settings as wallet_settings

    files = token_key_files(tmp_path / "var" / "token-keys", "local")
    assert token_key_files(tmp_path / "var" / "token-keys", "local") == files  # made once
    assert all(path.stat().st_mode & 0o777 == 0o600 for path in files.values())
    public = ["--token-keys", str(files["public"])]
    wallet = wallet_settings(public, environ={})
    dealer = dealer_settings(
        [*public, "--token-signing-key", str(files["dealer"]), "--wallet-address", "x:1"],
        environ={},
    )
    assert dealer.token_keyring.signing_roles() == {Role.DEALER}

    def pokerctl(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "POKER_HOME": str(tmp_path), "POKERCTL_CONFIG": os.devnull}
        env = {k: v for k, v in env.items() if k not in ("POKER_TOKEN_SECRET", "POKER_TOKEN_KEYS")}
        command = [sys.executable, "-m", "poker.tools.pokerctl", *args]
        return subprocess.run(command, env=env, capture_output=True, text=True, check=False)

    done = pokerctl("token", "payments", "--role", "cashier")
    assert done.returncode == 0, done.stderr
    assert verify_token(done.stdout.strip(), wallet.token_keyring).role is Role.CASHIER
    refused = pokerctl("token", "dealer-x", "--role", "dealer")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "no private key that may sign a dealer token: it needs the dealer's" in refused.stderr
    assert "--token-keys" in refused.stderr
