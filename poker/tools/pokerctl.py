"""``pokerctl``: a command-line client of the dealer, with bot players, for newcomers and demos.

    pokerctl create --game holdem --blinds 1/2          # prints the new table id
    pokerctl bots <table> --count 3 --hands 5           # seats bots and plays 5 hands
    pokerctl watch <table>                              # the table's events as a spectator
    pokerctl show <table> [--as bot-1]                  # the table (bot-1's cards with --as)
    pokerctl history <hand id>                          # a finished hand in PHH
    pokerctl tables | close <table> | token <subject>

    pokerctl deposit alice 5000 [--key K] | withdraw alice 100 --key K   # the wallet
    pokerctl balance alice | transactions alice | escrow <table> | rake | audit

Tokens are signed with the services' keys: the current key of a keyring file (``--token-keys``
or ``POKER_TOKEN_KEYS``), else the one secret of ``--secret-file`` (default ``var/token-secret``,
written by ``make run``) or ``POKER_TOKEN_SECRET`` in hex: a local-development convenience, the
way a real client would get its token from a login service. Deposits and withdrawals (the bots'
funding included) go with a cashier token, as the payments service's would; ``pokerctl token
SUBJECT --role cashier`` prints one.

TLS: ``--tls-ca`` (``POKER_TLS_CA``) trusts the CA that signed the dealer's and the wallet's
certificates; ``--tls-cert``/``--tls-key`` (``POKER_TLS_CERT``/``POKER_TLS_KEY``) present a client
certificate to servers that require mutual TLS. None set: plaintext (the loopback ``make run``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import text_format

from poker.engine.games import GAMES, ForcedBets
from poker.servicekit.auth import bearer_metadata
from poker.servicekit.settings import client_tls, load_token_keys
from poker.servicekit.tls import ClientTls, aio_channel
from poker.servicekit.tokens import Role, TokenKeys, issue_token
from poker.tools.bot import play_turn
from poker.tools.client import Client
from pokerpb import dealer_pb2 as dpb
from pokerpb import events_pb2 as pb
from pokerpb import ledger_pb2 as lpb
from pokerpb import wallet_pb2 as wpb
from pokerpb import wallet_pb2_grpc

_STRUCTURES = {
    "no-limit": pb.NO_LIMIT,
    "pot-limit": pb.POT_LIMIT,
    "half-pot-limit": pb.HALF_POT_LIMIT,
    "fixed-limit": pb.FIXED_LIMIT,
}
_MAX_BOT_TURNS = 100_000
_WALLET_RETRIES = 40  # the wallet may still be taking its lease right after `make run` starts


def _secret(args: argparse.Namespace) -> TokenKeys:
    if args.token_keys:
        return load_token_keys(args.token_keys)
    text = os.environ.get("POKER_TOKEN_SECRET", "")
    if not text:
        path = Path(args.secret_file)
        if not path.exists():
            raise SystemExit(f"no token secret: start the dealer with `make run` ({path})")
        text = path.read_text(encoding="ascii").strip()
    return bytes.fromhex(text)


def _tls(args: argparse.Namespace) -> ClientTls | None:
    """TLS settings of ``--tls-ca/--tls-cert/--tls-key``; None (plaintext) when none is set."""
    return client_tls(args.tls_ca, args.tls_cert, args.tls_key, flag="--tls")


def _client(
    channel: grpc.aio.Channel, args: argparse.Namespace, subject: str, role: Role
) -> Client:
    return Client(channel, _secret(args), subject, role)


def _cid() -> str:
    return uuid.uuid4().hex


def _line(event: pb.TableEvent) -> str:
    body = event.WhichOneof("body") or "?"
    fields = text_format.MessageToString(getattr(event, body), as_one_line=True)
    hand = f" [{event.hand_id}]" if event.hand_id else ""
    return f"#{event.version}{hand} {body} {fields}"


async def _create(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    operator = _client(channel, args, "operator", Role.OPERATOR)
    reply = await operator.call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=_cid(),
            table_id=args.table_id,
            game=args.game,
            structure=_STRUCTURES[args.structure],
            stakes=_stakes(args),
            play_money=not args.real_money,
            action_timer_ms=args.timer_ms,
            pause_between_hands_ms=args.pause_ms,
        ),
    )
    print(reply.table_id)


def _stakes(args: argparse.Namespace) -> pb.Stakes:
    """The stakes ``create`` asks for: blinds for the button games, an ante (and the room's
    bring-in, twice the ante, unless given) for the stud-type games; fixed limit's bets default
    to the big blind (or twice the bring-in) and twice that."""
    stud = args.game in GAMES and GAMES[args.game].forced_bets is ForcedBets.ANTE_BRING_IN
    blinds = args.blinds or ("" if stud else "1/2")
    small, _, big = blinds.partition("/")
    ante = args.ante if args.ante is not None else (1 if stud else 0)
    stakes = pb.Stakes(
        small_blind=int(small or 0), big_blind=int(big or 0), ante=ante, bring_in=args.bring_in
    )
    if args.bets:
        small_bet, _, big_bet = args.bets.partition("/")
        stakes.small_bet, stakes.big_bet = int(small_bet), int(big_bet)
    elif args.structure == "fixed-limit":
        stakes.small_bet = stakes.big_blind or 2 * (args.bring_in or 2 * ante)
        stakes.big_bet = 2 * stakes.small_bet
    return stakes


async def _tables(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    reply = await _client(channel, args, "operator", Role.OPERATOR).call(
        "ListTables", dpb.ListTablesRequest()
    )
    for table in reply.tables:
        state = "closed" if table.closed else ("playing" if table.hand_running else "waiting")
        stakes = table.stakes
        forced = (
            f"{stakes.small_blind}/{stakes.big_blind}"
            if stakes.big_blind
            else f"ante {stakes.ante} bring-in {stakes.bring_in}"
        )
        seats = f"{table.players}/{table.seat_count}"
        print(f"{table.table_id}  {table.game}  {forced}  {seats}  {state}")


async def _show(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    client = (
        _client(channel, args, args.as_player, Role.PLAYER)
        if args.as_player
        else _client(channel, args, "operator", Role.OPERATOR)
    )
    view = await client.call("GetTable", dpb.GetTableRequest(table_id=args.table))
    print(text_format.MessageToString(view))


async def _watch(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    client = (
        _client(channel, args, args.as_player, Role.PLAYER)
        if args.as_player
        else _client(channel, args, "operator", Role.OPERATOR)
    )
    stream = client.stub.WatchTable(
        dpb.WatchTableRequest(table_id=args.table, from_seq=args.from_seq),
        metadata=client.metadata,
    )
    async for event in stream:
        print(_line(event), flush=True)


async def _history(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    client = (
        _client(channel, args, args.as_player, Role.PLAYER)
        if args.as_player
        else _client(channel, args, "operator", Role.OPERATOR)
    )
    reply = await client.call("GetHandHistory", dpb.GetHandHistoryRequest(hand_id=args.hand_id))
    print(reply.phh)


async def _close(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    reply = await _client(channel, args, "operator", Role.OPERATOR).call(
        "CloseTable", dpb.CloseTableRequest(command_id=_cid(), table_id=args.table)
    )
    print(f"closed at version {reply.version}")


async def _bots(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    """Seat ``--count`` bots in the free seats, then play until ``--hands`` more hands ended."""
    operator = _client(channel, args, "operator", Role.OPERATOR)
    view = await operator.call("GetTable", dpb.GetTableRequest(table_id=args.table))
    taken = {seat.seat for seat in view.seats}
    free = [n for n in range(1, view.config.seat_count + 1) if n not in taken][: args.count]
    bots: dict[str, Client] = {}
    for number in free:
        name = f"bot-{secrets.token_hex(2)}"
        if args.fund:
            await _fund_bot(args, name)
        bots[name] = _client(channel, args, name, Role.PLAYER)
        await bots[name].call(
            "SitDown",
            dpb.SitDownRequest(
                command_id=_cid(), table_id=args.table, seat=number, buy_in=args.buy_in
            ),
        )
        print(f"{name} sits in seat {number} with {args.buy_in}")
    rng = secrets.SystemRandom()
    target = view.hands_started + args.hands
    for _ in range(_MAX_BOT_TURNS):
        view = await operator.call("GetTable", dpb.GetTableRequest(table_id=args.table))
        hand_over = not view.hand.seat_to_act
        if view.closed or (view.hands_started >= target and hand_over):
            break
        to_act = next((s for s in view.seats if s.seat == view.hand.seat_to_act), None)
        bot = bots.get(to_act.player_id) if to_act is not None else None
        if bot is not None and to_act is not None:
            await asyncio.sleep(args.think_ms / 1000)
            try:
                # Its own view: a draw needs the bot's own cards.
                move = await play_turn(bot, await bot.table(args.table), rng)
                print(f"{view.hand.hand_id}: {to_act.player_id} {move}", flush=True)
            except grpc.aio.AioRpcError as error:  # the timer may have acted first
                print(f"{to_act.player_id}: {error.details()}", file=sys.stderr)
        else:
            await asyncio.sleep(0.1)
    print(f"played up to hand {view.hand.hand_id}; `pokerctl history {view.hand.hand_id}`")


async def _wallet_call(
    args: argparse.Namespace,
    method: str,
    request: Any,
    subject: str = "operator",
    role: Role = Role.OPERATOR,
) -> Any:
    """One Wallet call as ``role`` (retried while the wallet is not serving yet)."""
    token = issue_token(_secret(args), subject=subject, role=role)
    async with aio_channel(args.wallet, _tls(args)) as channel:
        rpc = getattr(wallet_pb2_grpc.WalletStub(channel), method)
        for attempt in range(_WALLET_RETRIES):
            try:
                return await rpc(request, metadata=bearer_metadata(token), timeout=5)
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE or attempt == _WALLET_RETRIES - 1:
                    raise
                await asyncio.sleep(0.25)
    raise AssertionError("unreachable")  # pragma: no cover


def _money(balance: wpb.Balance) -> str:
    tables = ", ".join(f"{line.table_id}: {line.amount}" for line in balance.escrow)
    return (
        f"{balance.player_id}: cash {balance.cash}, held {balance.held}, "
        f"at tables {sum(line.amount for line in balance.escrow)}"
        + (f" ({tables})" if tables else "")
        + f", total {balance.total}"
    )


async def _deposit(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    method, request_type = (
        ("Deposit", wpb.DepositRequest)
        if args.command == "deposit"
        else ("Withdraw", wpb.WithdrawRequest)
    )
    request = request_type(
        player_id=args.player, amount=args.amount, idempotency_key=args.key or _cid()
    )
    reply = await _wallet_call(args, method, request, "cashier", Role.CASHIER)
    print(f"transaction {reply.transaction_id}; {_money(reply.balance)}")


async def _balance(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    for player in args.players:
        print(
            _money(await _wallet_call(args, "GetBalance", wpb.GetBalanceRequest(player_id=player)))
        )


async def _transactions(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    request = wpb.ListTransactionsRequest(player_id=args.player, page_size=args.limit)
    reply = await _wallet_call(args, "ListTransactions", request)
    for tx in reply.transactions:
        kind = lpb.TransactionKind.Name(tx.kind)
        legs = " ".join(f"{p.account}{p.amount:+d}" for p in tx.postings)
        where = f" {tx.table_id}@{tx.position}" if tx.table_id else ""
        print(
            f"#{tx.transaction_id} {kind.removeprefix('TRANSACTION_KIND_').lower()}{where} {legs}"
        )


async def _escrow(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    reply = await _wallet_call(
        args, "GetTableEscrow", wpb.GetTableEscrowRequest(table_id=args.table)
    )
    for line in reply.escrow:
        print(f"{line.player_id}: {line.amount}")
    state = "closed" if reply.closed else "open"
    print(f"total {reply.total} ({state}, applied up to event {reply.last_applied_position})")


async def _rake(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    request = wpb.GetRakeReportRequest(
        group_by=[wpb.RAKE_BY_DAY, wpb.RAKE_BY_TABLE, wpb.RAKE_BY_GAME]
    )
    reply = await _wallet_call(args, "GetRakeReport", request)
    for row in reply.rows:
        print(f"{row.day}  {row.table_id}  {row.game}  hands {row.hands}  rake {row.rake}")
    print(f"total rake {reply.total_rake} over {reply.total_hands} hands")


async def _audit(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    reply = await _wallet_call(args, "Audit", wpb.AuditRequest())
    for breach in reply.breaches:
        print(f"BREACH {breach.kind} {breach.subject}: {breach.message}")
    verdict = "clean" if reply.clean else f"{len(reply.breaches)} breaches"
    print(f"audit {verdict}: ledger event {reply.ledger_sequence}, {reply.tables_checked} tables")


async def _fund_bot(args: argparse.Namespace, name: str) -> None:
    """Give a new bot its buy-in through the wallet; a dealer on the dev wallet needs none."""
    request = wpb.DepositRequest(player_id=name, amount=args.buy_in, idempotency_key=_cid())
    try:
        await _wallet_call(args, "Deposit", request, "cashier", Role.CASHIER)
    except grpc.aio.AioRpcError as error:
        print(f"(no deposit for {name}: {error.code().name})", file=sys.stderr)


async def _token(channel: grpc.aio.Channel, args: argparse.Namespace) -> None:
    print(issue_token(_secret(args), subject=args.subject, role=Role(args.role)))


_COMMANDS: dict[str, Any] = {
    "create": _create,
    "tables": _tables,
    "show": _show,
    "watch": _watch,
    "history": _history,
    "close": _close,
    "bots": _bots,
    "token": _token,
    "deposit": _deposit,
    "withdraw": _deposit,
    "balance": _balance,
    "transactions": _transactions,
    "escrow": _escrow,
    "rake": _rake,
    "audit": _audit,
}


def _add_key_flags(parser: argparse.ArgumentParser) -> None:
    """Where the token keys come from: a keyring file, else the one secret of ``make run``."""
    parser.add_argument("--secret-file", default="var/token-secret")
    parser.add_argument(
        "--token-keys",
        default=os.environ.get("POKER_TOKEN_KEYS", ""),
        help="a token keyring file (JSON); its current key signs (wins over --secret-file)",
    )


def _add_connection_flags(parser: argparse.ArgumentParser) -> None:
    """Where the dealer and the wallet are, the token keys, and TLS to both (the same files):
    the CA that signed their certificates, and a client certificate and key for servers that
    require mutual TLS."""
    parser.add_argument("--address", default=os.environ.get("POKER_DEALER", "127.0.0.1:50051"))
    parser.add_argument("--wallet", default=os.environ.get("POKER_WALLET", "127.0.0.1:50061"))
    _add_key_flags(parser)
    for flag, what in (
        ("ca", "CA certificate (PEM) the servers' certificates are checked against"),
        ("cert", "client certificate (PEM), for servers that require mutual TLS"),
        ("key", "the client certificate's private key (PEM)"),
    ):
        parser.add_argument(
            f"--tls-{flag}", default=os.environ.get(f"POKER_TLS_{flag.upper()}", ""), help=what
        )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pokerctl", description=__doc__.split("\n\n")[0])
    _add_connection_flags(parser)
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create", help="open a table (prints its id)")
    create.add_argument("--game", default="holdem")
    create.add_argument("--structure", choices=sorted(_STRUCTURES), default="no-limit")
    create.add_argument("--blinds", default="", help="small/big (button games; default 1/2)")
    create.add_argument("--ante", type=int, default=None, help="default: 1 in stud games, else 0")
    create.add_argument("--bring-in", type=int, default=0, help="stud games; 0: twice the ante")
    create.add_argument("--bets", default="", help="fixed limit small/big bets")
    create.add_argument("--table-id", default="")
    create.add_argument("--timer-ms", type=int, default=15_000)
    create.add_argument("--pause-ms", type=int, default=2_000)
    create.add_argument("--real-money", action="store_true")
    commands.add_parser("tables", help="list the tables")
    for name in ("show", "watch"):
        sub = commands.add_parser(name, help=f"{name} a table")
        sub.add_argument("table")
        sub.add_argument("--as", dest="as_player", default="")
        if name == "watch":
            sub.add_argument("--from-seq", type=int, default=0)
    history = commands.add_parser("history", help="a finished hand in PHH")
    history.add_argument("hand_id")
    history.add_argument("--as", dest="as_player", default="")
    close = commands.add_parser("close", help="close a table")
    close.add_argument("table")
    bots = commands.add_parser("bots", help="seat bot players and let them play")
    bots.add_argument("table")
    bots.add_argument("--count", type=int, default=3)
    bots.add_argument("--buy-in", type=int, default=200)
    bots.add_argument("--hands", type=int, default=5)
    bots.add_argument("--think-ms", type=int, default=300)
    bots.add_argument(
        "--no-fund", dest="fund", action="store_false", help="do not deposit the bots' buy-ins"
    )
    for name in ("deposit", "withdraw"):
        move = commands.add_parser(name, help=f"{name} money (the wallet)")
        move.add_argument("player")
        move.add_argument("amount", type=int)
        move.add_argument("--key", default="", help="idempotency key (default: a fresh one)")
    balance = commands.add_parser("balance", help="players' cash, held money and chips at tables")
    balance.add_argument("players", nargs="+")
    transactions = commands.add_parser("transactions", help="a player's ledger, newest first")
    transactions.add_argument("player", nargs="?", default="")
    transactions.add_argument("--limit", type=int, default=20)
    escrow = commands.add_parser("escrow", help="the money at a table, per player")
    escrow.add_argument("table")
    commands.add_parser("rake", help="the rake report by day, table and game")
    commands.add_parser("audit", help="check every invariant of the ledger")
    token = commands.add_parser("token", help="print a bearer token")
    token.add_argument("subject")
    token.add_argument("--role", choices=[role.value for role in Role], default="player")
    return parser


async def _run(args: argparse.Namespace) -> None:
    async with aio_channel(args.address, _tls(args)) as channel:
        await _COMMANDS[args.command](channel, args)


def main(argv: Sequence[str] | None = None) -> None:
    """The ``pokerctl`` entry point."""
    args = _parser().parse_args(argv)
    try:
        asyncio.run(_run(args))
    except grpc.aio.AioRpcError as error:
        raise SystemExit(f"{error.code().name}: {error.details()}") from None
    except (KeyboardInterrupt, BrokenPipeError):  # Ctrl-C, or `pokerctl watch t | head`
        sys.stderr.close()


if __name__ == "__main__":
    main()
