#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# A capture of many busy observation points, for bench/many_points.sh: point k carries a queue
# pair of its own (RDMA WRITEs from 11.0.x.y to 12.0.x.y, each acknowledged) all along the
# capture, and the first two points also carry NVMe reads between one host and one storage
# server, seen at both. Every point stays active (none goes quiet), so whatever waits for "every
# related point" asks it of all of them. With IO_POINTS, the reads are seen at that many points
# (each a little later than the one before, as along a path): what an I/O seen everywhere costs.
# IO_POINTS 0: every point carries reads of its own instead (a host and a storage server of its
# own): as many points with I/Os in flight as there are points.
#   bench/many_points.py POINTS PACKETS OUT.pcapng [SECONDS [IO_POINTS]]
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "robustness"))
import hostile_captures as hc  # noqa: E402  (its frame and pcapng writers)


def main():
    points, packets, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 20.0
    io_points = min(points, int(sys.argv[5])) if len(sys.argv) > 5 else 2
    own = io_points == 0
    rounds = max(1, packets // (5 * points if own else 2 * points + 3 * io_points))
    gap = int(seconds * 1e9 / rounds)  # a round: one WRITE and its ACK at every point, one read
    w = hc.Pcapng(out, [(f"p{k}", 256) for k in range(points)])
    q = hc.Queue("10.1.0.1", "10.2.0.1", 0x100, 0x101)
    t = 1_700_000_000_000_000_000
    psn = [0] * points
    io = 0
    own_queues = [hc.Queue(f"10.1.{k >> 8}.{k & 0xFF}", f"10.2.{k >> 8}.{k & 0xFF}", 0x100, 0x101)
                  for k in range(points)] if own else []
    while w.packets < packets:
        for k in range(points):
            src, dst = bytes([11, 0, k >> 8, k & 0xFF]), bytes([12, 0, k >> 8, k & 0xFF])
            t += 200
            write = hc.roce(0x0A, 0x1000 + k, psn[k], ext=hc.reth(0, 5, 1024), payload=b"\1" * 1024, ack_req=True)
            ack = hc.roce(0x11, 0x2000 + k, psn[k], ext=hc.aeth(0x1F, psn[k]))
            w.packet(k, t, hc.udp_ipv4(src, dst, 0xC000 + (k & 0x3FFF), write))
            w.packet(k, t + 50, hc.udp_ipv4(dst, src, 0xC000 + (k & 0x3FFF), ack))
            psn[k] = (psn[k] + 1) & 0xFFFFFF
            if own:
                oq = own_queues[k]
                cmd, data, cpl = oq.read_frames(io % 60000 + 1, 0x1000 + io, oq.h_psn, oq.s_psn)
                oq.h_psn += 1
                oq.s_psn += 2
                for dt, frame in ((80, cmd), (110, data), (140, cpl)):
                    w.packet(k, t + dt, frame)
        if own:
            io += 1
            t += max(10000, gap - 200 * points)
            continue
        cmd, data, cpl = q.read_frames(io % 60000 + 1, 0x1000 + io, q.h_psn, q.s_psn)
        q.h_psn += 1
        q.s_psn += 2
        io += 1
        if io_points == 2:
            for point, dt, frame in ((0, 0, cmd), (1, 1000, cmd), (1, 5000, data), (0, 5500, data), (1, 9000, cpl),
                                     (0, 9500, cpl)):
                w.packet(point, t + dt, frame)
        else:  # the command host -> storage along points 0..n-1, the data and completion back
            _, t_cpl = hc.read_along(w, (cmd, data, cpl), io_points, t, 20)
            t = t_cpl + io_points * 20
        t += max(10000, gap - 200 * points)
    w.close()


if __name__ == "__main__":
    main()
