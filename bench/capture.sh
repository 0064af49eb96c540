# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the benchmark scripts: the capture to measure, in $work (readable by the unprivileged
# user tshark and wireshark run as), with its packet count and size.
#   bench_capture [CAPTURE]   sets capture, packets, bytes; without CAPTURE generates nvme-large
#                             (2.2 M packets, 387 MB) with $synth
bench_capture() {
  capture=${1:-}
  if [[ -z $capture ]]; then
    capture=$work/nvme_large.pcapng
    echo "generating $capture (nvme-large) ..."
    "$synth" --scenario nvme-large --out "$capture" >/dev/null
    rm -f "$work/nvme_large.truth.json"
  else
    cp "$capture" "$work/" && capture=$work/$(basename "$capture")
  fi
  chmod 644 "$capture"
  packets=$(capinfos -c -M "$capture" 2>/dev/null | awk -F: '/Number of packets/ {gsub(/[^0-9]/, "", $2); print $2}')
  bytes=$(stat -c %s "$capture")
}
