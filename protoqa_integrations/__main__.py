"""``python -m protoqa_integrations``: the installed ``protoqa-eval`` command."""

import sys

from protoqa_integrations.cli import main

sys.exit(main())
