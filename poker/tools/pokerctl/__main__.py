"""``python -m poker.tools.pokerctl``: the same as the ``pokerctl`` command."""

from poker.tools.pokerctl.cli import main

main()
