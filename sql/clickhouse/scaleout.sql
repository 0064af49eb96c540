-- SPDX-License-Identifier: GPL-2.0-or-later
-- Scale-out (SPEC §11): agents write point-local observations (rdmatel ... --point-local
-- --clickhouse URL: table rdmatel.io_points, created by rdmatel.sql); these views join them into
-- the I/O records one rdmatel process gives for the whole capture (io_joined: the columns of
-- rdmatel.io, frame numbers aside: each agent numbers its own capture). Messages, flow periods
-- and congestion are per point already: an agent's rows are those of the whole capture, and
-- messages_joined is their union. For ClickHouse 18.16 and later.
--
-- Roles by SPEC §3's clock-independent rule: in every I/O seen complete at two points or more,
-- the point with the longest command-to-completion span (each on its own clock) is nearest the
-- host, the shortest nearest the storage. A point's role for an endpoint is where the majority
-- of that endpoint's I/Os put it, applied to all its I/Os (those seen at one point included).
-- (rdmatel itself also weighs the IP TTL of routed fabrics and falls back to a point's other
-- endpoints; these views use the spans alone.)
--
-- Many shards: create rdmatel.io_points on every shard, and on the query node a Distributed
-- table over them sharded by the I/O key, so that one I/O's observations meet on one shard:
--   CREATE TABLE rdmatel.io_points_all AS rdmatel.io_points
--   ENGINE = Distributed(CLUSTER, rdmatel, io_points, cityHash64(host, storage, qpn, cid, cmd_psn));
-- and point these views at rdmatel.io_points_all.

CREATE VIEW IF NOT EXISTS rdmatel.io_point_ranks AS
SELECT host, storage, argMax(point, span) AS longest, argMin(point, span) AS shortest
FROM
(
    SELECT host, storage, qpn, cid, cmd_psn, point, completion_ns - command_ns AS span
    FROM rdmatel.io_points FINAL
    WHERE command_ns IS NOT NULL AND completion_ns IS NOT NULL
)
GROUP BY host, storage, qpn, cid, cmd_psn
HAVING count() >= 2;

CREATE VIEW IF NOT EXISTS rdmatel.io_compute_roles AS
SELECT host, argMax(point, n) AS compute_point
FROM (SELECT host, longest AS point, count() AS n FROM rdmatel.io_point_ranks GROUP BY host, point)
GROUP BY host;

CREATE VIEW IF NOT EXISTS rdmatel.io_storage_roles AS
SELECT storage, argMax(point, n) AS storage_point
FROM (SELECT storage, shortest AS point, count() AS n FROM rdmatel.io_point_ranks GROUP BY storage, point)
GROUP BY storage;

CREATE VIEW IF NOT EXISTS rdmatel.io_joined AS
SELECT
    op, opcode, admin, host, storage, qpn, host_qpn, cid,
    if(complete = 1, status_any, NULL) AS status,
    complete,
    if(complete = 1, 'completed', end_c) AS end,
    in_capsule, length,
    t1_ns, t2_ns, t3_ns, t4_ns, t5_ns, t6_ns, t7_ns,
    round((t3_ns - t2_ns) / 1000, 3) AS dal_us,
    if(is_write, round((t5_ns - t4_ns) / 1000, 3), NULL) AS dpl_us,
    round((if(is_write, t7_ns, t5_ns) - t1_ns) / 1000, 3) AS iol1_us,
    round((if(is_write, t6_ns, t4_ns) - t2_ns) / 1000, 3) AS iol2_us,
    round(((if(is_write, t7_ns, t5_ns) - t1_ns) - (if(is_write, t6_ns, t4_ns) - t2_ns)) / 1000, 3) AS rtt_us,
    round((rsp_c - cmd_c) / 1000, 3) AS iol_us,
    compute_point, storage_point, cmd_psn
FROM
(
    -- Stamps travel in arrays, one element per point; aggregate functions skip NULLs, so an
    -- absent stamp is held as -2^63 + 1 (the engine clamps stamps far inside that) meanwhile.
    SELECT *,
        indexOf(pts, compute_point) AS ci,
        indexOf(pts, storage_point) AS si,
        admin = 0 AND opcode = 1 AS is_write,
        admin = 0 AND opcode = 2 AS is_read,
        if(ci > 0, nullIf(cmds[ci], -9223372036854775807), NULL) AS cmd_c,
        if(ci > 0, nullIf(cpls[ci], -9223372036854775807), NULL) AS rsp_c,
        if(ci > 0, ends[ci], NULL) AS end_c,
        if(ci > 0 AND nullIf(cpls[ci], -9223372036854775807) IS NOT NULL, 1, 0) AS complete,
        cmd_c AS t1_ns,
        if(si > 0, nullIf(cmds[si], -9223372036854775807), NULL) AS t2_ns,
        if(si > 0, if(is_write, nullIf(rreqs[si], -9223372036854775807), if(is_read, nullIf(datas[si], -9223372036854775807), NULL)), NULL) AS t3_ns,
        if(is_write, if(ci > 0, nullIf(rreqs[ci], -9223372036854775807), NULL), if(si > 0, nullIf(cpls[si], -9223372036854775807), NULL)) AS t4_ns,
        if(ci > 0, if(is_write, nullIf(rresps[ci], -9223372036854775807), nullIf(cpls[ci], -9223372036854775807)), NULL) AS t5_ns,
        if(is_write AND si > 0, nullIf(cpls[si], -9223372036854775807), NULL) AS t6_ns,
        if(is_write AND ci > 0, nullIf(cpls[ci], -9223372036854775807), NULL) AS t7_ns
    FROM
    (
        -- ClickHouse 18.16 takes one JOIN per SELECT: one level each.
        SELECT *
        FROM
        (
            SELECT host, storage, qpn, cid, cmd_psn,
                any(op) AS op, any(opcode) AS opcode, any(admin) AS admin, max(host_qpn) AS host_qpn,
                max(status) AS status_any, any(in_capsule) AS in_capsule, any(length) AS length,
                groupArray(point) AS pts, groupArray(ifNull(command_ns, -9223372036854775807)) AS cmds, groupArray(ifNull(data_ns, -9223372036854775807)) AS datas,
                groupArray(ifNull(read_request_ns, -9223372036854775807)) AS rreqs, groupArray(ifNull(read_response_ns, -9223372036854775807)) AS rresps,
                groupArray(ifNull(completion_ns, -9223372036854775807)) AS cpls, groupArray(end) AS ends
            FROM rdmatel.io_points FINAL
            GROUP BY host, storage, qpn, cid, cmd_psn
        )
        ANY LEFT JOIN rdmatel.io_compute_roles USING (host)
    )
    ANY LEFT JOIN rdmatel.io_storage_roles USING (storage)
);

CREATE VIEW IF NOT EXISTS rdmatel.messages_joined AS
SELECT src, dst, dst_qpn, point, kind, with_immediate, complete, first_psn, last_psn, first_ns, last_ns,
    fct_us, bytes, retrans_bytes, packets, retrans_packets, naks, fet_bps, fnr
FROM rdmatel.messages FINAL;
