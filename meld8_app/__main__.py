"""``python -m meld8_env`` = ``meld8``."""

import sys

from meld8_env.cli import main

sys.exit(main())
