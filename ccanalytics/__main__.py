"""``python -m ccanalytics``: the same as the ``ccanalytics`` command."""

import sys

from ccanalytics.cli import main

sys.exit(main())
