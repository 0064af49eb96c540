# SPDX-License-Identifier: GPL-2.0-or-later
"""The generator's option errors: exit 2 with a sentence naming the problem, no file written, never
a crash (faults between NVMe hosts and storage servers asked of a GPU-only scenario crashed it)."""
import os
import subprocess
import sys

from rdmatel_testlib import fail_if, scratch_dir

synth = sys.argv[1]
tmp = scratch_dir("rdmatel_synth_usage_")
problems = []
CASES = [
    (["--scenario", "write-flows", "--flows", "2", "--lossy-path", "1:1=0.2"], "need NVMe hosts and storage servers"),
    (["--scenario", "write-flows", "--flows", "2", "--slow-path", "1:1=20"], "need NVMe hosts and storage servers"),
    (["--scenario", "write-flows", "--flows", "2", "--slow-storage", "1=20"], "need NVMe hosts and storage servers"),
    (["--scenario", "write-flows", "--flows", "2", "--slow-host", "1=20"], "need NVMe hosts and storage servers"),
    (["--scenario", "nvme-2point", "--lossy-path", "9:1=0.2"], "no such host or storage server"),
    (["--scenario", "nvme-2point", "--slow-storage", "9=20"], "there are only"),
    (["--scenario", "nvme-2point", "--clock-offset", "nowhere=5"], "no point named"),
]
for i, (args, why) in enumerate(CASES):
    out = os.path.join(tmp, f"c{i}.pcapng")
    p = subprocess.run([synth, *args, "--out", out], capture_output=True, text=True, timeout=120)
    if p.returncode != 2 or why not in p.stderr or os.path.exists(out):
        problems.append(f"{' '.join(args)}: exit {p.returncode}, file written: {os.path.exists(out)}, "
                        f"stderr {p.stderr.strip()[:200]!r} (wanted exit 2 and {why!r})")
# The same faults in an NVMe scenario are accepted.
ok = subprocess.run([synth, "--scenario", "mixed", "--lossy-path", "1:1=0.2", "--out", os.path.join(tmp, "ok.pcapng")],
                    capture_output=True, text=True, timeout=300)
if ok.returncode != 0:
    problems.append(f"mixed with --lossy-path 1:1=0.2: exit {ok.returncode}: {ok.stderr.strip()[:200]}")
fail_if(problems, "generator option errors handled badly")
print(f"generator option errors: {len(CASES)} OK")
