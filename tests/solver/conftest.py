"""The solver's tests need numpy, the `solver` dependency group's (README, "Development")."""

import importlib.util
import os

if importlib.util.find_spec("numpy") is None and not os.environ.get("CI"):
    # tests/conftest.py leaves this folder out of a whole run and says so in the header;
    # named on the command line (`pytest tests/solver`), it is left out here.
    collect_ignore_glob = ["test_*.py"]
