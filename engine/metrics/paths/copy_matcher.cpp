// SPDX-License-Identifier: GPL-2.0-or-later
#include "engine/metrics/paths/copy_matcher.h"

#include <algorithm>

namespace rdmatel::paths {
namespace {

size_t index_of(std::span<const PointId> order, PointId p) {
  auto it = std::find(order.begin(), order.end(), p);
  return it == order.end() ? order.size() : size_t(it - order.begin());
}

}  // namespace

void learn_order(std::vector<PointId>& order, std::span<const Sighting> sightings) {
  // First sighting per point (sightings of a point come in its stamp order, but take the least
  // reference stamp anyway).
  std::vector<Sighting> first;
  for (const Sighting& s : sightings) {
    auto it = std::find_if(first.begin(), first.end(), [&](const Sighting& f) { return f.point == s.point; });
    if (it == first.end()) first.push_back(s);
    else if (s.ref < it->ref) *it = s;
  }
  std::stable_sort(first.begin(), first.end(), [](const Sighting& a, const Sighting& b) { return a.ref < b.ref; });
  size_t pos = 0;  // where the next new point goes: after the last known point of this packet
  bool any_known = false;
  for (const Sighting& s : first) {
    size_t i = index_of(order, s.point);
    if (i < order.size()) {
      if (!any_known || i >= pos) pos = i + 1;  // a known point earlier than expected keeps its place
      any_known = true;
      continue;
    }
    if (!any_known) {
      // Before every known point of this packet: find the first of them and go just before it.
      size_t next = order.size();
      for (const Sighting& t : first) {
        size_t j = index_of(order, t.point);
        if (j < order.size()) {
          next = j;
          break;
        }
      }
      pos = next;
    }
    order.insert(order.begin() + long(pos), s.point);
    ++pos;
    any_known = true;
  }
}

std::vector<Copy> match_copies(std::span<const Sighting> sightings, std::span<const PointId> order) {
  std::vector<Copy> copies;
  std::vector<Sighting> at;
  for (PointId p : order) {
    at.clear();
    for (const Sighting& s : sightings)
      if (s.point == p) at.push_back(s);
    if (at.empty()) continue;
    std::stable_sort(at.begin(), at.end(), [](const Sighting& a, const Sighting& b) { return a.ts < b.ts; });
    size_t after = 0;  // copies before this index are behind this point's previous sighting
    for (const Sighting& s : at) {
      size_t best = copies.size(), earliest = copies.size();
      for (size_t c = after; c < copies.size(); ++c) {
        if (copies[c].back().point == p) continue;  // already seen here
        if (earliest == copies.size()) earliest = c;
        if (copies[c].back().ref <= s.ref) best = c;
      }
      size_t chosen = best != copies.size() ? best : earliest;
      if (chosen == copies.size()) {
        copies.push_back(Copy{s});
        after = copies.size();
      } else {
        copies[chosen].push_back(s);
        after = chosen + 1;
      }
    }
  }
  return copies;
}

}  // namespace rdmatel::paths
