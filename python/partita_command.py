"""The `partita` console script of the pip-installed package: runs the binary installed
inside the package (partita/bin/partita) with this process's arguments. It finds the
package without importing it (no torch import: the command starts as fast as the binary).
"""
import importlib.util
import os
import sys


def binary_path():
    """The partita binary inside the installed package."""
    spec = importlib.util.find_spec("partita")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("error: the partita package is not installed in this environment")
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, "bin", "partita")
        if os.access(path, os.X_OK):
            return path
    raise SystemExit("error: the partita package has no bin/partita (reinstall it with pip)")


def main():
    path = binary_path()
    # argv[0] "partita": the usage line names the command as typed, not its install path.
    os.execv(path, ["partita"] + sys.argv[1:])


if __name__ == "__main__":
    main()
