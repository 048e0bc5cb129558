"""``python -m llm_compiler`` runs the command-line interface."""

import sys

from llm_compiler.cli.main import main

sys.exit(main())
