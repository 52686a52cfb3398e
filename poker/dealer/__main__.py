"""``python -m poker.dealer [flags]``: run one dealer until SIGTERM or Ctrl-C.

Prints one line on stdout once serving, for scripts and tests::

    dealer serving grpc=127.0.0.1:50051 metrics=127.0.0.1:9464 owner=<id>
"""

from __future__ import annotations

from collections.abc import Sequence

from poker.dealer.app import build_dealer
from poker.dealer.config import DealerSettings, load_settings
from poker.servicekit.runner import run_service, serve_service


async def serve(settings: DealerSettings) -> None:
    """Build, start, announce, and serve until stopped; the collector is tuned once started
    (the start-up heap frozen, young collections rarer: shorter pauses in the tail)."""
    await serve_service("dealer", "serving", settings, lambda: build_dealer(settings), tune_gc=True)


def main(argv: Sequence[str] | None = None) -> None:
    """The entry point."""
    run_service("dealer", load_settings(argv), serve)


if __name__ == "__main__":
    main()
