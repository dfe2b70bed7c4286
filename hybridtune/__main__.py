"""python -m hybridtune runs the command line."""

import sys

from hybridtune.commands.main import main

sys.exit(main())
