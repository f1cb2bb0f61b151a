"""``python -m sklearn_crf``: the ``sklearn-crf`` command line (see :mod:`sklearn_crf._cli`)."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
