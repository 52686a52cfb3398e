"""The servicer, not the application, writes what a unary command did on its request line
(poker/dealer/grpc_edge.py); the pipeline's result says it."""

from __future__ import annotations

from poker.dealer.grpc_edge import note_command, note_outcome
from poker.dealer.pipeline import CommandResult
from poker.servicekit.observability import close_request_line, open_request_line


async def test_a_unary_commands_line_names_its_table_command_and_what_it_did() -> None:
    line, token = open_request_line()
    note_command("t1", "c1")
    note_outcome(CommandResult("t1", "c1", 7, 2, applied="Act"))
    fields = close_request_line(line, token)
    assert fields == {"table_id": "t1", "command_id": "c1", "command": "Act", "events": 2, "seq": 7}


async def test_a_repeat_adds_no_outcome_and_nothing_is_written_outside_a_call() -> None:
    line, token = open_request_line()
    note_command("t1", "c1")
    note_outcome(CommandResult("t1", "c1", 7, 2, repeated=True))
    assert close_request_line(line, token) == {"table_id": "t1", "command_id": "c1"}
    note_command("t1", "c2")  # no call's line open: nothing to write, nothing raised
