"""``python -m swarmmem.cli``: the command line."""

from swarmmem.cli import main

main()
