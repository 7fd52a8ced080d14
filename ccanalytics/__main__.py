"""``python -m ccanalytics``: the same as the ``ccanalytics`` command."""

import sys

from ccanalytics.cli import main

if __name__ == "__main__":  # not when a documentation tool imports every module
    sys.exit(main())
