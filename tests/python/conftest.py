"""Fixtures of the Python package's tests: the build's partita binary and package, and Cora
(../shared/datasets/ogb-layout/cora) partitioned into 1 part and 2 METIS parts once per
session. Run through CTest (`ctest -R python`), or by hand:

    PYTHONPATH=build/python PARTITA_BUILD=build python3 -m pytest -q tests/python
"""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("PARTITA_BUILD", os.path.join(ROOT, "build"))
PARTITA = os.path.join(BUILD, "src", "cli", "partita")
PYTHON = sys.executable  # the interpreter with python3-torch (not a python3 first on PATH)
CORA = os.path.join(os.path.dirname(ROOT), "shared", "datasets", "ogb-layout", "cora")
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONPATH=os.path.join(BUILD, "python"))


def run(cmd, check=True, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, env=MPI_ENV, check=check, **kw)


def mpirun(ranks, cmd, check=True, timeout=300, **kw):
    return run(["mpirun", "-np", str(ranks), "--oversubscribe", "-x", "PYTHONPATH"] + cmd,
               check=check, timeout=timeout, **kw)


@pytest.fixture(scope="session")
def cora_parts(tmp_path_factory):
    """{1: <1-part dir>, 2: <2-part METIS dir>} of Cora."""
    if not os.path.isdir(CORA):
        pytest.skip(f"{CORA} is missing")
    base = tmp_path_factory.mktemp("cora")
    out = {}
    for parts in (1, 2):
        d = str(base / f"p{parts}")
        run([PARTITA, "-q", "partition", "--dataset", CORA, "--num-parts", str(parts),
             "--method", "metis", "--seed", "1", "--out", d])
        out[parts] = d
    return out


@pytest.fixture()
def scratch(tmp_path):
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)
