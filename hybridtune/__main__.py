"""python -m hybridtune runs the command line."""

import sys

from hybridtune.cli import main

sys.exit(main())
