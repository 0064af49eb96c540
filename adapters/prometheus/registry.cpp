// SPDX-License-Identifier: GPL-2.0-or-later
#include "adapters/prometheus/registry.h"

#include <charconv>
#include <cmath>

namespace rdmatel::prometheus {

std::string escape_label(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

size_t Registry::family(std::string name, std::string help, MetricType type,
                        std::vector<std::string> labels, std::span<const double> buckets) {
  families_.push_back(Family{std::move(name),
                             std::move(help),
                             type,
                             std::move(labels),
                             std::vector<double>(buckets.begin(), buckets.end()),
                             {}});
  return families_.size() - 1;
}

size_t Registry::own_family(std::string name, std::string help, MetricType type) {
  size_t f = family(std::move(name), std::move(help), type, {});
  families_[f].exempt = true;
  return f;
}

Registry::Series* Registry::find(size_t f, const std::vector<std::string>& labels) {
  Family& fam = families_[f];
  auto it = fam.series.find(labels);
  if (it != fam.series.end()) return &it->second;
  if (!fam.exempt) {
    if (series_ >= max_series_) {
      ++dropped_;
      return nullptr;
    }
    ++series_;
  }
  Series& s = fam.series[labels];
  if (fam.type == MetricType::kHistogram) s.buckets.assign(fam.bounds.size(), 0);
  return &s;
}

bool Registry::add(size_t f, const std::vector<std::string>& labels, double v) {
  Series* s = find(f, labels);
  if (s) s->value += v;
  return s != nullptr;
}

bool Registry::set(size_t f, const std::vector<std::string>& labels, double v) {
  Series* s = find(f, labels);
  if (s) s->value = v;
  return s != nullptr;
}

bool Registry::observe(size_t f, const std::vector<std::string>& labels, double v) {
  Series* s = find(f, labels);
  if (!s) return false;
  const std::vector<double>& bounds = families_[f].bounds;
  // Bucket i counts observations <= bounds[i] (and above the bound before): "le" is inclusive.
  for (size_t i = 0; i < bounds.size(); ++i)
    if (v <= bounds[i]) {
      ++s->buckets[i];
      break;
    }
  ++s->count;
  s->sum += v;
  return true;
}

namespace {

std::string label_text(const std::vector<std::string>& names,
                       const std::vector<std::string>& values, const std::string& extra = "") {
  std::string out;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i)
    out += (out.empty() ? "" : ",") + names[i] + "=\"" + escape_label(values[i]) + "\"";
  if (!extra.empty()) out += (out.empty() ? "" : ",") + extra;
  return out.empty() ? "" : "{" + out + "}";
}

const char* type_name(MetricType t) {
  switch (t) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string Registry::render() const {
  std::string out;
  for (const Family& f : families_) {
    out += "# HELP " + f.name + " " + f.help + "\n";
    out += "# TYPE " + f.name + " " + type_name(f.type) + "\n";
    for (const auto& [labels, s] : f.series) {
      if (f.type != MetricType::kHistogram) {
        out += f.name + label_text(f.labels, labels) + " " + format_value(s.value) + "\n";
        continue;
      }
      uint64_t cumulative = 0;
      for (size_t i = 0; i < f.bounds.size(); ++i) {
        cumulative += s.buckets[i];
        out += f.name + "_bucket" +
               label_text(f.labels, labels, "le=\"" + format_value(f.bounds[i]) + "\"") + " " +
               std::to_string(cumulative) + "\n";
      }
      out += f.name + "_bucket" + label_text(f.labels, labels, "le=\"+Inf\"") + " " +
             std::to_string(s.count) + "\n";
      out += f.name + "_sum" + label_text(f.labels, labels) + " " + format_value(s.sum) + "\n";
      out +=
          f.name + "_count" + label_text(f.labels, labels) + " " + std::to_string(s.count) + "\n";
    }
  }
  return out;
}

}  // namespace rdmatel::prometheus
