"""``python -m wallet_service [flags]``: run one wallet until SIGTERM or Ctrl-C.

Prints one line on stdout once listening, for scripts and tests (the process may still be the
standby then: health says SERVING once it leads)::

    wallet listening grpc=127.0.0.1:50061 metrics=127.0.0.1:9465 owner=<id>
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

from servicekit.observability import configure_logging, start_metrics_server
from wallet_service.app import build_wallet
from wallet_service.config import WalletSettings, load_settings


async def serve(settings: WalletSettings) -> None:
    """Build, start, announce, and serve until stopped."""
    wallet = await build_wallet(settings)
    metrics = start_metrics_server(settings.metrics_port, host=settings.grpc_host)
    try:
        port = await wallet.start()
        print(
            f"wallet listening grpc={settings.grpc_host}:{port} "
            f"metrics={settings.grpc_host}:{metrics.port} owner={settings.owner_id}",
            flush=True,
        )
        await wallet.server.serve_until_stopped()
    finally:
        await wallet.stop()
        metrics.stop()


def main(argv: Sequence[str] | None = None) -> None:
    """The entry point."""
    settings = load_settings(argv)
    configure_logging("wallet", level=settings.log_level, stream=sys.stderr)
    asyncio.run(serve(settings))


if __name__ == "__main__":
    main()
