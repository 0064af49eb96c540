# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the benchmark scripts: the capture to measure, in $work (readable by the unprivileged
# user tshark and wireshark run as), with its packet count and size.
#   bench_capture [CAPTURE]   sets capture, packets, bytes; without CAPTURE generates nvme-large
#                             (2.2 M packets, 387 MB, header-snapped at 256 bytes) with $synth;
#                             "full" generates it with whole frames (589,652 packets, 906 MB: the
#                             same 2 s of traffic with 40,000 I/Os instead of 150,000)
bench_capture() {
  capture=${1:-}
  if [[ -z $capture || $capture == full ]]; then
    local name=nvme_large args=()
    [[ $capture == full ]] && name=nvme_large_full args=(--snaplen 262144 --ios 40000)
    capture=$work/$name.pcapng
    echo "generating $capture (nvme-large ${args[*]}) ..."
    "$synth" --scenario nvme-large "${args[@]}" --out "$capture" >/dev/null
    rm -f "$work/$name.truth.json"
  else
    cp "$capture" "$work/" && capture=$work/$(basename "$capture")
  fi
  chmod 644 "$capture"
  packets=$(capinfos -c -M "$capture" 2>/dev/null | awk -F: '/Number of packets/ {gsub(/[^0-9]/, "", $2); print $2}')
  bytes=$(stat -c %s "$capture")
}
