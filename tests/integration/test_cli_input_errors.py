# SPDX-License-Identifier: GPL-2.0-or-later
"""More ways the CLI's input can be bad (test_cli_errors.py has the basic ones): corrupt first
blocks, cut or bogus gzip files, absurd pcap headers and records, pipes, permissions as an
unprivileged user, unwritable outputs. Each must give one human sentence on standard error and
the documented exit status: 0 success, 2 bad usage, 3 unreadable or corrupt input (after
reporting what was read).

    test_cli_input_errors.py RDMATEL SAMPLE.pcapng

The last cases are regressions of bugs the robustness work found (and that are fixed).
"""
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys

from rdmatel_testlib import fail, fail_if, scratch_dir

args = sys.argv[1:]
cli, sample = args[0], args[1]
tmp = scratch_dir("rdmatel_inerr_")
os.chmod(tmp, 0o755)
problems = []


def path(name):
    return os.path.join(tmp, name)


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)
    os.chmod(path(name), 0o644)
    return path(name)


def run(argv, stdin=None, stdout=subprocess.PIPE, prefix=()):
    return subprocess.run([*prefix, cli, *argv], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                          timeout=120)


def expect(label, argv, code, needle, stdout_needle=None, **kw):
    p = run(argv, **kw)
    err = p.stderr.decode("utf-8", "replace")
    out = p.stdout.decode("utf-8", "replace") if p.stdout is not None else ""
    # One sentence: warnings are separate lines and allowed; the failure itself is one line.
    lines = [l for l in err.splitlines() if l.strip() and not l.startswith("rdmatel: warning:")]
    if p.returncode != code:
        problems.append(f"{label}: exit {p.returncode}, want {code} (stderr: {err.strip()[-400:]!r})")
    if needle and needle not in err:
        problems.append(f"{label}: stderr lacks {needle!r}: {err.strip()[-400:]!r}")
    if code != 0 and len(lines) != 1:
        problems.append(f"{label}: want one line on stderr, got {len(lines)}: {err[-600:]!r}")
    if code != 0 and lines and not lines[0].startswith("rdmatel: "):
        problems.append(f"{label}: the message does not start with 'rdmatel: ': {lines[0]!r}")
    if stdout_needle and stdout_needle not in out:
        problems.append(f"{label}: stdout lacks {stdout_needle!r}")
    return p


def records(p):
    return [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]


def block(btype, body, length=None):
    body += b"\0" * (-len(body) % 4)
    n = 12 + len(body) if length is None else length
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


SHB_BODY = struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)
IDB = block(1, struct.pack("<HHI", 1, 0, 262144) + struct.pack("<HH", 9, 1) + b"\x09\0\0\0" + b"\0\0\0\0")
with open(sample, "rb") as f:
    sample_bytes = f.read()
want = records(run(["export", "io", sample, "--no-progress"]))
if not want:
    fail(f"{sample}: no I/O records to compare with")

# ---- pcapng whose first block is corrupt: the report (0 frames), then one sentence, exit 3.
bad_bom = block(0x0A0D0D0A, struct.pack("<IHHq", 0x11223344, 1, 0, -1)) + IDB
expect("SHB with a bad byte-order magic", ["analyze", write("bad_bom.pcapng", bad_bom), "--no-progress"], 3,
       "byte-order magic", stdout_needle="0 frames")
odd = struct.pack("<II", 0x0A0D0D0A, 29) + SHB_BODY + b"\0" * 8
expect("SHB length not a multiple of 4", ["analyze", write("odd_len.pcapng", odd), "--no-progress"], 3,
       "invalid length")
huge = block(0x0A0D0D0A, SHB_BODY, length=0x7FFFFFF0) + IDB
expect("SHB announcing 2 GiB", ["analyze", write("huge_shb.pcapng", huge), "--no-progress"], 3, "truncated block")
expect("SHB header cut after 8 bytes", ["analyze", write("shb8.pcapng", struct.pack("<II", 0x0A0D0D0A, 28))], 3,
       "truncated")
short_shb = block(0x0A0D0D0A, b"\x4d\x3c\x2b\x1a")
expect("SHB shorter than its fields", ["analyze", write("short_shb.pcapng", short_shb), "--no-progress"], 3,
       "too short")
undeclared = block(0x0A0D0D0A, SHB_BODY) + IDB + block(6, struct.pack("<IIIII", 7, 0, 0, 4, 4) + b"abcd")
expect("EPB on an undeclared interface", ["analyze", write("undeclared.pcapng", undeclared), "--no-progress"], 3,
       "not declared")
expect("pcapng without packets", ["analyze", write("nopackets.pcapng", block(0x0A0D0D0A, SHB_BODY) + IDB),
                                  "--no-progress"], 0, None, stdout_needle="0 frames")

# ---- gzip files: cut streams, garbage inside, header only.
gz = gzip.compress(sample_bytes)
p = expect("gzip stream cut in the middle", ["export", "io", write("cutstream.pcapng.gz", gz[: len(gz) // 2]),
                                             "--no-progress"], 3, "cutstream.pcapng.gz")
if not records(p):
    problems.append("gzip stream cut in the middle: the I/Os read before the cut were not exported")
expect("gzip of a text file", ["analyze", write("text.pcapng.gz", gzip.compress(b"not packets\n" * 100))], 3,
       "not a capture file")
expect("gzip header only", ["analyze", write("gzhead.pcapng.gz", gz[:10])], 3, "gzhead.pcapng.gz")

# ---- classic pcap: absurd snap lengths are harmless, absurd records are corrupt input.
pcap = path("sample.pcap")
subprocess.run(["editcap", "-F", "pcap", "-T", "ether", sample, pcap], check=True, capture_output=True)
with open(pcap, "rb") as f:
    pcap_bytes = bytearray(f.read())
for snap in (0, 0xFFFFFFFF, 65535):
    b = bytearray(pcap_bytes)
    b[16:20] = struct.pack("<I", snap)
    p = expect(f"pcap with snaplen {snap:#x}", ["export", "io", write(f"snap{snap}.pcap", bytes(b)), "--no-progress"],
               0, None)
    if len(records(p)) != len(want):
        problems.append(f"pcap with snaplen {snap:#x}: {len(records(p))} I/O records, the pcapng has {len(want)}")
b = bytearray(pcap_bytes[:24]) + struct.pack("<IIII", 1, 0, 0xFFFFFFFF, 60) + b"\0" * 60
expect("pcap record claiming 4 GiB", ["analyze", write("claims.pcap", bytes(b)), "--no-progress"], 3,
       "claims", stdout_needle="0 frames")
expect("pcap header cut", ["analyze", write("cuthdr.pcap", bytes(pcap_bytes[:10]))], 3, "truncated")
b = bytearray(pcap_bytes[:24]) + struct.pack("<IIII", 1, 0, 64, 20) + bytes(64)
expect("pcap record with incl_len > orig_len", ["analyze", write("incl.pcap", bytes(b)), "--no-progress"], 0,
       None, stdout_needle="1 frames")
b = bytearray(pcap_bytes[:24]) + struct.pack("<IIII", 1, 0, 100, 100) + bytes(40)
expect("pcap record cut by the end of the file", ["analyze", write("cutrec.pcap", bytes(b)), "--no-progress"], 3,
       "truncated packet data", stdout_needle="0 frames")

# ---- Other formats libwiretap reads.
snoop = path("sample.snoop")
subprocess.run(["editcap", "-F", "snoop", sample, snoop], check=True, capture_output=True)
p = expect("snoop file (read by libwiretap)", ["export", "io", snoop, "--no-progress"], 0, None)
if len(records(p)) != len(want):
    problems.append(f"snoop file: {len(records(p))} I/O records, the pcapng has {len(want)}")

# ---- A pipe: read as a stream, same records as the file.
with open(sample, "rb") as f:
    cat = subprocess.Popen(["cat"], stdin=f, stdout=subprocess.PIPE)
    p = expect("capture on standard input (a pipe)", ["export", "io", "/dev/stdin", "--no-progress"], 0, None,
               stdin=cat.stdout)
    cat.stdout.close()
    cat.wait()
if records(p) != want:
    problems.append(f"pipe: {len(records(p))} records differ from the file's {len(want)}")

# ---- Several captures, one of them missing: nothing is read, the missing one is named.
expect("second capture missing", ["analyze", sample, path("missing2.pcapng")], 3, "missing2.pcapng")

# ---- Permissions, also when the tests run as root: run the CLI as nobody.
noperm = write("noperm.pcapng", sample_bytes)
os.chmod(noperm, 0o600)
prefix = ()
if os.geteuid() == 0:
    prefix = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--")
    # The binary must be reachable by nobody: copy it into the (world-readable) temp folder.
    cli_copy = write("rdmatel", open(cli, "rb").read())
    os.chmod(cli_copy, 0o755)
    cli = cli_copy
expect("capture without read permission", ["analyze", noperm], 3, "Permission denied", prefix=prefix)

# ---- Outputs that cannot be written: usage errors (2), named.
expect("output is a directory", ["export", "io", sample, "-o", tmp], 2, "cannot write")
expect("analyze's report to a directory", ["analyze", sample, "-o", tmp, "--no-progress"], 2, "cannot write")
expect("analyze's report on a full disk", ["analyze", sample, "-o", "/dev/full", "--no-progress"], 2, "cannot write")
# analyze -o FILE writes the report there, as it would to standard output (it was printed to
# standard output, the file never made).
on_stdout = run(["analyze", sample, "--no-progress"]).stdout
report = path("report.txt")
os.chmod(tmp, 0o777)  # writable by nobody (run() drops to it)
to_file = run(["analyze", sample, "--no-progress", "-o", report])
os.chmod(tmp, 0o755)
if to_file.returncode != 0 or to_file.stdout:
    problems.append(f"analyze -o FILE: exit {to_file.returncode}, standard output {to_file.stdout[:200]!r}")
elif not os.path.exists(report) or open(report, "rb").read() != on_stdout or b"NVMe commands" not in on_stdout:
    problems.append("analyze -o FILE: the file is not the report analyze prints to standard output")

# ---- Regressions of bugs found by the robustness work (fixed), each with what it was:
# cli/wiretap_source.cpp: wtap_free_idb_info() on the struct from wtap_file_get_idb_info()
# frees the wtap's own interface array (wtap.h: "Do not use this for the struct returned by
# wtap_file_get_idb_info()"); wtap_close() frees it again: a cut pcapng inside a complete
# gzip aborts with "free(): invalid pointer" (exit 134) after the error sentence.
cut = gzip.compress(sample_bytes[:3000])
expect("complete gzip of a cut pcapng", ["export", "io", write("cutinside.pcapng.gz", cut), "--no-progress"], 3,
       "cutinside.pcapng.gz")
p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
p.stdin.write(sample_bytes[:3000])
p.stdin.close()
expect("cut pcapng on a pipe", ["analyze", "/dev/stdin", "--no-progress"], 3, "/dev/stdin", stdin=p.stdout)
# cli/main.cpp: a failing write to standard output is not checked (fwrite/fflush results are
# ignored): `rdmatel export io X > /dev/full` loses every record and exits 0.
with open("/dev/full", "wb") as full:
    expect("standard output on a full disk", ["export", "io", sample, "--no-progress"], 2, "cannot write",
           stdout=full)
# cli/main.cpp: -o FILE that fails when flushed (disk full) exits 3 ("unreadable or corrupt
# input"), while an output that cannot be opened exits 2: the same kind of failure.
expect("output file on a full disk", ["export", "io", sample, "-o", "/dev/full"], 2, "cannot write")
# engine/report/record_writer.cpp json_quote copies bytes >= 0x80 as they are: an interface
# name that is not UTF-8 makes the JSON export invalid text (corruption campaign finding).
latin = bytearray(sample_bytes)
at = latin.find(b"leafA-gpu")
if at > 0:
    latin[at + 4] = 0xB9  # "leafA-gpu" -> "leaf\xb9-gpu", same length: blocks stay valid
    p = run(["export", "io", write("latin1.pcapng", bytes(latin)), "--no-progress"])
    try:
        for line in p.stdout.decode("utf-8").splitlines():
            json.loads(line)
    except (UnicodeDecodeError, ValueError) as e:
        problems.append(f"interface name not UTF-8: export is not valid JSON text ({e})")
# The same wiretap bug with files libwiretap takes for other formats (a 1- or 3-byte file is
# "JSON" to it, an empty gzip "ERF"): GLib reports a double unref on standard error. Once
# fixed: exit 0 (nothing measurable) or 3, and only rdmatel's own sentences.
for label, name, data in (("one-byte file", "one.pcapng", b"\x0a"), ("three-byte file", "three.pcapng", b"\x0a\x0d\x0d"),
                          ("empty gzip", "empty.pcapng.gz", gzip.compress(b""))):
    p = run(["analyze", write(name, data), "--no-progress"])
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode not in (0, 3) or any(l.strip() and not l.startswith("rdmatel: ") for l in err.splitlines()):
        problems.append(f"{label}: exit {p.returncode}, stderr {err.strip()[-300:]!r}")

shutil.rmtree(tmp, ignore_errors=True)
fail_if(problems, "input-error problems")
print("OK: input errors")
