"""`python -m mentor.cli`: the `mentor` command."""

import sys

from mentor.cli import main

sys.exit(main())
