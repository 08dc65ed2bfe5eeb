#!/usr/bin/env python3
"""Every parameter a library error names has a word in each front end's table.

Library layers (src/ outside cli/) name parameters in their own words
(include/partita/core/parameter_error.h): the name given to PARTITA_CHECK_PARAM or
ParameterError, and every `backquoted` word in their string literals (other parameters a
message mentions, warnings included). This check fails when
  - such a name has no flag in the command line's table (src/cli/flag_names.cc);
  - such a name is a keyword of the Python package but has no entry in its table
    (python/src/keyword_names.cc);
  - a PARTITA_CHECK_PARAM or ParameterError names its parameter with anything but a string
    literal (the check could not see it);
  - a table gives a flag that no command declares, or a keyword the package does not take.

    check_parameter_names.py --tables build/tests/cli/word_tables --source .
"""
import argparse
import ast
import os
import re
import subprocess
import sys

LIBRARY_LAYERS = ["core", "graph", "data", "partition", "comm", "store", "sample", "loader", "nn",
                  "train", "runtime"]
# Backquoted words in library messages that are not parameters (none yet).
NOT_PARAMETERS = set()
# Library parameters that share their name with a keyword of the Python package meaning
# something else: Python does not expose them.
PYTHON_HOMONYMS = {
    "split": "data::LoadOptions::split, an OGB split folder; NeighborLoader's split= is "
             "train, valid or test",
}

# Parameters of the library's API that no command exposes as a flag (yet), each with why;
# an error naming one shows the library's name.
LIBRARY_ONLY = {
    "part": "partition::partition_dataset_assigned's and write_partition's given "
            "assignment: for library callers and tests, no flag",
    "bucket_bytes": "train::TrainOptions::bucket_bytes, the gradient allreduce bucket: for "
                    "library callers and tests, no flag",
}

TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|R"\((?:.|\n)*?\)"|"(?:\\.|[^"\\\n])*"|'
                   r"'(?:\\.|[^'\\\n])*'", re.S)
NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def code_of(text):
    """`text` with comments blanked (newlines kept), string and char literals as they are."""
    def blank(m):
        t = m.group(0)
        if t.startswith("//") or t.startswith("/*"):
            return re.sub(r"[^\n]", " ", t)
        return t
    return TOKEN.sub(blank, text)


def literal_value(arg):
    """The value of a C++ argument that is one plain string literal, else None."""
    m = re.fullmatch(r'\s*"((?:\\.|[^"\\])*)"\s*', arg)
    return m.group(1) if m else None


def call_args(code, open_paren):
    """The top-level arguments of the call whose '(' is at code[open_paren]."""
    depth, args, start, i = 0, [], open_paren + 1, open_paren
    while i < len(code):
        c = code[i]
        if c in "\"'":
            m = TOKEN.match(code, i)
            i = m.end() if m else i + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(code[start:i])
                return args
        elif c == "," and depth == 1:
            args.append(code[start:i])
            start = i + 1
        i += 1
    return args


def line_of(code, pos):
    return code.count("\n", 0, pos) + 1


def thrown_names(source):
    """{name: [where, ...]} of the parameters library layers name, and the problems found."""
    names, problems = {}, []
    for layer in LIBRARY_LAYERS:
        for folder, _, files in os.walk(os.path.join(source, "src", layer)):
            for f in sorted(files):
                if not f.endswith((".cc", ".h")):
                    continue
                path = os.path.join(folder, f)
                rel = os.path.relpath(path, source)
                code = code_of(open(path, encoding="utf-8").read())
                for m in re.finditer(r"\b(PARTITA_CHECK_PARAM|ParameterError)\s*\(", code):
                    args = call_args(code, m.end() - 1)
                    index = 1 if m.group(1) == "PARTITA_CHECK_PARAM" else 0
                    where = f"{rel}:{line_of(code, m.start())}"
                    value = literal_value(args[index]) if len(args) > index else None
                    if value is None or not NAME.match(value):
                        problems.append(f"{where}: {m.group(1)} names its parameter with "
                                        f"{args[index].strip() if len(args) > index else '?'!r}"
                                        ", not a snake_case string literal")
                        continue
                    names.setdefault(value, []).append(where)
                for m in TOKEN.finditer(code):
                    if not m.group(0).startswith('"'):
                        continue
                    for w in re.findall(r"`([a-z][a-z0-9_]*)`", m.group(0)):
                        if w not in NOT_PARAMETERS:
                            names.setdefault(w, []).append(f"{rel}:{line_of(code, m.start())}")
    return names, problems


def cli_flags(source):
    """Every flag a command of src/cli declares (add_option / add_flag / add_enum_option)."""
    flags = set()
    folder = os.path.join(source, "src", "cli")
    for f in os.listdir(folder):
        if f.endswith(".cc"):
            text = open(os.path.join(folder, f), encoding="utf-8").read()
            # add_option("--x", ...), add_flag(...), add_enum_option(app, "--x", ...)
            for m in re.finditer(r'add_(?:option|flag|enum_option)\(\s*(?:\w+,\s*)?"([^"]+)"',
                                 text):
                flags.update(p for p in m.group(1).split(",") if p.startswith("--"))
    return flags


def python_keywords(source):
    """Every keyword the partita package takes: py::arg(...) and its Python functions' args."""
    words = set()
    folder = os.path.join(source, "python", "src")
    for f in os.listdir(folder):
        if f.endswith(".cc"):
            words.update(re.findall(r'py::arg\("([a-z_][a-z0-9_]*)"\)',
                                    open(os.path.join(folder, f), encoding="utf-8").read()))
    folder = os.path.join(source, "python", "partita")
    for f in os.listdir(folder):
        if f.endswith(".py"):
            tree = ast.parse(open(os.path.join(folder, f), encoding="utf-8").read())
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef):
                    a = node.args
                    words.update(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
    words.discard("self")
    return words


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", required=True, help="the word_tables program")
    ap.add_argument("--source", required=True, help="the source tree")
    args = ap.parse_args()

    tables = {"cli": {}, "python": {}}
    out = subprocess.run([args.tables], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        front, name, word = line.split("\t")
        tables[front][name] = word

    names, problems = thrown_names(args.source)
    flags = cli_flags(args.source)
    keywords = python_keywords(args.source)

    for name, where in sorted(names.items()):
        if name not in tables["cli"] and name not in LIBRARY_ONLY:
            problems.append(f"{name} (at {', '.join(where)}): no flag in src/cli/flag_names.cc")
        if name in keywords and name not in tables["python"] and name not in PYTHON_HOMONYMS:
            problems.append(f"{name} (at {', '.join(where)}): a keyword of the Python package, "
                            "but not in python/src/keyword_names.cc")
    for name, flag in sorted(tables["cli"].items()):
        if flag.split()[0] not in flags:
            problems.append(f"src/cli/flag_names.cc: {name} -> {flag}: no command declares "
                            f"{flag.split()[0]}")
    for name, keyword in sorted(tables["python"].items()):
        if keyword not in keywords:
            problems.append(f"python/src/keyword_names.cc: {name} -> {keyword}: the package "
                            "takes no such keyword")

    if problems:
        print("\n".join(problems))
        print(f"FAILED: {len(problems)} problem(s)")
        return 1
    print(f"ok: {len(names)} parameter names thrown by library layers, each with a flag "
          f"({len(tables['cli'])} in the command line's table, {len(tables['python'])} in "
          "Python's)")
    for name, where in sorted(names.items()):
        print(f"  {name:26} {tables['cli'].get(name, '(library only)'):22} {tables['python'].get(name, '-'):12} "
              f"{len(where)} use(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
