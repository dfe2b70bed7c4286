"""python -m hybridtune runs the command line."""

import sys

from hybridtune.face.cli import main

sys.exit(main())
