"""Provably fair decks in the engine: the committed hand, the players' seeds, the reveal, the
draw games' derived reshuffle, and the hand check finding each kind of tampering with its own
sentence (poker/engine/fairness.py, poker/engine/fairness_check.py, docs/fairness.md)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from poker.dealer.redaction import redact_event, redact_history_event
from poker.engine import fairness
from poker.engine.betting import Stakes, Structure
from poker.engine.fairness_check import verify_hand
from poker.engine.games import GAMES
from poker.engine.hand import HandRuleError
from poker.engine.hand.codec import cards_to_wire
from poker.engine.hand.state import DRAWING
from poker.engine.table import (
    Act,
    Action,
    CommitSeed,
    CreateTable,
    Draw,
    SitDown,
    SitOut,
    StartNextHand,
    TableRuleError,
    TableState,
    VoidHand,
    envelopes,
    execute,
    make_config,
    replay,
)
from poker.v1 import events_pb2 as pb

SEED = bytes(range(32))
NOW = 10**6


class Log:
    """A table driven through the engine, its events kept as the dealer appends them."""

    def __init__(
        self,
        game: str = "holdem",
        players: int = 2,
        structure: Structure = Structure.NO_LIMIT,
        first_seed: bytes = b"",
    ) -> None:
        stakes = Stakes(1, 2, small_bet=2, big_bet=4)
        self.events: list[pb.TableEvent] = []
        self.state: TableState | None = None
        config = replace(make_config(game, structure, stakes), pause_between_hands_ms=0)
        self.run(CreateTable(config, now=0, server_seed=first_seed))
        for seat in range(1, players + 1):
            self.run(SitDown(seat, f"p{seat}", 200, f"h{seat}", now=0))

    @property
    def table(self) -> TableState:
        assert self.state is not None
        return self.state

    def run(self, command: object) -> list[pb.TableEvent]:
        state, bodies = execute(self.state, command)  # type: ignore[arg-type]
        wrapped = envelopes(self.state, bodies, table_id="t", now=NOW)
        self.events += wrapped
        self.state = state
        return wrapped

    def hand(self, hand_id: str) -> list[pb.TableEvent]:
        return [event for event in self.events if event.hand_id == hand_id]

    def play_out(self) -> None:
        """Everyone checks or calls, and draws three (bounded), until the hand ends."""
        for _ in range(400):
            hand = self.table.hand
            if hand is None or hand.ended:
                return
            seat = hand.setup.seats[hand.to_act]
            player = f"p{seat}"
            if hand.phase == DRAWING:
                index = hand.setup.index_of(seat)
                self.run(Draw(seat, player, hand.hole[index][:5], now=NOW))
                continue
            try:
                self.run(Act(seat, player, Action.CHECK, now=NOW))
            except (TableRuleError, HandRuleError):
                self.run(Act(seat, player, Action.CALL, now=NOW))
        raise AssertionError("the hand did not end")


def fair_hand(game: str = "holdem", players: int = 2, **kwargs: object) -> Log:
    log = Log(game, players, **kwargs)  # type: ignore[arg-type]
    log.run(CommitSeed(2, "p2", b"bob's luck", now=0))
    log.run(StartNextHand("t.1", (), NOW, server_seed=SEED))
    log.play_out()
    return log


def test_a_committed_hand_commits_before_the_first_card_and_reveals_last() -> None:
    log = fair_hand()
    hand = log.hand("t.1")
    started = hand[0].hand_started
    assert started.deck_commitment == fairness.commitment(SEED)
    assert [(s.seat, s.seed) for s in started.player_seeds] == [(2, b"bob's luck")]
    deck = fairness.derive_deck(GAMES["holdem"].deck, SEED, ((2, b"bob's luck"),), "t.1")
    assert started.deck == cards_to_wire(deck)
    assert hand[-1].WhichOneof("body") == "deck_revealed"
    assert hand[-1].deck_revealed.server_seed == SEED
    assert log.table.seats[1] is not None and log.table.seats[1].seed == b""  # used once
    assert replay(log.events) == log.table


def test_a_fair_hand_verifies_for_the_operator_and_for_a_player_dealt_in() -> None:
    log = fair_hand()
    check = verify_hand(log.hand("t.1"))
    assert check.ok, check.problems
    assert check.cards_checked == 9  # two hole cards each and the board
    mine = [redact_history_event(event, 1) for event in log.hand("t.1")]
    assert mine[0].hand_started.deck == "" and mine[0].hand_started.server_seed == b""
    check = verify_hand(mine, given_seeds={2: b"bob's luck"})
    assert check.ok, check.problems
    assert 7 <= check.cards_checked <= 9  # bob's cards count once shown at the showdown


def test_nothing_live_tells_the_seed() -> None:
    log = fair_hand()
    hand = log.hand("t.1")
    for seat in (None, 1, 2):
        assert redact_event(hand[0], seat).hand_started.server_seed == b""
        assert redact_event(hand[0], seat).hand_started.deck_commitment == fairness.commitment(SEED)
        assert redact_event(hand[-1], seat).deck_revealed.server_seed == b""


def test_a_tampered_commitment_is_named() -> None:
    hand = fair_hand().hand("t.1")
    hand[0].hand_started.deck_commitment = bytes(32)
    check = verify_hand(hand)
    assert not check.ok
    assert check.problems[0].startswith(
        "The commitment of hand t.1 does not match its revealed server seed"
    )


def test_a_seed_other_than_the_one_given_is_named() -> None:
    hand = fair_hand().hand("t.1")
    check = verify_hand(hand, given_seeds={2: b"what bob sent"})
    used, given = b"bob's luck".hex(), b"what bob sent".hex()
    assert check.problems == [
        f"Hand t.1 was dealt with {used} as seat 2's seed, not the seed given ({given})."
    ]


def test_a_recorded_player_seed_changed_in_the_log_breaks_the_derivation() -> None:
    hand = fair_hand().hand("t.1")
    hand[0].hand_started.player_seeds[0].seed = b"forged"
    check = verify_hand(hand)
    assert "The deck of hand t.1 is not the deck its seeds derive." in check.problems


def test_a_card_dealt_off_the_derived_deck_is_named() -> None:
    hand = fair_hand().hand("t.1")
    board = next(event for event in hand if event.WhichOneof("body") == "board_dealt")
    flop = board.board_dealt.cards
    board.board_dealt.cards = flop[2:4] + flop[0:2] + flop[4:]
    check = verify_hand(hand)
    assert check.problems == [
        f"Hand t.1: the board of street 1 are {board.board_dealt.cards}; the seeds derive {flop}."
    ]


def test_a_hand_without_its_reveal_or_commitment_cannot_be_checked() -> None:
    hand = fair_hand().hand("t.1")
    assert verify_hand(hand[:-1]).problems == [
        "Hand t.1 has no DeckRevealed: it is not over, or not yours to see."
    ]
    log = Log()
    log.run(StartNextHand("t.1", GAMES["holdem"].deck, NOW))
    log.play_out()
    assert all(event.WhichOneof("body") != "deck_revealed" for event in log.events)
    assert verify_hand(log.hand("t.1")).problems == [
        "Hand t.1 was not dealt from a committed deck (it predates the scheme)."
    ]


def test_the_draw_games_reshuffle_is_derived_and_checked() -> None:
    # Six players throwing five each: the first draw runs the stub dry and reshuffles.
    log = fair_hand("deuce-seven-triple-draw", 6, structure=Structure.FIXED_LIMIT)
    hand = log.hand("t.1")
    reshuffles = [event for event in hand if event.WhichOneof("body") == "discards_reshuffled"]
    assert reshuffles
    check = verify_hand(hand)
    assert check.ok, check.problems
    reshuffles[0].discards_reshuffled.stub = reshuffles[0].discards_reshuffled.stub[::-1]
    check = verify_hand(hand)
    assert any("the reshuffle for seat" in problem for problem in check.problems)
    # A player sees his own draws, not the others' discards: the check says where it stopped.
    mine = verify_hand([redact_history_event(event, 1) for event in log.hand("t.1")])
    assert mine.ok, mine.problems
    assert "not yours to see" in mine.unchecked


def test_a_committed_hand_takes_no_deck_or_shuffle_from_outside() -> None:
    log = Log("five-card-draw")
    with pytest.raises(TableRuleError, match="derives its deck"):
        log.run(StartNextHand("t.1", GAMES["five-card-draw"].deck, NOW, server_seed=SEED))
    with pytest.raises(TableRuleError, match="32 bytes"):
        log.run(StartNextHand("t.1", (), NOW, server_seed=b"short"))
    log.run(StartNextHand("t.1", (), NOW, server_seed=SEED))
    for _ in range(10):
        hand = log.table.hand
        assert hand is not None
        seat = hand.setup.seats[hand.to_act]
        if hand.phase == DRAWING:
            with pytest.raises(TableRuleError, match="derives its reshuffle"):
                log.run(Draw(seat, f"p{seat}", (), now=NOW, shuffle=GAMES["five-card-draw"].deck))
            return
        try:
            log.run(Act(seat, f"p{seat}", Action.CHECK, now=NOW))
        except (TableRuleError, HandRuleError):
            log.run(Act(seat, f"p{seat}", Action.CALL, now=NOW))
    raise AssertionError("no draw")


@pytest.mark.parametrize("seed", [b"", bytes(65)])
def test_a_seed_holds_1_to_64_bytes(seed: bytes) -> None:
    log = Log()
    with pytest.raises(TableRuleError, match="1 to 64 bytes"):
        log.run(CommitSeed(1, "p1", seed, now=0))


def test_only_the_seated_player_gives_his_seat_a_seed() -> None:
    log = Log()
    with pytest.raises(TableRuleError):
        log.run(CommitSeed(1, "p2", b"x", now=0))
    log.run(CommitSeed(1, "p1", b"first", now=0))
    log.run(CommitSeed(1, "p1", b"second", now=0))  # the last one counts
    log.run(StartNextHand("t.1", (), NOW, server_seed=SEED))
    assert [(s.seat, s.seed) for s in log.hand("t.1")[0].hand_started.player_seeds] == [
        (1, b"second")
    ]


def test_each_hands_seed_is_committed_before_the_players_can_give_theirs() -> None:
    first, second, third = bytes([1]) * 32, bytes([2]) * 32, bytes([3]) * 32
    log = Log(first_seed=first)
    created = log.events[0].table_created
    assert created.next_deck_commitment == fairness.commitment(first)
    log.run(CommitSeed(1, "p1", b"after the commitment", now=0))
    # The dealer's fresh seed is not used: the table committed to ``first`` already.
    log.run(StartNextHand("t.1", (), NOW, server_seed=bytes(32), next_server_seed=second))
    started = log.hand("t.1")[0].hand_started
    assert started.deck_commitment == created.next_deck_commitment
    assert started.next_deck_commitment == fairness.commitment(second)
    assert [(s.seat, s.seed) for s in started.player_seeds] == [(1, b"after the commitment")]
    log.play_out()
    assert log.hand("t.1")[-1].deck_revealed.server_seed == first
    log.run(StartNextHand("t.2", (), NOW + 10, server_seed=bytes(32), next_server_seed=third))
    log.play_out()
    second_hand = log.hand("t.2")
    assert second_hand[0].hand_started.deck_commitment == fairness.commitment(second)
    assert second_hand[0].hand_started.player_seeds == []  # p1's seed served one hand
    assert verify_hand(second_hand).ok
    assert replay(log.events) == log.table
    # Nothing live tells a committed seed.
    for event in log.events:
        for seat in (None, 1):
            seen = redact_event(event, seat)
            assert not seen.table_created.next_server_seed
            assert not seen.hand_started.server_seed and not seen.hand_started.next_server_seed


def test_a_seed_serves_the_next_hand_dealt_even_if_its_player_sits_it_out() -> None:
    log = Log(players=3)
    log.run(SitOut(3, "p3", now=0))
    log.run(CommitSeed(3, "p3", b"too early", now=0))
    log.run(StartNextHand("t.1", (), NOW, server_seed=SEED, next_server_seed=SEED))
    assert log.hand("t.1")[0].hand_started.player_seeds == []
    assert log.table.seats[2] is not None and log.table.seats[2].seed == b""


def test_a_voided_hand_reveals_its_seed_and_still_checks_out() -> None:
    log = Log()
    log.run(StartNextHand("t.1", (), NOW, server_seed=SEED))
    log.run(VoidHand(NOW + 1, "the dealer stopped"))
    hand = log.hand("t.1")
    assert [e.WhichOneof("body") for e in hand[-2:]] == ["hand_voided", "deck_revealed"]
    check = verify_hand(hand)
    assert check.ok, check.problems
    assert check.cards_checked == 4
