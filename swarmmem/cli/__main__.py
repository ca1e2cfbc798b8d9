"""``python -m swarmmem.cli``: the command line."""

from swarmmem.cli.main import main

main()
