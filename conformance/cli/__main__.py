"""``python -m conformance.cli``: the ``lance-conformance`` command."""

import sys

from . import main

sys.exit(main())
