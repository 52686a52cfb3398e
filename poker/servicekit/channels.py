"""Client channels the gRPC way: a service config that health-checks and retries.

A channel built with :func:`health_checked_options` round-robins over the addresses of its
target that report SERVING for ``service`` (gRPC's client-side health checking: a standby, or a
server still starting, gets no calls), and gRPC retries a call that ends UNAVAILABLE by the
config's ``retryPolicy``, with backoff, within the call's deadline. A call made with
``wait_for_ready=True`` waits (within its deadline) for a serving address instead of failing at
once. Plain data: the channels themselves are made by :func:`poker.servicekit.tls.aio_channel`.

>>> import json
>>> config = json.loads(service_config("poker.v1.WalletService"))
>>> config["healthCheckConfig"], config["methodConfig"][0]["retryPolicy"]["retryableStatusCodes"]
({'serviceName': 'poker.v1.WalletService'}, ['UNAVAILABLE'])
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

#: Up to 5 attempts (gRPC's most), 0.1 s, 0.2 s, ... 1 s apart (with gRPC's jitter), for
#: UNAVAILABLE only: a server down, starting or stepping down. Safe for the services' calls:
#: commands carry their ids (holds their hold ids, deposits their idempotency keys).
DEFAULT_RETRY_POLICY: Final[Mapping[str, Any]] = {
    "maxAttempts": 5,
    "initialBackoff": "0.1s",
    "maxBackoff": "1s",
    "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE"],
}


def service_config(service: str, retry_policy: Mapping[str, Any] | None = None) -> str:
    """The service config (JSON) of a channel to ``service``: round-robin over the addresses
    that report SERVING for it, and ``retry_policy`` (default :data:`DEFAULT_RETRY_POLICY`)
    for every method of it."""
    return json.dumps(
        {
            "loadBalancingConfig": [{"round_robin": {}}],
            "healthCheckConfig": {"serviceName": service},
            "methodConfig": [
                {
                    "name": [{"service": service}],
                    "retryPolicy": dict(retry_policy or DEFAULT_RETRY_POLICY),
                }
            ],
        }
    )


def health_checked_options(
    service: str, retry_policy: Mapping[str, Any] | None = None
) -> list[tuple[str, Any]]:
    """The channel options that apply :func:`service_config` (retries switched on)."""
    return [
        ("grpc.service_config", service_config(service, retry_policy)),
        ("grpc.enable_retries", 1),
    ]


__all__ = ["DEFAULT_RETRY_POLICY", "health_checked_options", "service_config"]
