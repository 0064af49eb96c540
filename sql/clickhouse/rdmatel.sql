-- SPDX-License-Identifier: GPL-2.0-or-later
-- The ClickHouse tables of rdmatel (printed by rdmatel clickhouse-schema; --clickhouse creates
-- them when missing). One table per record kind, the columns of its records (rdmatel export
-- KIND --help); read with FINAL to collapse batches a retry sent twice.
CREATE DATABASE IF NOT EXISTS rdmatel;

CREATE TABLE IF NOT EXISTS rdmatel.io
(
    rdmatel_run String,
    rdmatel_seq UInt64,
    `op` Nullable(String),
    `opcode` Nullable(UInt64),
    `admin` Nullable(UInt8),
    `host` Nullable(String),
    `storage` Nullable(String),
    `qpn` Nullable(UInt64),
    `host_qpn` Nullable(UInt64),
    `cid` Nullable(UInt64),
    `status` Nullable(UInt64),
    `complete` Nullable(UInt8),
    `end` Nullable(String),
    `in_capsule` Nullable(UInt8),
    `length` Nullable(UInt64),
    `t1_ns` Nullable(Int64),
    `t2_ns` Nullable(Int64),
    `t3_ns` Nullable(Int64),
    `t4_ns` Nullable(Int64),
    `t5_ns` Nullable(Int64),
    `t6_ns` Nullable(Int64),
    `t7_ns` Nullable(Int64),
    `dal_us` Nullable(Float64),
    `dpl_us` Nullable(Float64),
    `iol1_us` Nullable(Float64),
    `iol2_us` Nullable(Float64),
    `rtt_us` Nullable(Float64),
    `iol_us` Nullable(Float64),
    `cmd_frame` Nullable(UInt64),
    `rsp_frame` Nullable(UInt64),
    `compute_point` Nullable(String),
    `storage_point` Nullable(String),
    `cmd_psn` Nullable(UInt64),
    `host_gpu` Nullable(String),
    `host_node` Nullable(String),
    `job` Nullable(String),
    `key_flow` Nullable(UInt8),
    `poll_period_ns` Nullable(Int64)
)
ENGINE = ReplacingMergeTree()
ORDER BY (rdmatel_run, rdmatel_seq);

CREATE TABLE IF NOT EXISTS rdmatel.io_points
(
    rdmatel_run String,
    rdmatel_seq UInt64,
    `op` Nullable(String),
    `opcode` Nullable(UInt64),
    `admin` Nullable(UInt8),
    `host` Nullable(String),
    `storage` Nullable(String),
    `qpn` Nullable(UInt64),
    `host_qpn` Nullable(UInt64),
    `cid` Nullable(UInt64),
    `cmd_psn` Nullable(UInt64),
    `status` Nullable(UInt64),
    `in_capsule` Nullable(UInt8),
    `key_flow` Nullable(UInt8),
    `length` Nullable(UInt64),
    `point` Nullable(String),
    `command_ns` Nullable(Int64),
    `data_ns` Nullable(Int64),
    `read_request_ns` Nullable(Int64),
    `read_response_ns` Nullable(Int64),
    `completion_ns` Nullable(Int64),
    `cmd_frame` Nullable(UInt64),
    `rsp_frame` Nullable(UInt64),
    `end` Nullable(String),
    `ttl_command` Nullable(UInt64),
    `ttl_completion` Nullable(UInt64)
)
ENGINE = ReplacingMergeTree()
ORDER BY (rdmatel_run, rdmatel_seq);

CREATE TABLE IF NOT EXISTS rdmatel.messages
(
    rdmatel_run String,
    rdmatel_seq UInt64,
    `src` Nullable(String),
    `dst` Nullable(String),
    `dst_qpn` Nullable(UInt64),
    `point` Nullable(String),
    `kind` Nullable(String),
    `with_immediate` Nullable(UInt8),
    `complete` Nullable(UInt8),
    `first_psn` Nullable(UInt64),
    `last_psn` Nullable(UInt64),
    `first_ns` Nullable(Int64),
    `last_ns` Nullable(Int64),
    `fct_us` Nullable(Float64),
    `bytes` Nullable(UInt64),
    `retrans_bytes` Nullable(UInt64),
    `packets` Nullable(UInt64),
    `retrans_packets` Nullable(UInt64),
    `naks` Nullable(UInt64),
    `fet_bps` Nullable(Float64),
    `fnr` Nullable(Float64),
    `first_frame` Nullable(UInt64),
    `last_frame` Nullable(UInt64),
    `src_gpu` Nullable(String),
    `dst_gpu` Nullable(String),
    `src_node` Nullable(String),
    `dst_node` Nullable(String),
    `job` Nullable(String),
    `key_flow` Nullable(UInt8),
    `poll_period_ns` Nullable(Int64)
)
ENGINE = ReplacingMergeTree()
ORDER BY (rdmatel_run, rdmatel_seq);

CREATE TABLE IF NOT EXISTS rdmatel.flows
(
    rdmatel_run String,
    rdmatel_seq UInt64,
    `src` Nullable(String),
    `dst` Nullable(String),
    `dst_qpn` Nullable(UInt64),
    `point` Nullable(String),
    `period_start_ns` Nullable(Int64),
    `period_s` Nullable(Float64),
    `packets` Nullable(UInt64),
    `bytes` Nullable(UInt64),
    `effective_bytes` Nullable(UInt64),
    `retrans_packets` Nullable(UInt64),
    `retrans_bytes` Nullable(UInt64),
    `naks` Nullable(UInt64),
    `oos_packets` Nullable(UInt64),
    `ce_packets` Nullable(UInt64),
    `cnps` Nullable(UInt64),
    `pfc_pauses` Nullable(UInt64),
    `fet_bps` Nullable(Float64),
    `src_gpu` Nullable(String),
    `dst_gpu` Nullable(String),
    `src_node` Nullable(String),
    `dst_node` Nullable(String),
    `job` Nullable(String),
    `key_flow` Nullable(UInt8)
)
ENGINE = ReplacingMergeTree()
ORDER BY (rdmatel_run, rdmatel_seq);

CREATE TABLE IF NOT EXISTS rdmatel.congestion
(
    rdmatel_run String,
    rdmatel_seq UInt64,
    `point` Nullable(String),
    `kind` Nullable(String),
    `src` Nullable(String),
    `dst` Nullable(String),
    `dst_qpn` Nullable(UInt64),
    `priority` Nullable(UInt64),
    `dscp` Nullable(UInt64),
    `packets` Nullable(UInt64),
    `ect_packets` Nullable(UInt64),
    `ce_packets` Nullable(UInt64),
    `ce_ratio` Nullable(Float64),
    `cnp_packets` Nullable(UInt64),
    `cnps_received` Nullable(UInt64),
    `cnps` Nullable(UInt64),
    `frames` Nullable(UInt64),
    `pause_frames` Nullable(UInt64),
    `resume_frames` Nullable(UInt64),
    `quanta` Nullable(UInt64),
    `pause_us` Nullable(Float64),
    `longest_pause_us` Nullable(Float64),
    `storm` Nullable(UInt8),
    `speed_bps` Nullable(UInt64),
    `first_ns` Nullable(Int64),
    `last_ns` Nullable(Int64),
    `first_ce_ns` Nullable(Int64),
    `first_frame` Nullable(UInt64)
)
ENGINE = ReplacingMergeTree()
ORDER BY (rdmatel_run, rdmatel_seq);

CREATE TABLE IF NOT EXISTS rdmatel.paths
(
    rdmatel_run String,
    rdmatel_seq UInt64,
    `src` Nullable(String),
    `dst` Nullable(String),
    `dst_qpn` Nullable(UInt64),
    `from_point` Nullable(String),
    `to_point` Nullable(String),
    `packets` Nullable(UInt64),
    `lost` Nullable(UInt64),
    `min_us` Nullable(Float64),
    `avg_us` Nullable(Float64),
    `max_us` Nullable(Float64),
    `offset_applied_ns` Nullable(Int64),
    `offset_estimated` Nullable(UInt8),
    `raw` Nullable(UInt8),
    `path_inferred` Nullable(UInt8),
    `first_ns` Nullable(Int64),
    `last_ns` Nullable(Int64),
    `first_frame` Nullable(UInt64)
)
ENGINE = ReplacingMergeTree()
ORDER BY (rdmatel_run, rdmatel_seq);

CREATE TABLE IF NOT EXISTS rdmatel.offsets
(
    rdmatel_run String,
    rdmatel_seq UInt64,
    `point` Nullable(String),
    `reference` Nullable(String),
    `offset_ns` Nullable(Int64),
    `uncertainty_ns` Nullable(Int64),
    `samples` Nullable(UInt64),
    `both_directions` Nullable(UInt8)
)
ENGINE = ReplacingMergeTree()
ORDER BY (rdmatel_run, rdmatel_seq);

CREATE TABLE IF NOT EXISTS rdmatel.alerts
(
    rdmatel_run String,
    rdmatel_seq UInt64,
    `kind` Nullable(String),
    `time_ns` Nullable(Int64),
    `metric` Nullable(String),
    `value` Nullable(Float64),
    `threshold` Nullable(Float64),
    `baseline` Nullable(Float64),
    `rule` Nullable(String),
    `host` Nullable(String),
    `storage` Nullable(String),
    `qpn` Nullable(UInt64),
    `cid` Nullable(UInt64),
    `cmd_frame` Nullable(UInt64),
    `src` Nullable(String),
    `dst` Nullable(String),
    `dst_qpn` Nullable(UInt64),
    `point` Nullable(String),
    `first_psn` Nullable(UInt64),
    `scope` Nullable(String),
    `frame` Nullable(UInt64)
)
ENGINE = ReplacingMergeTree()
ORDER BY (rdmatel_run, rdmatel_seq);

CREATE TABLE IF NOT EXISTS rdmatel.diagnosis
(
    rdmatel_run String,
    rdmatel_seq UInt64,
    `scope` Nullable(String),
    `host` Nullable(String),
    `storage` Nullable(String),
    `job` Nullable(String),
    `ios` Nullable(UInt64),
    `split_ios` Nullable(UInt64),
    `storage_share` Nullable(Float64),
    `network_share` Nullable(Float64),
    `host_share` Nullable(Float64),
    `segment` Nullable(String),
    `metric` Nullable(String),
    `value_us` Nullable(Float64),
    `peer_median_us` Nullable(Float64),
    `evidence` Nullable(String),
    `explained_by` Nullable(String),
    `rank` Nullable(UInt64),
    `worst_frame` Nullable(UInt64)
)
ENGINE = ReplacingMergeTree()
ORDER BY (rdmatel_run, rdmatel_seq);
