"""Digits that ``str.isdigit`` accepts and ``int`` does not (a superscript two) or that only
Unicode calls decimal (Arabic-Indic three): wherever a number arrives as text from a request, a
stored header, a hand history or the command line, it is refused with the reason a person
reads, never raised as a bare ValueError (INTERNAL at a gRPC edge)."""

from __future__ import annotations

import click
import pytest

from poker.dealer.wallet_client import channel_target
from poker.dealer.wire import table_of_hand
from poker.engine.phh import PHHError
from poker.engine.phh.replay import parse_action
from poker.eventstore.sealing import Refusal, SealRefused, Writer, new_keyring, open_batch
from poker.servicekit.errors import InvalidArgument
from poker.tools.pokerctl.operators import PAIR as _PAIR
from poker.v1 import dealer_pb2 as dpb
from poker.wallet.history import parse_token

NOT_ASCII_DIGITS = ("\u00b2", "1\u00b2", "\u0663")  # ², 1², ٣


@pytest.mark.parametrize("digits", NOT_ASCII_DIGITS)
def test_a_seal_claiming_a_non_ascii_position_is_malformed(digits: str) -> None:
    ring = new_keyring("d")
    with pytest.raises(SealRefused) as refused:
        open_batch(
            ring,
            f"{ring.signer(Writer.DEALER).id}:{digits}:{'A' * 43}",
            log_key="t1",
            position=5,
            previous_position=4,
            msg_id="c1",
            data=b"batch",
        )
    assert refused.value.reason is Refusal.MALFORMED


@pytest.mark.parametrize("digits", NOT_ASCII_DIGITS)
def test_a_page_token_of_non_ascii_digits_is_an_invalid_argument(digits: str) -> None:
    with pytest.raises(InvalidArgument):
        parse_token(digits, journal_position=10, next_transaction_id=10)


@pytest.mark.parametrize("digits", NOT_ASCII_DIGITS)
def test_a_hand_number_of_non_ascii_digits_is_an_invalid_argument(digits: str) -> None:
    with pytest.raises(InvalidArgument):
        table_of_hand(dpb.GetHandHistoryRequest(hand_id=f"t-1.{digits}"))


@pytest.mark.parametrize("digits", NOT_ASCII_DIGITS)
def test_a_hand_history_player_of_non_ascii_digits_is_a_phh_error(digits: str) -> None:
    with pytest.raises(PHHError, match="does not name a player"):
        parse_action(1, f"p{digits} cc", players=2)


@pytest.mark.parametrize("digits", NOT_ASCII_DIGITS)
def test_blinds_of_non_ascii_digits_are_refused_on_the_command_line(digits: str) -> None:
    with pytest.raises(click.BadParameter, match="two whole amounts"):
        _PAIR.convert(f"{digits}/2", None, None)


@pytest.mark.parametrize("digits", NOT_ASCII_DIGITS)
def test_a_wallet_address_with_a_non_ascii_port_is_refused(digits: str) -> None:
    with pytest.raises(ValueError, match="a wallet address is host:port"):
        channel_target([f"127.0.0.1:{digits}", "127.0.0.1:50052"])
