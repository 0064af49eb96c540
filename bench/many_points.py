#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# A capture of many busy observation points, for bench/many_points.sh: point k carries a queue
# pair of its own (RDMA WRITEs from 11.0.x.y to 12.0.x.y, each acknowledged) all along the
# capture, and the first two points also carry NVMe reads between one host and one storage
# server, seen at both. Every point stays active (none goes quiet), so whatever waits for "every
# related point" asks it of all of them.
#   bench/many_points.py POINTS PACKETS OUT.pcapng [SECONDS]
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "robustness"))
import hostile_captures as hc  # noqa: E402  (its frame and pcapng writers)


def main():
    points, packets, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 20.0
    rounds = max(1, packets // (2 * points + 6))
    gap = int(seconds * 1e9 / rounds)  # a round: one WRITE and its ACK at every point, one read
    w = hc.Pcapng(out, [(f"p{k}", 256) for k in range(points)])
    q = hc.Queue("10.1.0.1", "10.2.0.1", 0x100, 0x101)
    t = 1_700_000_000_000_000_000
    psn = [0] * points
    io = 0
    while w.packets < packets:
        for k in range(points):
            src, dst = bytes([11, 0, k >> 8, k & 0xFF]), bytes([12, 0, k >> 8, k & 0xFF])
            t += 200
            write = hc.roce(0x0A, 0x1000 + k, psn[k], ext=hc.reth(0, 5, 1024), payload=b"\1" * 1024, ack_req=True)
            ack = hc.roce(0x11, 0x2000 + k, psn[k], ext=hc.aeth(0x1F, psn[k]))
            w.packet(k, t, hc.udp_ipv4(src, dst, 0xC000 + k, write))
            w.packet(k, t + 50, hc.udp_ipv4(dst, src, 0xC000 + k, ack))
            psn[k] = (psn[k] + 1) & 0xFFFFFF
        cmd, data, cpl = q.read_frames(io % 60000 + 1, 0x1000 + io, q.h_psn, q.s_psn)
        q.h_psn += 1
        q.s_psn += 2
        io += 1
        for point, dt, frame in ((0, 0, cmd), (1, 1000, cmd), (1, 5000, data), (0, 5500, data), (1, 9000, cpl),
                                 (0, 9500, cpl)):
            w.packet(point, t + dt, frame)
        t += max(10000, gap - 200 * points)
    w.close()


if __name__ == "__main__":
    main()
