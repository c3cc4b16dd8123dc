"""tests/gen/genfiles.py: the one command-line interface of every generator
in tests/gen/. A generator computes the text of its .test files from its own
model and hands them to main():

    /usr/bin/python3 tests/gen/NAME.py --write   rewrite the files
    /usr/bin/python3 tests/gen/NAME.py --check   exit 1, with a diff, if a
                                                 committed file differs
"""
import argparse
import difflib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(generator, files):
    """files: a list of (name, function returning the file's text)."""
    ap = argparse.ArgumentParser(prog=generator)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true", help="rewrite the .test files")
    g.add_argument("--check", action="store_true", help="fail if a committed file differs")
    args = ap.parse_args()
    bad = 0
    for name, make in files:
        path = os.path.join(HERE, name)
        new = make()
        if args.write:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            print("wrote", os.path.relpath(path))
            continue
        try:
            with open(path, encoding="utf-8") as f:
                old = f.read()
        except FileNotFoundError:
            old = ""
        if old != new:
            bad = 1
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True),
                "committed/" + name, "generated/" + name, n=1))
    if args.check:
        print("%s: %s" % (generator, "generated files differ" if bad else
                          "generated files match"))
    sys.exit(bad)
