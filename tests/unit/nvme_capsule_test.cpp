// SPDX-License-Identifier: GPL-2.0-or-later
// NVMe SQE/CQE parsing (NVMe base 2.0 figure 88/89, NVMe-oF 1.1 SGL rules).
#include <gtest/gtest.h>

#include "engine/src/decode/nvme_capsule.h"
#include <algorithm>
#include <vector>

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
  EXPECT_FALSE(parse_nvme_sqe(b.data(), 39, s));  // the SGL descriptor not captured whole
  EXPECT_TRUE(parse_nvme_sqe(b.data(), 64, s));
  EXPECT_EQ(s.captured, 64);
}

TEST(NvmeCapsule, HeaderOnlySnapKeepsTheFirst40Bytes) {
  // A 128-byte snap with IPv6 and a VLAN tag leaves 50 bytes of the capsule: opcode, CID,
  // NSID and the keyed SGL (address, length, key) are there; CDW10+ and Connect's QID are not.
  auto b = test::sqe(0x7F, 9, 0, 0x40, 1024, 0x77);
  b[4] = 0x01;  // fabrics Connect
  b[42] = 0x03;
  NvmeSqe s;
  ASSERT_TRUE(parse_nvme_sqe(b.data(), 40, s));
  EXPECT_EQ(s.cid, 9);
  EXPECT_EQ(s.sgl_key, 0x77u);
  EXPECT_EQ(s.sgl_len, 1024u);
  EXPECT_TRUE(s.is_connect());
  EXPECT_FALSE(s.connect_qid_captured);
  ASSERT_TRUE(parse_nvme_sqe(b.data(), 44, s));
  EXPECT_TRUE(s.connect_qid_captured);
  EXPECT_EQ(s.connect_qid, 3);
}

TEST(NvmeCapsule, Completion) {
  auto b = test::cqe(0xBEEF, 0x0281, 4);
  NvmeCqe c;
  ASSERT_TRUE(parse_nvme_cqe(b.data(), b.size(), c));
  EXPECT_EQ(c.cid, 0xBEEF);
  EXPECT_EQ(c.status, 0x0281);
  EXPECT_EQ(c.sq_id, 4);
  EXPECT_TRUE(c.status_captured);
  // Cut before the status: the CID still ties it to its command.
  ASSERT_TRUE(parse_nvme_cqe(b.data(), 14, c));
  EXPECT_EQ(c.cid, 0xBEEF);
  EXPECT_FALSE(c.status_captured);
  EXPECT_FALSE(parse_nvme_cqe(b.data(), 13, c));
}

TEST(NvmeCapsule, UnknownOpcodesGetNumericNames) {
  EXPECT_STREQ(nvme_op_name(0x99, 0, NvmeQueueKind::kIo), "opcode_0x99");
  EXPECT_TRUE(nvme_admin_only_opcode(0x18));
  EXPECT_FALSE(nvme_admin_only_opcode(0x02));
}

}  // namespace
}  // namespace rdmatel

namespace rdmatel {
namespace {

// An SQE whose SGL is a last-segment descriptor (0x31) pointing at a list of `keys.size()` keyed
// data block descriptors right after the SQE (offset 0), as SPDK hosts send.
test::Bytes capsule_with_list(const std::vector<uint32_t>& keys, uint32_t zero_length_index = 99) {
  auto b = test::sqe(0x02, 5, 1, 0x31, uint32_t(16 * keys.size()), 0);
  // DPTR of a segment descriptor: address = offset 0 into the capsule data, length = list bytes.
  std::fill(b.begin() + 24, b.begin() + 32, 0);
  for (size_t i = 0; i < keys.size(); ++i) {
    test::putle64(b, 0x10000 * (i + 1));  // address
    uint32_t len = i == zero_length_index ? 0 : 4096;
    b.push_back(uint8_t(len));
    b.push_back(uint8_t(len >> 8));
    b.push_back(uint8_t(len >> 16));
    test::putle32(b, keys[i]);
    b.push_back(0x40);
  }
  return b;
}

TEST(NvmeCapsule, KeysFromACapsuleDescriptorList) {
  auto b = capsule_with_list({0x111, 0x222, 0x333}, 1);
  NvmeSqe s;
  ASSERT_TRUE(parse_nvme_sqe(b.data(), b.size(), s));
  EXPECT_TRUE(s.capsule_list());
  uint32_t keys[4];
  ASSERT_EQ(nvme_sgl_keys(s, b.data(), b.size(), keys, 4), 2u);  // the zero-length one is skipped
  EXPECT_EQ(keys[0], 0x111u);
  EXPECT_EQ(keys[1], 0x333u);
  // The list cut by the snap length: nothing is read past the captured bytes.
  EXPECT_EQ(nvme_sgl_keys(s, b.data(), 64 + 20, keys, 4), 0u);
  EXPECT_EQ(nvme_sgl_keys(s, b.data(), b.size(), keys, 1), 1u);
}

TEST(NvmeCapsule, SingleKeyedDescriptor) {
  auto b = test::sqe(0x02, 5, 1, 0x40, 8192, 0xABCD);
  NvmeSqe s;
  ASSERT_TRUE(parse_nvme_sqe(b.data(), b.size(), s));
  uint32_t keys[4];
  ASSERT_EQ(nvme_sgl_keys(s, b.data(), b.size(), keys, 4), 1u);
  EXPECT_EQ(keys[0], 0xABCDu);
  auto none = test::sqe(0x00, 5, 1, 0x40, 0, 0);  // flush: no data
  ASSERT_TRUE(parse_nvme_sqe(none.data(), none.size(), s));
  EXPECT_EQ(nvme_sgl_keys(s, none.data(), none.size(), keys, 4), 0u);
}

}  // namespace
}  // namespace rdmatel
