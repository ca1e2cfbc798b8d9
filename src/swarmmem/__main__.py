"""``python -m swarmmem``: the same as the ``swarmmem`` command."""

import sys

from swarmmem._entry import main

sys.exit(main())
