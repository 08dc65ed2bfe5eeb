#!/usr/bin/env python3
"""The docs' figures keep their sources (issue 37): every script, benchmark, test or example
that README.md, DEVELOPERS.md and docs/*.md name exists, and every benchmark under bench/ is
listed in docs/figures.md (the register of where each figure comes from) and in the
README's list of benchmarks. Prints what is wrong, one line each, and exits 1.

    figures_check.py SOURCE_DIR
"""
import glob
import os
import re
import sys

# A path into the repository as the docs write it: bench/x.py, build/bench/x (a built
# benchmark, from bench/x.cc), scripts/x.sh, tests/..., examples/..., fuzz/...
PATH = re.compile(r"(?<![\w/.$<-])((?:build/)?(?:bench|scripts|tests|examples|fuzz)/"
                  r"[A-Za-z0-9_./-]*[A-Za-z0-9_/])")


def named_paths(text):
    for m in PATH.finditer(text):
        path = m.group(1).rstrip(".")
        if "<" in text[m.end():m.end() + 1]:  # tests/<layer>/: a pattern, not a path
            continue
        yield path


def exists(root, path):
    """A file or folder, or a built program (bench/x_bench, build/bench/x_bench) by its
    source."""
    base = os.path.join(root, path[len("build/"):] if path.startswith("build/") else path)
    return any(os.path.exists(base + ext) for ext in ("", ".cc"))


def main():
    root = sys.argv[1]
    docs = [os.path.join(root, "README.md"), os.path.join(root, "DEVELOPERS.md")]
    docs += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    problems = []
    checked = 0
    for doc in docs:
        with open(doc) as f:
            lines = f.read().splitlines()
        for number, line in enumerate(lines, 1):
            for path in named_paths(line):
                checked += 1
                if not exists(root, path):
                    problems.append(f"{os.path.relpath(doc, root)}:{number}: names {path}, "
                                    "which does not exist")
    with open(os.path.join(root, "docs", "figures.md")) as f:
        register = f.read()
    with open(os.path.join(root, "README.md")) as f:
        readme = f.read()
    benchmarks = readme[readme.index("## Benchmarks"):]
    benchmarks = benchmarks[:benchmarks.find("\n## ", 1)]
    scripts = sorted(os.path.basename(p) for p in glob.glob(os.path.join(root, "bench", "*.py")))
    programs = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(root, "bench",
                                                                              "*_bench.cc")))
    for name in scripts + programs:
        if name in ("smoke.py", "cpu_features.py"):  # the benchmarks' helpers, not benchmarks
            continue
        if name not in register:
            problems.append(f"docs/figures.md: bench/{name} is not listed (say which figures "
                            "it prints, or that none is quoted)")
        if name not in benchmarks:
            problems.append(f"README.md, Benchmarks: bench/{name} is not listed")
    for problem in problems:
        print(f"figures_check: {problem}")
    print(f"figures_check: {checked} paths named in {len(docs)} documents, "
          f"{len(scripts) + len(programs) - 1} benchmarks, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
