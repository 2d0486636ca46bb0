#!/usr/bin/env python3
"""Checks the goal table that opens docs/performance.md against the JSON each row names.

The table is the first Markdown table of the page, one row per goal, with the columns
goal | target | figure | status | machine | date | JSON | command. For every row:
  - the JSON file exists (a path relative to the repository root) and parses;
  - every number in the figure cell is a number of that JSON, to the digits printed (0.98
    matches 0.9783; a number followed by % also matches a fraction, 2.7% matches 0.0271),
    never a goal's target; where the JSON cell names fields after the path
    (`bench/results/x.json#ratio_vs_path_copy,latency_us`), only the numbers under those keys,
    or in an entry whose "name" is one of them, count, so a figure cannot be met by another
    field of the same file (a ratio against another ceiling, an older verdict);
  - the date is YYYY-MM-DD and is the one in the JSON's file name;
  - status is "met" or starts with "met " or "not met", and machine and command are not empty.
So a figure edited without its JSON, or a JSON renamed or removed, fails here.

    check_performance_table.py [--root DIR] [--doc docs/performance.md]
"""
import argparse
import json
import os
import re
import sys

COLUMNS = ["goal", "target", "figure", "status", "machine", "date", "json", "command"]
# Unsigned numbers, thousands separators allowed; a '-' between two numbers is a range.
NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(%?)")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def first_table(lines):
    """(line number, cells) of the first Markdown table's rows, header and separator left out."""
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), None)
    if start is None:
        return None, []
    rows = []
    for i in range(start, len(lines)):
        if not lines[i].startswith("|"):
            break
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        rows.append((i + 1, cells))
    return rows[0], rows[2:]


def json_numbers(node, out):
    """Every number of a JSON tree, goals' targets left out."""
    if isinstance(node, bool):
        return out
    if isinstance(node, (int, float)):
        out.append(abs(float(node)))
    elif isinstance(node, dict):
        for key, value in node.items():
            if not key.startswith("target"):
                json_numbers(value, out)
    elif isinstance(node, list):
        for value in node:
            json_numbers(value, out)
    return out


def field_numbers(node, fields, out):
    """The numbers under a key named in fields, or in an entry whose "name" is one of them."""
    if isinstance(node, dict):
        if node.get("name") in fields:
            return json_numbers(node, out)
        for key, value in node.items():
            if key in fields:
                json_numbers(value, out)
            else:
                field_numbers(value, fields, out)
    elif isinstance(node, list):
        for value in node:
            field_numbers(value, fields, out)
    return out


def figures(cell):
    """(text, value, decimals, percent) of each number in a figure cell."""
    for m in NUMBER.finditer(cell):
        whole, frac, percent = m.group(1), m.group(2) or "", m.group(3)
        value = float(whole.replace(",", "") + frac)
        yield m.group(0), value, max(len(frac) - 1, 0), bool(percent)


def matches(value, decimals, percent, numbers):
    tolerance = 0.5 * 10.0 ** -decimals + 1e-9
    for n in numbers:
        if abs(n - value) <= tolerance:
            return True
        if percent and abs(n * 100.0 - value) <= tolerance:
            return True
    return False


def json_path(cell):
    """(path, fields) of a JSON cell: `bench/results/x.json[#field,...]`, or a Markdown link."""
    m = re.search(r"\(([^)]+\.json)(#[^)]*)?\)", cell) or re.search(r"`([^`]+\.json)(#[^`]*)?`",
                                                                  cell)
    if not m:
        return None, None
    path = m.group(1)
    fields = {f for f in (m.group(2) or "").lstrip("#").split(",") if f}
    return (path[3:] if path.startswith("../") else path), fields


def check(root, doc):
    with open(os.path.join(root, doc)) as f:
        lines = f.read().splitlines()
    header, rows = first_table(lines)
    if header is None:
        return [f"{doc}: no table"]
    names = [c.lower() for c in header[1]]
    if names != COLUMNS:
        return [f"{doc}:{header[0]}: the first table's columns are {names}, expected {COLUMNS}"]
    errors = []
    cache = {}
    for line, cells in rows:
        where = f"{doc}:{line}"
        if len(cells) != len(COLUMNS):
            errors.append(f"{where}: {len(cells)} cells, expected {len(COLUMNS)}")
            continue
        row = dict(zip(COLUMNS, cells))
        status = row["status"]
        if not (status == "met" or status.startswith(("met ", "not met"))):
            errors.append(f"{where}: status '{status}' starts with neither 'met' nor 'not met'")
        for column in ("goal", "target", "machine", "command"):
            if not row[column]:
                errors.append(f"{where}: empty {column}")
        path, fields = json_path(row["json"])
        if path is None:
            errors.append(f"{where}: no JSON file named in '{row['json']}'")
            continue
        full = os.path.join(root, path)
        if path not in cache:
            try:
                with open(full) as f:
                    cache[path] = json.load(f)
            except (OSError, ValueError) as e:
                cache[path] = None
                errors.append(f"{where}: {path}: {e}")
        if cache[path] is None:
            continue
        if fields:
            numbers = field_numbers(cache[path], fields, [])
            if not numbers:
                errors.append(f"{where}: {path} has no number under {sorted(fields)}")
                continue
        else:
            numbers = json_numbers(cache[path], [])
        if not DATE.match(row["date"]):
            errors.append(f"{where}: date '{row['date']}' is not YYYY-MM-DD")
        elif row["date"] not in os.path.basename(path):
            errors.append(f"{where}: date {row['date']} is not the date of {path}")
        found = list(figures(row["figure"]))
        if not found:
            errors.append(f"{where}: no number in the figure cell '{row['figure']}'")
        for text, value, decimals, percent in found:
            if not matches(value, decimals, percent, numbers):
                within = f" under {sorted(fields)}" if fields else ""
                errors.append(f"{where}: figure {text} ('{row['goal']}') is not in {path}{within}")
    if not rows:
        errors.append(f"{doc}: the table has no rows")
    return errors


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", default=os.path.dirname(os.path.dirname(here)))
    p.add_argument("--doc", default="docs/performance.md")
    args = p.parse_args()
    errors = check(args.root, args.doc)
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} problem(s) in {args.doc}'s goal table")
        return 1
    print(f"{args.doc}: every figure of the goal table is in the JSON its row names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
