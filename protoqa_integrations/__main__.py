import sys

from protoqa_integrations.cli import main

sys.exit(main())
