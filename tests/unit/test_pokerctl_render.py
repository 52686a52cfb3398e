"""pokerctl tells hands as a person reads them: names not seats, "raises to" (the total) and
"calls" (the chips added), the board as it grows, who won which pot, the rake; and a table view
with the seat to act and the legal actions with their amounts."""

from __future__ import annotations

from rich.console import Console

from poker.tools.render import Narrator, action_text, local_time, table_view
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb


def _told(narrator: Narrator, **body: object) -> list[str]:
    return narrator.lines(pb.TableEvent(version=1, hand_id="t.1", **body))  # type: ignore[arg-type]


def test_a_hand_reads_like_a_hand() -> None:
    narrator = Narrator({1: "ann", 2: "bob"})
    started = pb.HandStarted(
        hand_id="t.1",
        game="holdem",
        structure=pb.BETTING_STRUCTURE_NO_LIMIT,
        stakes=pb.Stakes(small_blind=1, big_blind=2),
        seats=[pb.SeatStack(seat=1, stack=100), pb.SeatStack(seat=2, stack=100)],
        button=1,
    )
    lines = _told(narrator, hand_started=started)
    assert "Texas Hold'em no-limit, blinds 1/2" in lines[0]
    assert lines[1] == "button ann; dealt in: ann 100, bob 100"
    assert _told(narrator, raised_to=pb.RaisedTo(seat=1, amount=40)) == ["ann raises to 40"]
    assert _told(narrator, called=pb.Called(seat=2, amount=38)) == ["bob calls 38"]
    assert _told(narrator, board_dealt=pb.BoardDealt(street=1, cards="AsKd7c")) == [
        "*** flop *** board [As Kd 7c]"
    ]
    assert _told(narrator, board_dealt=pb.BoardDealt(street=2, cards="2h")) == [
        "*** turn *** board [As Kd 7c 2h]"
    ]
    assert _told(narrator, folded=pb.Folded(seat=2, timed_out=True)) == ["bob folds (time ran out)"]
    assert _told(narrator, rake_taken=pb.RakeTaken(amount=3)) == ["rake 3"]
    won = pb.PotAwarded(pot=1, seat=1, amount=77, share=pb.POT_SHARE_HIGH, hand="Two pair")
    assert _told(narrator, pot_awarded=won) == ["ann wins side pot 1 (high half): 77 with Two pair"]
    ended = pb.HandEnded(
        results=[pb.SeatResult(seat=1, net=38, stack=138), pb.SeatResult(seat=2, net=-40)],
        rake=3,
    )
    assert _told(narrator, hand_ended=ended) == ["hand over: ann +38 (138), bob -40 (0); rake 3"]
    assert _told(narrator, action_requested=pb.ActionRequested(seat=1)) == []


def test_names_follow_seating_and_cash_outs() -> None:
    narrator = Narrator()
    seated = pb.PlayerSeated(seat=3, player_id="cat", amount=200)
    assert _told(narrator, player_seated=seated) == ["cat sits in seat 3 with 200"]
    assert _told(narrator, checked=pb.Checked(seat=3)) == ["cat checks"]
    out = pb.PlayerCashedOut(
        seat=3, player_id="cat", amount=180, reason=pb.CASH_OUT_REASON_STOOD_UP
    )
    assert _told(narrator, player_cashed_out=out) == ["cat stands up, cashing out 180"]
    assert _told(narrator, checked=pb.Checked(seat=3)) == ["seat 3 checks"]


def test_legal_actions_say_their_amounts() -> None:
    assert action_text(dpb.ACTION_KIND_CALL, 2, 2) == "call 2"
    assert action_text(dpb.ACTION_KIND_RAISE, 4, 200) == "raise to 4-200"
    assert action_text(dpb.ACTION_KIND_FOLD, 0, 0) == "fold"
    assert local_time(0) == "-"


def test_show_draws_the_seats_and_whose_turn() -> None:
    view = dpb.TableView(
        table_id="t",
        config=pb.TableConfig(
            game="holdem",
            structure=pb.BETTING_STRUCTURE_NO_LIMIT,
            stakes=pb.Stakes(small_blind=1, big_blind=2),
        ),
        seats=[
            dpb.SeatView(
                seat=1, player_id="ann", stack=99, state=dpb.SEAT_STATE_IN_HAND, cards="AsKd"
            ),
            dpb.SeatView(seat=2, player_id="bob", stack=98, bet=2, state=dpb.SEAT_STATE_IN_HAND),
        ],
        hand=dpb.HandView(
            hand_id="t.1",
            button=1,
            pot=3,
            seat_to_act=1,
            legal_actions=[
                dpb.LegalAction(action=dpb.ACTION_KIND_FOLD),
                dpb.LegalAction(action=dpb.ACTION_KIND_CALL, min_amount=1, max_amount=1),
                dpb.LegalAction(action=dpb.ACTION_KIND_RAISE, min_amount=4, max_amount=100),
            ],
        ),
        your_seat=1,
    )
    console = Console(width=200, record=True)
    console.print(table_view(view))
    text = console.export_text()
    assert "ann (you)" in text and "As Kd" in text
    assert "hand t.1: preflop, pot 3" in text
    assert "to act: ann" in text and "fold, call 1, raise to 4-100" in text


def test_a_draw_street_shows_no_empty_board() -> None:
    narrator = Narrator({1: "ann"})
    started = pb.HandStarted(hand_id="t.1", game="draw32", seats=[pb.SeatStack(seat=1)])
    _told(narrator, hand_started=started)
    assert _told(narrator, board_dealt=pb.BoardDealt(street=1)) == ["*** draw ***"]
