"""Moved to :mod:`protoqa_integrations.hub`; this name (and ``python -m protoqa_metric.hub``) is kept for one release."""

import sys

from protoqa_core.moved import alias_module

if __name__ == "__main__":
    from protoqa_integrations.hub import main

    sys.exit(main())
alias_module(__name__, "protoqa_integrations.hub")
