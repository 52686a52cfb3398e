"""``python -m poker.wallet [flags]``: run one wallet until SIGTERM or Ctrl-C.

Prints one line on stdout once listening, for scripts and tests (the process may still be the
standby then: health says SERVING once it leads)::

    wallet listening grpc=127.0.0.1:50061 metrics=127.0.0.1:9465 owner=<id>
"""

from __future__ import annotations

from collections.abc import Sequence

from poker.servicekit.runner import run_service, serve_service
from poker.wallet.app import build_wallet
from poker.wallet.config import WalletSettings, load_settings


async def serve(settings: WalletSettings) -> None:
    """Build, start, announce, and serve until stopped."""
    await serve_service("wallet", "listening", settings, lambda: build_wallet(settings))


def main(argv: Sequence[str] | None = None) -> None:
    """The entry point."""
    run_service("wallet", load_settings(argv), serve)


if __name__ == "__main__":
    main()
