"""``python -m meld8_app`` = ``meld8``."""

import sys

from meld8_app.cli import main

sys.exit(main())
