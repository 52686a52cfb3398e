"""The application's error families: plain Python, knowing nothing of the transport.

The application (the dealer's table service, the wallet's book, the table log) raises these on
purpose; each family is one kind of refusal a caller can act on. Which gRPC status each family
becomes is decided at the servicer edge only, by the one table in :mod:`poker.servicekit.status`:

======================================  ==============================================
family                                  what it means
======================================  ==============================================
:class:`RuleViolation`                  the command breaks a poker rule (its sentence)
:class:`InvalidArgument`                the request is malformed
:class:`NotFound`                       an unknown table, hand, hold or account
:class:`Conflict`                       a concurrent writer kept winning; retry
:class:`Unauthenticated`                no valid token
:class:`PermissionDenied`               authenticated, but not yours
:class:`Unavailable`                    a dependency is down for now; retry
:class:`ResourceExhausted`              a bound on the caller's resources was hit
======================================  ==============================================

Every class also carries a stable :attr:`~ServiceError.REASON` (UPPER_SNAKE): the edge sends it
as the ``google.rpc.ErrorInfo`` reason, so a client tells refusals apart without reading the
sentence. A subclass that means something more specific names its own reason; one that does not
inherits its family's. :class:`InvalidArgument` names the field at fault (``field``), sent as a
``google.rpc.BadRequest`` field violation.

>>> error = RuleViolation("You cannot raise less than the minimum.")
>>> isinstance(error, ServiceError), error.message, error.REASON
(True, 'You cannot raise less than the minimum.', 'RULE_VIOLATED')
>>> InvalidArgument("seat must be 1-9.", field="seat").field
'seat'
"""

from __future__ import annotations

from typing import ClassVar


class ServiceError(Exception):
    """An error the application raises on purpose; its class is its family.

    The message is sent to the client: write it for the caller, and keep hole cards, tokens and
    other players' data out of it. ``REASON`` is the class's stable machine-readable reason
    (listed in ``docs/api-errors.md``; renaming one breaks clients).
    """

    REASON: ClassVar[str] = "UNSPECIFIED_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(ServiceError):
    """The request is malformed: a field missing, out of range, or of the wrong shape.

    ``field`` is the path of the field at fault in the request (``settings.rules.rake.per``,
    ``discards[2]``); empty means the request as a whole (a body that does not decode).
    """

    REASON = "INVALID_REQUEST"

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class NotFound(ServiceError):
    """The request names a table, hand, hold or account that does not exist."""

    REASON = "NOT_FOUND"


class PermissionDenied(ServiceError):
    """The caller is authenticated but acts on someone else's seat, cards or account."""

    REASON = "PERMISSION_DENIED"


class Unauthenticated(ServiceError):
    """The caller's token is missing, malformed, forged or expired."""

    REASON = "UNAUTHENTICATED"


class Conflict(ServiceError):
    """A concurrent writer kept winning and the retries ran out; the client may retry."""

    REASON = "CONCURRENT_UPDATE"


class RuleViolation(ServiceError):
    """The command breaks a rule of the game; the message is the rule's sentence."""

    REASON = "RULE_VIOLATED"

    @classmethod
    def from_error(cls, error: BaseException) -> RuleViolation:
        """Wrap an engine rule error, keeping its sentence as the message."""
        violation = cls(str(error))
        violation.__cause__ = error
        return violation


class ResourceExhausted(ServiceError):
    """The caller holds too much of a bounded resource (open streams, a backlog); the message
    says which bound and what to do."""

    REASON = "RESOURCE_EXHAUSTED"


class Unavailable(ServiceError):
    """A dependency (NATS, the wallet) is unreachable for now; the client may retry."""

    REASON = "UNAVAILABLE"


__all__ = [
    "Conflict",
    "InvalidArgument",
    "NotFound",
    "PermissionDenied",
    "ResourceExhausted",
    "RuleViolation",
    "ServiceError",
    "Unauthenticated",
    "Unavailable",
]
