"""``pokerctl``: the command line of the dealer and the wallet, with bot players.

    pokerctl create --game holdem --blinds 1/2          # prints the new table id
    pokerctl bots <table> --count 3 --hands 5           # seats bots, plays 5 hands, they leave
    pokerctl watch <table>                              # the table's hands as they are played
    pokerctl show <table> [--as bot-1]                  # the table (bot-1's cards with --as)
    pokerctl history <hand id>                          # a finished hand in PHH
    pokerctl seed <table> --as bot-1 [--seed HEX]       # bot-1's seed for his next hand's deck
    pokerctl verify-hand <hand id> [--as bot-1] [--seed SEAT=HEX]   # the deck was fair
    pokerctl replay <table> [--to-version N]            # rebuilt from NATS, no dealer needed
    pokerctl verify [<table> ...]                       # chain, decks, dealer and wallet agree
    pokerctl export --table T | --player P [--since D] [--until D] [-o F]   # one .phhs file
    pokerctl tables | close <table> | token <subject>
    pokerctl drain <table> [--timeout 60]               # hand the table to another dealer
    pokerctl deposit alice 5000 [--key K] | withdraw alice 100 --key K   # the wallet
    pokerctl balance alice | transactions alice | escrow <table> | rake | audit

Every command takes ``--json`` (one JSON object, or one per line for ``watch`` and ``bots``).

Where things are (flag, else environment variable, else the config file, else the default; see
:mod:`poker.tools.ctlconfig`): the dealer ``--dealer``/``POKER_DEALER``, the wallet
``--wallet``/``POKER_WALLET``, the token keys (``--token-keys``/``POKER_TOKEN_KEYS``, a keyring
file holding the private keys of the roles it signs; else ``POKER_TOKEN_SECRET`` in hex; else
``--secret-file``/``POKER_SECRET_FILE``; else ``var/token-keys/pokerctl.json`` - the local
issuers' keys ``make run`` writes - or the legacy ``var/token-secret``, of ``--home``/
``POKER_HOME``, of the nearest folder up from here that has one, or of the checkout pokerctl
runs from), and TLS
(``--tls-ca/--tls-cert/--tls-key``, ``POKER_TLS_*``; none: plaintext, the loopback ``make run``).
Deposits and withdrawals (the bots' funding included) go with a cashier token, as the payments
service's would; ``pokerctl token SUBJECT --role cashier`` prints one.

The commands, by audience: :mod:`~poker.tools.pokerctl.player` (show, watch, history, seed,
verify-hand), :mod:`~poker.tools.pokerctl.bots`, :mod:`~poker.tools.pokerctl.operators` (create,
tables, drain, close, token), :mod:`~poker.tools.pokerctl.wallet` (deposit, withdraw, balance,
transactions, escrow, rake, audit), :mod:`~poker.tools.pokerctl.logs` (replay, verify, export)
and :mod:`~poker.tools.pokerctl.repair` (log remove-record). :mod:`~poker.tools.pokerctl.cli`
builds the parser from them; :mod:`~poker.tools.pokerctl.common` is what they share (the run, the
channels, ``--json``); :mod:`~poker.tools.pokerctl.logaccess` and
:mod:`~poker.tools.pokerctl.snapshots` how the log commands read NATS and the snapshots.
"""

from poker.tools.pokerctl.cli import main

__all__ = ["main"]
