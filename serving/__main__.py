"""Entry point of `python -m serving`."""

import sys

from serving.cli import main

sys.exit(main())
