"""Binding to a provisioned JetStream KV bucket: the one way the stores open theirs.

The services never create or change a bucket (the operator provisions it:
:mod:`poker.servicekit.provisioning`); a store only binds to one that exists.
"""

from __future__ import annotations

import nats.js.errors
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from poker.eventstore.nats_errors import unavailable_on_transient


async def bind_existing(js: JetStreamContext, bucket: str) -> KeyValue | None:
    """The bucket ``bucket`` if it exists, else None; a failure that says "not now" raises
    :class:`~poker.eventstore.api.StoreUnavailable` (callers retry it at start)."""
    with unavailable_on_transient(f"opening bucket {bucket!r}"):
        try:
            return await js.key_value(bucket)
        except nats.js.errors.BucketNotFoundError:
            return None
