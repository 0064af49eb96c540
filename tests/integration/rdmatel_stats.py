# SPDX-License-Identifier: GPL-2.0-or-later
"""Reading the plugin's statistics tables from tshark's -z output."""
import math


def parse_simple_tables(out):
    """tshark's output of register_stat_tap_table_ui tables: {ui title: (header, [rows])}, each
    row a list of cells as printed (without the padding)."""
    tables = {}
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("=" * 20) and i + 3 < len(lines) and lines[i + 2].startswith("Filter for statistics:"):
            title = lines[i + 1].rstrip(":")
            header = [c.strip() for c in lines[i + 3].split("|")[:-1]]
            rows = []
            j = i + 5  # skip the table title line
            while j < len(lines) and not lines[j].startswith("=" * 20):
                rows.append([c.strip() for c in lines[j].split("|")[:-1]])
                j += 1
            tables[title] = (header, rows)
            i = j + 1
        else:
            i += 1
    return tables


def num(text):
    """A cell as a float; "nan" (no sample) as NaN."""
    return math.nan if text in ("nan", "-nan") else float(text)
