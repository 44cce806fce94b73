#!/usr/bin/env python3
"""tests/ops/man-coverage.py: is everything a user can type documented?

  man-coverage.py options PAGE HELPFILE...
      Every option (-x, --long-name) that appears in the help texts must be
      documented in the mdoc PAGE as "Fl x" / "Fl -long-name".
  man-coverage.py keys PAGE KEYFILE
      Every "section.key" line of KEYFILE (a "section.key = ..." listing or
      bare names) must be an ".It Cm key" entry under the ".Ss" heading that
      names "[section]" in PAGE.

Prints what is missing and exits 1 if anything is, 0 otherwise.
"""
import re
import sys

OPTION_RE = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[A-Za-z0-9])(?![\w-])")


def help_options(paths):
    found = set()
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                found.update(OPTION_RE.findall(line))
    return found


def page_flags(page):
    """Options documented in an mdoc page: arguments of Fl macros."""
    flags = set()
    with open(page, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("."):
                continue
            words = line[1:].split()
            for i, w in enumerate(words[:-1]):
                if w == "Fl":
                    arg = words[i + 1]
                    if arg in ("|", ",", "Ns"):
                        continue
                    flags.add("-" + arg.rstrip(",;"))
    return flags


def page_keys(page):
    keys = set()
    section = None
    with open(page, encoding="utf-8") as f:
        for line in f:
            if line.startswith(".Sh"):
                section = None
            elif line.startswith(".Ss"):
                m = re.search(r"\[([a-z_]+)\]", line)
                section = m.group(1) if m else None
            elif line.startswith(".It Cm ") and section:
                keys.add(section + "." + line.split()[2])
    return keys


def listed_keys(path):
    keys = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*([a-z_]+\.[a-z_]+)\b", line)
            if m:
                keys.append(m.group(1))
    return keys


def main(argv):
    if len(argv) < 4 or argv[1] not in ("options", "keys"):
        sys.stderr.write(__doc__)
        return 2
    mode, page = argv[1], argv[2]
    if mode == "options":
        wanted = sorted(help_options(argv[3:]))
        have = page_flags(page)
    else:
        wanted = listed_keys(argv[3])
        have = page_keys(page)
    if not wanted:
        print(f"{page}: nothing to check: no {mode} found in {' '.join(argv[3:])}")
        return 1
    missing = [w for w in wanted if w not in have]
    for w in missing:
        print(f"{page}: {mode[:-1]} {w} is not documented")
    print(f"{page}: {len(wanted) - len(missing)}/{len(wanted)} {mode} documented")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
