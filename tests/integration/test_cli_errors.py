# SPDX-License-Identifier: GPL-2.0-or-later
"""Every way the CLI can fail on its input gives one human sentence and the documented exit
status (0 success, 2 bad usage, 3 unreadable or corrupt input after reporting what was read)."""
import os
import subprocess
import sys

from rdmatel_testlib import fail_if, scratch_dir

cli, sample = sys.argv[1], sys.argv[2]
tmp = scratch_dir("rdmatel_err_")
problems = []


def run(*args):
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=120)


def expect(args, code, needle, stdout_needle=None, warnings_too=False):
    p = run(*args)
    err_lines = [l for l in p.stderr.splitlines() if l.strip()]
    if warnings_too:  # what was read before the error may have warnings of its own
        err_lines = [l for l in err_lines if not l.startswith("rdmatel: warning: ")]
    if p.returncode != code:
        problems.append(f"{args}: exit {p.returncode}, want {code} (stderr: {p.stderr.strip()})")
    if needle and needle not in p.stderr:
        problems.append(f"{args}: stderr lacks {needle!r}: {p.stderr.strip()!r}")
    if code != 0 and len(err_lines) != 1:
        problems.append(f"{args}: want one line on stderr, got {len(err_lines)}: {p.stderr!r}")
    if stdout_needle and stdout_needle not in p.stdout:
        problems.append(f"{args}: stdout lacks {stdout_needle!r}")
    return p


# Usage errors: 2.
expect([], 2, "no command")
expect(["frobnicate"], 2, "unknown command")
expect(["analyze"], 2, "no capture file")
expect(["export"], 2, "KIND")
expect(["export", "bogus", sample], 2, "unknown export kind")
expect(["export", "io", sample, "--format", "xml"], 2, "unknown format")
expect(["analyze", sample, "--point", "eth0"], 2, "NAME=ROLE")
expect(["analyze", sample, "--point", "eth0=router"], 2, "NAME=ROLE")
expect(["analyze", sample, "--io-timeout", "-1"], 2, "--io-timeout")
expect(["analyze", sample, "--bogus"], 2, "unknown option")
expect(["analyze", sample, "--point", "nosuch=compute"], 2, "names no observation point")
expect(["export", "io", sample, "--max-ios", "1.5"], 2, "--max-ios")
expect(["analyze", sample, "--threads", "0"], 2, "--threads")
expect(["analyze", "-", "-"], 2, "standard input (-) given more than once")
expect(["live", "-r", sample, "--threads", "2"], 2, "--threads is for analyze and export")
# More threads than the engine uses: measured as with 2 (the same report), and said so once.
p4 = expect(["analyze", sample, "--threads", "4", "--no-progress"], 0, "--threads 4: the measurement uses at most 2 threads")
p2 = run("analyze", sample, "--threads", "2", "--no-progress")
if p4.stdout != p2.stdout or p4.stderr.replace(p2.stderr, "", 1).count("--threads") != 1:
    problems.append(f"--threads 4: not the report of --threads 2 with one line more: {p4.stderr!r}")
if "--threads" in p2.stderr or "--threads" in run("analyze", sample, "--threads", "4", "-q", "--no-progress").stderr:
    problems.append("--threads 2, or 4 with -q, warns about threads")

# A --point the traffic contradicts is reported (and used, as the user said).
p = run("analyze", sample, "--no-progress", "--point", "leafA-gpu=storage", "--point", "leafB-stor=compute")
if p.returncode != 0 or "contradicts the traffic" not in p.stderr:
    problems.append(f"swapped --point roles: exit {p.returncode}, no contradiction reported: {p.stderr.strip()[:300]}")

# Standard input is a capture too.
with open(sample, "rb") as f:
    p = subprocess.run([cli, "export", "io", "-", "--no-progress"], stdin=f, capture_output=True, text=True,
                       timeout=120)
want = run("export", "io", sample, "--no-progress")
if p.returncode != 0 or p.stdout != want.stdout or not want.stdout:
    problems.append(f"export io - (standard input): exit {p.returncode}, {len(p.stdout.splitlines())} records "
                    f"vs {len(want.stdout.splitlines())} from the file: {p.stderr.strip()[:200]}")

# Help for the export kinds and each kind's fields.
p = run("export", "--help")
if p.returncode != 0 or "messages" not in p.stdout or "flows" not in p.stdout:
    problems.append(f"export --help: exit {p.returncode}: {p.stdout[:200]}")
# A kind that the KINDS list offers is never also "not available".
listed = {l.split()[0] for l in p.stdout.split("KINDS:")[-1].split("\n\n")[0].splitlines() if l.startswith("  ") and not l.startswith("   ")}
planned = p.stdout.split("Not available in this version:")[1].split(".")[0] if "Not available" in p.stdout else ""
both = listed & {k.strip() for k in planned.split(",")}
if not {"io", "messages", "diagnosis"} <= listed or both:
    problems.append(f"export --help: kinds {sorted(listed)}, listed and also not available: {sorted(both)}")
p = run("export", "io", "--help")
if p.returncode != 0 or "dal_us" not in p.stdout or "T3 - T2" not in p.stdout:
    problems.append(f"export io --help: exit {p.returncode}: {p.stdout[:200]}")

# Unreadable input: 3, with the path named.
missing = os.path.join(tmp, "missing.pcapng")
expect(["analyze", missing], 3, "No such file")
expect(["analyze", tmp], 3, "directory")
empty = os.path.join(tmp, "empty.pcapng")
open(empty, "wb").close()
expect(["analyze", empty], 3, "empty")
text = os.path.join(tmp, "notes.txt")
with open(text, "w") as f:
    f.write("these are not packets\n" * 10)
expect(["analyze", text], 3, "not a capture file")
noperm = os.path.join(tmp, "noperm.pcapng")
with open(sample, "rb") as src, open(noperm, "wb") as dst:
    dst.write(src.read())
os.chmod(noperm, 0)
if os.geteuid() != 0:  # root reads anything
    expect(["analyze", noperm], 3, "Permission denied")

# A capture cut in the middle of a packet: the report of what was read, then the error, exit 3.
with open(sample, "rb") as f:
    data = f.read()
cut = os.path.join(tmp, "cut.pcapng")
with open(cut, "wb") as f:
    f.write(data[: len(data) * 2 // 3 + 7])
# (The sample's points are written in blocks: the storage point's last packets before the cut are
# earlier than the compute point's, whose later ones are then not counted lost, with a warning.)
p = expect(["analyze", cut, "--no-progress"], 3, "truncated", stdout_needle="NVMe commands:", warnings_too=True)
p = run("export", "io", cut)
if p.returncode != 3 or not p.stdout.strip():
    problems.append(f"export of a cut capture: exit {p.returncode}, {len(p.stdout.splitlines())} records")

# No interface of a link type rdmatel decodes: not a capture it can measure, exit 3 (libwiretap
# reads a few bytes of text as "MP4 media, 1 frames").
import struct
unsup = os.path.join(tmp, "unsupported.pcap")
with open(unsup, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 147))
    f.write(struct.pack("<IIII", 1, 0, 4, 4) + b"abcd")
p = expect(["analyze", unsup, "--no-progress"], 3, "link type 147")
six = os.path.join(tmp, "six.txt")
with open(six, "w") as f:
    f.write("hello\n")
expect(["analyze", six, "--no-progress"], 3, "not a capture rdmatel can measure")
expect(["export", "io", six], 3, "not a capture rdmatel can measure")

# A compressed capture read through libwiretap is named by its short format name.
import gzip
gz = os.path.join(tmp, "sample.pcapng.gz")
with open(sample, "rb") as src, gzip.open(gz, "wb") as dst:
    dst.write(src.read())
expect(["analyze", gz, "--no-progress"], 0, None, stdout_needle="capture: pcapng (gzip compressed), ")

# A clock offset that is not NAME=NS is a usage error, with the form it takes.
for bad in ("spine", "spine=3ms", "=5", "spine="):
    expect(["export", "paths", sample, "--clock-offset", bad], 2, "--clock-offset takes NAME=NS")
expect(["export", "paths", sample, "--clock-offset", "leafB-stor=-1500"], 0, None)

# Writing the export somewhere impossible is a usage error.
expect(["export", "io", sample, "-o", os.path.join(tmp, "no", "such", "dir.jsonl")], 2, "cannot write")

fail_if(problems, "error-handling problems")
print("OK: error handling")
