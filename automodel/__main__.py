"""``python -m automodel`` is the ``automodel`` command."""

import sys

from automodel.cli import main

sys.exit(main())
