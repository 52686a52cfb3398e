"""The gRPC edge of authentication: the interceptor that authenticates every call with a
bearer token, the call metadata that carries it, and the caller of the RPC being served.

The tokens themselves (JWTs, their keys, roles and claims) are :mod:`poker.servicekit.tokens`'s,
which knows nothing of gRPC. :class:`Authenticator` (run by the stack of
:mod:`poker.servicekit.stack`) reads ``authorization: Bearer <token>``
(:func:`bearer_token`), verifies it (:class:`~poker.servicekit.tokens.TokenVerifier`: a small
cache of verified tokens, the expiry checked on every call), refuses a role the method does not
admit, and makes the caller the :func:`current_principal` of the call.

>>> bearer_token((("authorization", "Bearer abc.def.ghi"),))
'abc.def.ghi'
>>> bearer_token(bearer_metadata("t"))
't'
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from poker.servicekit.errors import PermissionDenied
from poker.servicekit.status import abort_with
from poker.servicekit.tokens import (
    MissingToken,
    Principal,
    Role,
    TokenError,
    TokenKeys,
    TokenVerifier,
)

#: Services that answer without a token: probes and tooling must reach them.
PUBLIC_SERVICES = (
    "grpc.health.v1.Health",
    "grpc.reflection.v1alpha.ServerReflection",
    "grpc.reflection.v1.ServerReflection",
)


class RoleNotAllowed(PermissionDenied):
    """The caller's role may not call this method (PERMISSION_DENIED)."""

    REASON = "ROLE_NOT_ALLOWED"


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


def _denial(principal: Principal, method: str, allowed: Collection[Role]) -> str:
    """The sentence of a role refused at ``method``: who asked, and who may."""
    name = method.rpartition("/")[2] or method
    who = ", ".join(sorted(role.value for role in allowed)) or "no caller"
    return f"a {principal.role} may not call {name}; only {who} may"


class Authenticator:
    """Authenticates every call but those of :data:`PUBLIC_SERVICES`.

    A call without a valid token ends UNAUTHENTICATED. With ``roles_by_method``, a method listed
    there admits only those roles (PERMISSION_DENIED otherwise). The servicer reads the caller
    with :func:`current_principal`.
    """

    def __init__(
        self,
        keys: TokenKeys,
        *,
        roles_by_method: Mapping[str, Collection[Role]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._verifier = TokenVerifier(keys)
        self._roles_by_method = roles_by_method or {}
        self._clock = clock

    async def authenticate(self, context: Any, method: str) -> Principal:
        """The caller of ``method``, or the call is aborted (UNAUTHENTICATED when the token
        does not authenticate, PERMISSION_DENIED when the role may not call ``method``)."""
        try:
            principal = self._verifier.verify(
                bearer_token(context.invocation_metadata()), self._clock()
            )
        except TokenError as error:
            await abort_with(context, error)
            raise  # pragma: no cover - abort raises
        allowed = self._roles_by_method.get(method)
        if allowed is not None and principal.role not in allowed:
            denial = _denial(principal, method, allowed)
            await abort_with(context, RoleNotAllowed(denial))
        return principal
