"""``python -m dealer_service [flags]``: run one dealer until SIGTERM or Ctrl-C.

Prints one line on stdout once serving, for scripts and tests::

    dealer serving grpc=127.0.0.1:50051 metrics=127.0.0.1:9464 owner=<id>
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

from dealer_service.app import build_dealer
from dealer_service.config import DealerSettings, load_settings
from servicekit.observability import configure_logging, start_metrics_server


async def serve(settings: DealerSettings) -> None:
    """Build, start, announce, and serve until stopped."""
    dealer = await build_dealer(settings)
    metrics = start_metrics_server(settings.metrics_port, host=settings.grpc_host)
    try:
        port = await dealer.start()
        print(
            f"dealer serving grpc={settings.grpc_host}:{port} "
            f"metrics={settings.grpc_host}:{metrics.port} owner={settings.owner_id}",
            flush=True,
        )
        await dealer.server.serve_until_stopped()
    finally:
        await dealer.stop()
        metrics.stop()


def main(argv: Sequence[str] | None = None) -> None:
    """The entry point."""
    settings = load_settings(argv)
    configure_logging("dealer", level=settings.log_level, stream=sys.stderr)
    asyncio.run(serve(settings))


if __name__ == "__main__":
    main()
