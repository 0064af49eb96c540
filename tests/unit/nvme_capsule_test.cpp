// SPDX-License-Identifier: GPL-2.0-or-later
// NVMe SQE/CQE parsing (NVMe base 2.0 figure 88/89, NVMe-oF 1.1 SGL rules).
#include <gtest/gtest.h>

#include "engine/decode/nvme_capsule.h"
#include "tests/support/frame_builder.h"

namespace rdmatel {
namespace {

TEST(NvmeCapsule, KeyedReadCommand) {
  auto b = test::sqe(0x02, 0x1234, 1, 0x4F, 131072, 0x00ABCD12);
  NvmeSqe s;
  ASSERT_TRUE(parse_nvme_sqe(b.data(), b.size(), s));
  EXPECT_EQ(s.opcode, 0x02);
  EXPECT_EQ(s.cid, 0x1234);
  EXPECT_EQ(s.nsid, 1u);
  EXPECT_TRUE(s.keyed());
  EXPECT_FALSE(s.in_capsule());
  EXPECT_EQ(s.sgl_len, 131072u);
  EXPECT_EQ(s.sgl_key, 0x00ABCD12u);
  EXPECT_STREQ(nvme_op_name(s.opcode, s.fctype, NvmeQueueKind::kIo), "read");
  EXPECT_STREQ(nvme_op_name(s.opcode, s.fctype, NvmeQueueKind::kAdmin), "get_log_page");
}

TEST(NvmeCapsule, InCapsuleWrite) {
  auto b = test::sqe(0x01, 7, 1, 0x01, 4096, 0);
  NvmeSqe s;
  ASSERT_TRUE(parse_nvme_sqe(b.data(), b.size(), s));
  EXPECT_TRUE(s.in_capsule());
  EXPECT_EQ(s.sgl_len, 4096u);
}

TEST(NvmeCapsule, ConnectCarriesQueueId) {
  auto b = test::sqe(0x7F, 0, 0, 0x01, 1024, 0);
  b[4] = 0x01;   // fctype connect
  b[42] = 0x03;  // QID 3
  NvmeSqe s;
  ASSERT_TRUE(parse_nvme_sqe(b.data(), b.size(), s));
  EXPECT_TRUE(s.is_connect());
  EXPECT_EQ(s.connect_qid, 3);
  EXPECT_STREQ(nvme_op_name(0x7F, 0x01, NvmeQueueKind::kUnknown), "connect");
  EXPECT_STREQ(nvme_op_name(0x7F, 0x04, NvmeQueueKind::kUnknown), "property_get");
}

TEST(NvmeCapsule, RejectsPrpAndBadSgl) {
  auto b = test::sqe(0x02, 1, 1, 0x40, 4096, 1);
  NvmeSqe s;
  b[1] = 0x00;  // PSDT 00b = PRPs: not allowed over fabrics
  EXPECT_FALSE(parse_nvme_sqe(b.data(), b.size(), s));
  b[1] = 0x40;
  b[39] = 0x70;  // SGL type 7: reserved
  EXPECT_FALSE(parse_nvme_sqe(b.data(), b.size(), s));
  b[39] = 0x40;
  EXPECT_FALSE(parse_nvme_sqe(b.data(), 63, s));
  EXPECT_TRUE(parse_nvme_sqe(b.data(), 64, s));
}

TEST(NvmeCapsule, Completion) {
  auto b = test::cqe(0xBEEF, 0x0281, 4);
  NvmeCqe c;
  ASSERT_TRUE(parse_nvme_cqe(b.data(), b.size(), c));
  EXPECT_EQ(c.cid, 0xBEEF);
  EXPECT_EQ(c.status, 0x0281);
  EXPECT_EQ(c.sq_id, 4);
  EXPECT_FALSE(parse_nvme_cqe(b.data(), 15, c));
}

TEST(NvmeCapsule, UnknownOpcodesGetNumericNames) {
  EXPECT_STREQ(nvme_op_name(0x99, 0, NvmeQueueKind::kIo), "opcode_0x99");
  EXPECT_TRUE(nvme_admin_only_opcode(0x18));
  EXPECT_FALSE(nvme_admin_only_opcode(0x02));
}

}  // namespace
}  // namespace rdmatel
