// SPDX-License-Identifier: GPL-2.0-or-later
// Lists of elements of a pool, linked through the elements themselves by their slot numbers: a
// table that maps a key to such a list holds two numbers per key, and taking an element out of
// the middle of its list touches its neighbours only. (A list stored in the table's value moved
// with every slot the table shifted, and took a search to drop an element.) An element is in at
// most one list through each of its links; `link(slot)` names the link of the element in `slot`
// that this list uses.
#pragma once

#include <cstdint>

namespace rdmatel::io_quality {

inline constexpr uint32_t kNoSlot = 0xFFFFFFFF;

struct SlotLink {
  uint32_t prev = kNoSlot, next = kNoSlot;
};

/// The ends of a list, oldest first.
struct SlotList {
  uint32_t head = kNoSlot, tail = kNoSlot;
  bool empty() const { return head == kNoSlot; }
};

/// Adds the element in `slot` at the end of `list`.
template <typename LinkOf>
void list_append(SlotList& list, uint32_t slot, LinkOf&& link) {
  link(slot) = SlotLink{list.tail, kNoSlot};
  if (list.tail == kNoSlot)
    list.head = slot;
  else
    link(list.tail).next = slot;
  list.tail = slot;
}

/// Takes the element in `slot` out of `list`; returns whether the list is empty then.
template <typename LinkOf>
bool list_remove(SlotList& list, uint32_t slot, LinkOf&& link) {
  const SlotLink mine = link(slot);
  if (mine.prev == kNoSlot)
    list.head = mine.next;
  else
    link(mine.prev).next = mine.next;
  if (mine.next == kNoSlot)
    list.tail = mine.prev;
  else
    link(mine.next).prev = mine.prev;
  return list.empty();
}

}  // namespace rdmatel::io_quality
