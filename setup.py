"""Builds the package `partita` with CMake for the interpreter that runs it (docs/python.md).

    pip install --no-build-isolation --no-index .

The extension `partita._C` and the `partita` binary are built by the project's CMake build
in <source>/build-pip (PARTITA_PIP_BUILD_DIR overrides it), Release, with ninja, only the
two targets the package needs, against the torch this interpreter imports
(-DPARTITA_PYTHON=sys.executable: DEVELOPERS.md, "Building against a torch"). ccache,
when installed, makes paths under the source relative to the build directory: a build
directory at the same depth as build/ finds what that build compiled. The binary goes
into the package (partita/bin/partita, with partita-torch beside it, which runs the commands
that need torch), and the console script `partita` runs it.
"""
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
# The command line's executables (src/cli/torch_handoff.h); building `partita` builds both.
EXECUTABLES = ("partita", "partita-torch")


def project_version():
    """kVersion of include/partita/core/version.h (CMake checks it against the project's)."""
    with open(os.path.join(ROOT, "include", "partita", "core", "version.h")) as f:
        m = re.search(r'kVersion\[\] = "([^"]+)"', f.read())
    if not m:
        raise RuntimeError("include/partita/core/version.h: no kVersion")
    return m.group(1)


def parallel_jobs():
    """CMAKE_BUILD_PARALLEL_LEVEL when set, else the CPUs this process may use."""
    level = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL")
    if level:
        return int(level)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


class CMakeBuild(build_ext):
    """Runs the CMake build and copies its two products into the package being built."""

    def run(self):
        build_dir = os.environ.get("PARTITA_PIP_BUILD_DIR", os.path.join(ROOT, "build-pip"))
        configure = [
            "cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPARTITA_PYTHON={sys.executable}",
            "-DPARTITA_BUILD_TESTS=OFF", "-DPARTITA_BUILD_BENCH=OFF",
            "-DPARTITA_BUILD_PYTHON=ON",
        ]
        configure += [a for a in os.environ.get("PARTITA_CMAKE_ARGS", "").split() if a]
        self._run(configure)
        self._run(["cmake", "--build", build_dir, "--parallel", str(parallel_jobs()),
                   "--target", "partita_python", "partita"])
        built = os.path.join(build_dir, "python", "partita")
        modules = [f for f in os.listdir(built) if f.startswith("_C.") and f.endswith(".so")]
        if len(modules) != 1:
            raise RuntimeError(f"{built}: expected one _C.*.so, found {modules} (was the Python "
                               "package skipped? see the configure's 'partita:' lines)")
        target = self.get_ext_fullpath("partita._C")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(built, modules[0]), target)
        binary_dir = os.path.join(os.path.dirname(target), "bin")
        os.makedirs(binary_dir, exist_ok=True)
        # partita hands the commands that need torch to partita-torch beside it
        # (src/cli/torch_handoff.h): both go into bin/.
        for name in EXECUTABLES:
            shutil.copy2(os.path.join(build_dir, "src", "cli", name),
                         os.path.join(binary_dir, name))

    def get_outputs(self):
        outputs = super().get_outputs()
        package = os.path.dirname(self.get_ext_fullpath("partita._C"))
        return outputs + [os.path.join(package, "bin", name) for name in EXECUTABLES]

    @staticmethod
    def _run(cmd):
        print("partita:", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, cwd=ROOT)


# setuptools' own scratch folders under build-pip/, not in build/ (the CMake build's) nor
# beside the sources.
SCRATCH = os.path.join("build-pip", "setuptools")
os.makedirs(os.path.join(ROOT, SCRATCH), exist_ok=True)

setup(
    name="partita",
    version=project_version(),
    description="Partita's distributed GNN data path for PyTorch models",
    python_requires=">=3.8",
    package_dir={"": "python"},
    packages=["partita"],
    py_modules=["partita_command"],
    ext_modules=[Extension("partita._C", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    entry_points={"console_scripts": ["partita = partita_command:main"]},
    options={"build": {"build_base": SCRATCH}, "egg_info": {"egg_base": SCRATCH}},
    zip_safe=False,
)
