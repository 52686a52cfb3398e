"""The dealer's hand-off flags: --drain-timeout and --drain-holdoff (and their DEALER_ names)."""

from __future__ import annotations

import pytest

from poker.dealer.config import load_settings

SECRET = ["--token-secret", "00" * 32]


def test_the_drain_flags_default_and_parse() -> None:
    settings = load_settings(SECRET, environ={})
    assert (settings.drain_timeout_s, settings.drain_holdoff_s) == (60.0, 30.0)
    settings = load_settings([*SECRET, "--drain-timeout", "5", "--drain-holdoff", "2.5"], {})
    assert (settings.drain_timeout_s, settings.drain_holdoff_s) == (5.0, 2.5)
    settings = load_settings(SECRET, environ={"DEALER_DRAIN_TIMEOUT": "12"})
    assert settings.drain_timeout_s == 12.0


def test_a_negative_drain_timeout_is_refused() -> None:
    with pytest.raises(SystemExit, match="--drain-timeout"):
        load_settings([*SECRET, "--drain-timeout", "-1"], environ={})
