// harness/src/declare.cpp: the case declaration builder (declare.hpp).
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <map>
#include <sstream>
#include <dlpack_validate/declare.hpp>
#include <dlpack_validate/tensor.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>

namespace dlpv {

std::optional<std::vector<int64_t>> catalogue_shape(const std::string& name) {
  if (name == "3x4") return std::vector<int64_t>{3, 4};
  if (name == "scalar") return std::vector<int64_t>{};
  if (name == "empty") return std::vector<int64_t>{0, 3};
  if (name == "ones") return std::vector<int64_t>{1, 1, 3};
  if (name == "one") return std::vector<int64_t>{1};
  if (name == "ndim3") return std::vector<int64_t>{2, 3, 4};
  if (name == "large") return std::vector<int64_t>{1024, 1024};  // 1 Mi elements: bugs only large arrays meet
  if (name == "ndim32") {  // 32 dimensions, 8 elements
    std::vector<int64_t> s(32, 1);
    s[3] = s[17] = s[31] = 2;
    return s;
  }
  return std::nullopt;
}

std::vector<int64_t> shape_named(const std::string& name) {
  return catalogue_shape(name).value_or(std::vector<int64_t>{3, 4});
}

const std::vector<Sample>& rule_samples() {
  static const std::vector<Sample> samples = {
      {"scalar", "float32", "scalar", true},     {"empty", "float32", "empty", false},
      {"one", "float32", "one", true},           {"ndim3", "float32", "ndim3", true},
      {"uint8", "uint8", "3x4", true},           {"bool", "bool", "3x4", true},
      {"complex128", "complex128", "3x4", true}, {"float8_e4m3fn", "float8_e4m3fn", "3x4", true},
      {"float4_e2m1fn", "float4_e2m1fn", "3x4", true}};
  return samples;
}

const char* import_need(StructKind k) { return k == StructKind::versioned ? "import_versioned" : "import_legacy"; }
const char* export_need(StructKind k) { return k == StructKind::versioned ? "export_versioned" : "export_legacy"; }

namespace {
// A declaration mistake is a bug in the validator: say which and stop before any case runs.
[[noreturn]] void bad_declaration(const std::string& id, const std::string& what) {
  std::fprintf(stderr, "dlpack-validate: case %s is declared wrong: %s\n", id.c_str(), what.c_str());
  std::abort();
}
}  // namespace

Declare::Declare(std::string id, std::string title, const char* file, int line) {
  info_.id = std::move(id);
  info_.title = std::move(title);
  info_.line = line;
  // Kept from "cases/" on, so the listing names the file the same on every machine.
  const std::string path = file ? file : "";
  const size_t at = path.rfind("/cases/");
  info_.source = at == std::string::npos ? path : path.substr(at + 1);
}

Declare& Declare::title(std::string title) {
  info_.title = std::move(title);
  return *this;
}
Declare& Declare::must(std::vector<std::string> requirements) {
  info_.severity = Severity::must;
  info_.requirements = std::move(requirements);
  return *this;
}
Declare& Declare::should(std::vector<std::string> requirements) {
  info_.severity = Severity::should;
  info_.requirements = std::move(requirements);
  return *this;
}
Declare& Declare::may(std::vector<std::string> requirements) {
  info_.severity = Severity::may;
  info_.requirements = std::move(requirements);
  return *this;
}
Declare& Declare::level(Severity severity, std::vector<std::string> requirements) {
  info_.severity = severity;
  info_.requirements = std::move(requirements);
  return *this;
}
Declare& Declare::role(Role role) {
  info_.role = role;
  return *this;
}
Declare& Declare::python() {
  info_.role = Role::python_protocol;
  info_.kinds = {"python"};
  return device(kCpu0);
}
Declare& Declare::kind(StructKind kind) {
  info_.values.kind = kind;
  info_.params["version"] = to_string(kind);
  return *this;
}
Declare& Declare::dtype(DLDataType dtype) {
  info_.values.dtype = dtype;
  info_.params["dtype"] = dtype_name(dtype);
  return *this;
}
Declare& Declare::dtype(const std::string& name) {
  const auto t = dtype_from_name(name);
  if (!t) bad_declaration(info_.id, "unknown dtype " + name);
  return dtype(*t);
}
Declare& Declare::layout(uint32_t layout) {
  info_.values.layout = layout;
  info_.params["layout"] = layout_name(layout);
  return *this;
}
Declare& Declare::device(CaseDevice device) {
  info_.values.device = device.device;
  info_.params["device"] = device.label;
  return *this;
}
Declare& Declare::device(DLDevice device) {
  info_.values.device = device;
  info_.params["device"] = device_name(device);
  return *this;
}
Declare& Declare::shape(std::string name) {
  info_.params["shape"] = name;
  info_.values.shape = std::move(name);
  return *this;
}
Declare& Declare::label(std::string key, std::string value) {
  info_.params[std::move(key)] = std::move(value);
  return *this;
}
Declare& Declare::needs(std::vector<std::string> capabilities) {
  info_.needs = std::move(capabilities);
  return *this;
}
Declare& Declare::also_needs(const std::string& capability) {
  if (std::find(info_.needs.begin(), info_.needs.end(), capability) == info_.needs.end())
    info_.needs.push_back(capability);
  return *this;
}
Declare& Declare::only_for(std::vector<std::string> subject_kinds) {
  info_.kinds = std::move(subject_kinds);
  return *this;
}
Declare& Declare::proven_by(std::vector<std::string> fixtures) {
  info_.proofs = std::move(fixtures);
  return *this;
}
Declare& Declare::combine(const std::string& axis, std::vector<std::string> values) {
  return combine(axis, std::move(values), nullptr);
}
Declare& Declare::combine(const std::string& axis, std::vector<std::string> values, AxisApply apply) {
  for (const Axis& a : axes_)
    if (a.name == axis) bad_declaration(info_.id, "axis " + axis + " combined twice");
  if (values.empty() || values.size() > 63) bad_declaration(info_.id, "axis " + axis + " needs 1 to 63 values");
  axes_.push_back({axis, std::move(values), std::move(apply)});
  return *this;
}
Declare& Declare::extend(const std::string& axis, std::vector<std::string> values, AxisApply apply) {
  for (const std::string& v : values)
    if (v.empty() || v.find('.') != std::string::npos) bad_declaration(info_.id, "extend(" + axis + ") value '" + v + "'");
  values.insert(values.begin(), std::string());
  combine(axis, std::move(values), std::move(apply));
  axes_.back().extension = true;
  return *this;
}
Declare& Declare::widen(const std::string& axis, std::vector<std::string> values) {
  Axis* widened = nullptr;
  for (Axis& a : axes_)
    if (a.name == axis) widened = &a;
  if (!widened || widened->extension) bad_declaration(info_.id, "widen(" + axis + "): no such combined axis");
  if (values.empty()) bad_declaration(info_.id, "widen(" + axis + ") without values");
  for (const std::string& v : values) {
    if (v.empty() || v.find('.') != std::string::npos ||
        std::find(widened->values.begin(), widened->values.end(), v) != widened->values.end())
      bad_declaration(info_.id, "widen(" + axis + ") value '" + v + "'");
    widened->values.push_back(v);
  }
  if (widened->values.size() > 63) bad_declaration(info_.id, "axis " + axis + " needs 1 to 63 values");
  if (!widened->first_new) widened->first_new = widened->values.size() - values.size();
  return *this;
}
Declare& Declare::pairwise() {
  pairwise_ = true;
  return *this;
}
Declare& Declare::triples(std::vector<std::string> axes) {
  for (const std::string& name : axes)
    if (!has_axis(name)) bad_declaration(info_.id, "triples() names axis " + name + ", which is not combined (yet)");
  if (axes.size() < 3) bad_declaration(info_.id, "triples() needs three axes or more");
  triples_ = std::move(axes);
  return pairwise();
}
Declare& Declare::each(std::function<void(Declare&)> per_case) {
  each_.push_back(std::move(per_case));
  return *this;
}
Declare& Declare::per_kind(const std::array<StructKind, 2>& kinds) {
  return per_kind(std::initializer_list<StructKind>{kinds[0], kinds[1]});
}
Declare& Declare::per_kind(std::initializer_list<StructKind> kinds) {
  std::vector<std::string> names;
  for (StructKind k : kinds) names.push_back(to_string(k));
  return combine("kind", std::move(names));
}
Declare& Declare::per_sample(bool about_data) {
  std::vector<std::string> names{""};  // the rule on float32 3x4 keeps the bare id
  for (const Sample& s : rule_samples())
    if (!about_data || s.has_data) names.push_back(s.name);
  // Each sample's title names its tensor: "... (float32 (2, 3, 4))".
  return combine("sample", std::move(names), [](Declare& d, const std::string& sample) {
    if (sample.empty()) {
      d.dtype("float32").shape("3x4");
      return;
    }
    const auto dims = shape_named(d.info().values.shape);
    d.info_.title += fmt::format(" ({} {})", d.info().params.at("dtype"),
                                 shape_text(dims));
  });
}

void Declare::set_axis_value(const std::string& axis, const std::string& value) {
  if (axis == "kind") {
    if (value != "versioned" && value != "legacy") bad_declaration(info_.id, "struct kind " + value);
    kind(value == "versioned" ? StructKind::versioned : StructKind::legacy);
  } else if (axis == "dtype") {
    dtype(value);
  } else if (axis == "layout") {
    if (auto l = layout_from_name(value)) layout(*l);
    else label("layout", value);
  } else if (axis == "shape") {
    shape(value);
  } else if (axis == "sample") {
    // A tensor named by one word: a rule sample, a catalogue dtype (3x4) or a catalogue shape
    // (float32). "" keeps what the declaration says.
    if (value.empty()) return;
    for (const Sample& s : rule_samples())
      if (value == s.name) {
        dtype(s.dtype);
        shape(s.shape);
        return;
      }
    if (dtype_from_name(value)) {
      dtype(value);
      shape("3x4");
    } else if (catalogue_shape(value)) {
      dtype("float32");
      shape(value);
    } else {
      bad_declaration(info_.id, "unknown sample " + value);
    }
  } else {
    label(axis, value);
  }
}

void Declare::run(CaseBody body) {
  // The records are made when first wanted (Registry::add_lazy): a worker's start-up makes only
  // those of the cases it is sent. A declaration mistake still stops the run before any case
  // runs: the supervisor lists every case (Registry::cases) before it starts one.
  if (!body) bad_declaration(info_.id, "no body");
  Registry::instance().add_lazy(info_.id, [self = *this, body] { return self.records(body); });
  // A covered family keeps its whole space: any other point can be made by id (--explore).
  // Its ids are the base and one segment per axis, so every value must give a segment.
  bool named = pairwise_ && !has_axis("kind");
  for (const Axis& a : axes_)
    for (size_t i = 0; i < a.values.size(); ++i) {
      const std::string& v = a.values[i];
      named = named && (!v.empty() || (a.extension && i == 0)) && v.find('.') == std::string::npos;
    }
  if (!named) return;
  Family f;
  f.base = info_.id;
  for (const Axis& a : axes_) {
    f.axis_names.push_back(a.name);
    f.axis_values.push_back(a.values);
  }
  const Declare self = *this;
  f.make = [self, body](const std::vector<size_t>& pick) { return self.records_at({pick}, body).front(); };
  Registry::instance().add_family(std::move(f));
}

namespace {
/// "{kind} import of a {layout} tensor": each {name} the case's parameter of that name ("kind":
/// its struct kind). Text in braces that names no parameter refuses the declaration (below).
std::string fill_title(const std::string& title, const CaseInfo& c) {
  std::string out;
  for (size_t i = 0; i < title.size();) {
    const size_t close = title[i] == '{' ? title.find('}', i) : std::string::npos;
    if (close != std::string::npos) {
      const std::string key = title.substr(i + 1, close - i - 1);
      const auto it = c.params.find(key == "kind" ? "version" : key);
      if (it != c.params.end()) {
        // "import of a {layout} tensor" with layout offset reads "import of an offset tensor".
        const bool article = out == "a " || (out.size() >= 3 && out.compare(out.size() - 3, 3, " a ") == 0);
        if (article && wants_an(it->second)) out.insert(out.size() - 1, "n");
        out += it->second;
        i = close + 1;
        continue;
      }
      // A placeholder that names no parameter of the case (a typo such as {sampel}) would stay
      // in the title as written: refuse the declaration instead.
      bad_declaration(c.id, "title placeholder {" + key + "} names no parameter of the case");
    }
    out += title[i++];
  }
  return out;
}
}  // namespace

std::vector<CaseInfo> Declare::records(CaseBody body) const { return records_at(value_picks(), std::move(body)); }

std::vector<CaseInfo> Declare::records_at(const std::vector<std::vector<size_t>>& picks, CaseBody body) const {
  if (!body) bad_declaration(info_.id, "no body");
  // Every combination of the axes' values, each with its own declaration and id segments.
  struct Combination {
    Declare declaration;
    std::vector<std::string> segments;
  };
  Declare base = *this;
  base.axes_.clear();
  base.each_.clear();
  std::vector<Combination> combos;
  for (const std::vector<size_t>& pick : picks) {
    Combination n{base, {}};
    for (size_t a = 0; a < axes_.size(); ++a) {
      const Axis& axis = axes_[a];
      const std::string& value = axis.values[pick[a]];
      // An extension's implicit first value sets no parameter: the case is as it was before.
      if (!axis.extension || !value.empty()) n.declaration.set_axis_value(axis.name, value);
      if (axis.apply) axis.apply(n.declaration, value);
      if (!value.empty() && axis.name != "kind") n.segments.push_back(value);
      if (axis.extension && !value.empty()) n.declaration.info_.title += " (" + value + " " + axis.name + ")";
    }
    combos.push_back(std::move(n));
  }
  std::vector<CaseInfo> out;
  for (Combination& c : combos) {
    for (const auto& fn : each_) fn(c.declaration);
    CaseInfo info = c.declaration.info_;
    for (const std::string& s : c.segments) info.id += "." + s;
    if (info.values.kind && has_axis("kind")) {
      // The struct kind is the last segment, and brings the capability the role needs.
      const StructKind k = *info.values.kind;
      info.id += std::string(".") + to_string(k);
      info.needs.insert(info.needs.begin(), info.role == Role::consumer ? import_need(k) : export_need(k));
    }
    info.title = fill_title(info.title, info);
    if (info.requirements.empty()) bad_declaration(info.id, "no requirement id");
    info.body = body;
    out.push_back(std::move(info));
  }
  return out;
}

namespace cover {
namespace {

/// The point with mixed-radix number `index` (the last axis varies fastest): the order in which
/// the full product lists the points.
std::vector<size_t> point_at(size_t index, const std::vector<size_t>& sizes) {
  std::vector<size_t> p(sizes.size());
  for (size_t a = sizes.size(); a-- > 0;) {
    p[a] = index % sizes[a];
    index /= sizes[a];
  }
  return p;
}

struct Tuples {
  std::vector<size_t> offset;  // each group's tuples are numbered after the groups before it
  Tuples(const std::vector<size_t>& sizes, const std::vector<std::vector<size_t>>& groups) : offset(groups.size() + 1, 0) {
    for (size_t g = 0; g < groups.size(); ++g) {
      size_t count = 1;
      for (size_t a : groups[g]) count *= sizes[a];
      offset[g + 1] = offset[g] + count;
    }
  }
  // The tuple `pick` takes in group g (the group's first axis's value varies slowest).
  size_t of(const std::vector<size_t>& pick, const std::vector<size_t>& sizes, const std::vector<size_t>& group,
            size_t g) const {
    size_t t = 0;
    for (size_t a : group) t = t * sizes[a] + pick[a];
    return offset[g] + t;
  }
};

}  // namespace

size_t points(const std::vector<size_t>& sizes) {
  size_t n = 1;
  for (size_t s : sizes) n *= s;
  return n;
}

std::vector<std::vector<size_t>> greedy_plain(const std::vector<size_t>& sizes,
                                              const std::vector<std::vector<size_t>>& groups) {
  const size_t n = points(sizes);
  const Tuples tuples(sizes, groups);
  std::vector<std::vector<size_t>> all;
  for (size_t i = 0; i < n; ++i) all.push_back(point_at(i, sizes));
  std::vector<bool> covered(tuples.offset.back(), false);
  size_t left = tuples.offset.back();
  std::vector<bool> taken(n, false);
  std::vector<std::vector<size_t>> out;
  while (left > 0) {
    size_t best = 0, best_gain = 0;
    for (size_t i = 0; i < n; ++i) {
      if (taken[i]) continue;
      size_t gain = 0;
      for (size_t g = 0; g < groups.size(); ++g) gain += covered[tuples.of(all[i], sizes, groups[g], g)] ? 0 : 1;
      if (gain > best_gain) best = i, best_gain = gain;
    }
    taken[best] = true;
    for (size_t g = 0; g < groups.size(); ++g) {
      const size_t t = tuples.of(all[best], sizes, groups[g], g);
      if (!covered[t]) covered[t] = true, --left;
    }
    out.push_back(all[best]);
  }
  return out;
}

namespace {

using Cover = std::vector<std::vector<size_t>>;

constexpr const char* kMemoHeader = "dlpack-validate covers 1";

std::string space_key(const std::vector<size_t>& sizes, const std::vector<std::vector<size_t>>& groups) {
  std::string key;
  for (size_t i = 0; i < sizes.size(); ++i) key += (i ? "," : "") + std::to_string(sizes[i]);
  key += '|';
  for (size_t g = 0; g < groups.size(); ++g) {
    key += g ? "," : "";
    for (size_t i = 0; i < groups[g].size(); ++i) key += (i ? "-" : "") + std::to_string(groups[g][i]);
  }
  return key;
}

/// `text` as numbers separated by `sep` (at least one, each of digits only); false otherwise.
bool parse_numbers(const std::string& text, char sep, std::vector<size_t>& out) {
  out.clear();
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, sep);) {
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos) return false;
    out.push_back(std::stoul(part));
  }
  return !out.empty() && text.back() != sep;
}

/// Adds the covers of a memo_text() to `covers` (those it does not hold yet); see memo_load.
size_t load_into(std::map<std::string, Cover>& covers, const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kMemoHeader) return 0;
  size_t added = 0;
  while (std::getline(in, line)) {
    const size_t bar = line.find('|'), tab = line.find('\t');
    std::vector<size_t> sizes, point;
    if (bar == std::string::npos || tab == std::string::npos || tab < bar ||
        !parse_numbers(line.substr(0, bar), ',', sizes))
      continue;
    Cover cover;
    std::istringstream points(line.substr(tab + 1));
    bool ok = true;
    for (std::string text_point; ok && std::getline(points, text_point, ';');) {
      ok = parse_numbers(text_point, '.', point) && point.size() == sizes.size();
      for (size_t a = 0; ok && a < point.size(); ++a) ok = point[a] < sizes[a];
      cover.push_back(point);
    }
    if (ok && !cover.empty()) added += covers.emplace(line.substr(0, tab), std::move(cover)).second ? 1 : 0;
  }
  return added;
}

/// Reads all of descriptor `fd` from offset 0 (a worker's copy of its supervisor's memo) and
/// closes it, so the library under test never sees it; nothing, and `fd` left alone, unless it
/// is a memory file sealed as the supervisor seals it.
std::string read_all(int fd) {
  std::string text;
  if (fd < 0 || fcntl(fd, F_GET_SEALS) != kCoversSeals) return text;
  char buf[65536];
  for (off_t at = 0;;) {
    const ssize_t n = pread(fd, buf, sizeof buf, at);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
  close(fd);
  return text;
}

std::map<std::string, Cover>& memo() {
  static std::map<std::string, Cover> covers;
  static const bool loaded = [] {
    // Only the spawn that put the memo there names the descriptor (worker_environment drops an
    // inherited name), so a process started any other way computes its covers.
    if (const char* fd = std::getenv(kCoversFdVar); fd && *fd) load_into(covers, read_all(std::atoi(fd)));
    return true;
  }();
  (void)loaded;
  return covers;
}

Cover greedy_search(const std::vector<size_t>& sizes, const std::vector<std::vector<size_t>>& groups) {
  // greedy_plain's cover, found lazily: a point's gain (tuples it would newly cover) only falls as
  // others are taken, so a gain computed earlier is an upper bound. The heap holds (gain, point)
  // with the larger gain first and, between equal gains, the earlier point; the top is refreshed
  // until its gain is current, and is then what greedy_plain's full scan would take: no point
  // has a larger current gain, and an earlier point with the same gain would sit above it.
  const size_t n = points(sizes);
  const size_t G = groups.size();
  const Tuples tuples(sizes, groups);
  std::vector<uint32_t> tuple(n * G);  // each point's tuple in each group
  for (size_t i = 0; i < n; ++i) {
    const std::vector<size_t> p = point_at(i, sizes);
    for (size_t g = 0; g < G; ++g) tuple[i * G + g] = static_cast<uint32_t>(tuples.of(p, sizes, groups[g], g));
  }
  std::vector<char> covered(tuples.offset.back(), 0);
  size_t left = tuples.offset.back();
  auto gain_of = [&](size_t i) {
    size_t gain = 0;
    for (size_t g = 0; g < G; ++g) gain += covered[tuple[i * G + g]] ? 0 : 1;
    return gain;
  };
  auto below = [](const std::pair<size_t, size_t>& x, const std::pair<size_t, size_t>& y) {
    return x.first != y.first ? x.first < y.first : x.second > y.second;
  };
  std::vector<std::pair<size_t, size_t>> heap;  // (gain, point)
  heap.reserve(n);
  for (size_t i = 0; i < n; ++i) heap.emplace_back(G, i);
  std::make_heap(heap.begin(), heap.end(), below);
  std::vector<std::vector<size_t>> out;
  while (left > 0 && !heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), below);
    auto top = heap.back();
    heap.pop_back();
    const size_t gain = gain_of(top.second);
    if (gain != top.first) {  // stale: put it back with its current gain
      heap.emplace_back(gain, top.second);
      std::push_heap(heap.begin(), heap.end(), below);
      continue;
    }
    for (size_t g = 0; g < G; ++g)
      if (char& c = covered[tuple[top.second * G + g]]; !c) c = 1, --left;
    out.push_back(point_at(top.second, sizes));
  }
  return out;
}

}  // namespace

std::string memo_text() {
  std::string text = std::string(kMemoHeader) + "\n";
  for (const auto& [key, cover] : memo()) {
    text += key + '\t';
    for (size_t p = 0; p < cover.size(); ++p) {
      text += p ? ";" : "";
      for (size_t a = 0; a < cover[p].size(); ++a) text += (a ? "." : "") + std::to_string(cover[p][a]);
    }
    text += '\n';
  }
  return text;
}

size_t memo_load(const std::string& text) { return load_into(memo(), text); }

std::vector<std::vector<size_t>> greedy(const std::vector<size_t>& sizes, const std::vector<std::vector<size_t>>& groups) {
  const std::string key = space_key(sizes, groups);
  auto& covers = memo();
  if (auto it = covers.find(key); it != covers.end()) return it->second;
  return covers.emplace(key, greedy_search(sizes, groups)).first->second;
}

}  // namespace cover

std::vector<std::vector<size_t>> Declare::value_picks() const {
  std::vector<size_t> sizes;
  for (const Axis& axis : axes_) sizes.push_back(axis.values.size());
  if (!pairwise_ || axes_.size() < 3) {
    // Every combination, in order (the last axis varies fastest).
    std::vector<std::vector<size_t>> all;
    for (size_t i = 0, n = cover::points(sizes); i < n; ++i) all.push_back(cover::point_at(i, sizes));
    return all;
  }
  // A deterministic greedy cover (cover::greedy): repeatedly take the first combination (in the
  // order above) that covers the most value tuples not yet covered, until every one is. The
  // tuples: every pair of values of two different axes, and (triples()) every triple of values of
  // three of the named axes. The same axes and values always give the same cases.
  const size_t n = axes_.size();
  // The axes as first declared: extension axes held at their implicit first value, widened ones
  // at the values they had.
  std::vector<size_t> base_sizes = sizes;
  for (size_t a = 0; a < n; ++a) base_sizes[a] = axes_[a].published();
  std::vector<std::vector<size_t>> groups;  // the axis tuples to cover, each of 2 or 3 axes
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b)
      if (!axes_[a].extension && !axes_[b].extension) groups.push_back({a, b});
  std::vector<size_t> strong;  // the axes every triple of which is covered
  for (const std::string& name : triples_)
    for (size_t a = 0; a < n; ++a)
      if (axes_[a].name == name) strong.push_back(a);
  for (size_t i = 0; i < strong.size(); ++i)
    for (size_t j = i + 1; j < strong.size(); ++j)
      for (size_t k = j + 1; k < strong.size(); ++k) groups.push_back({strong[i], strong[j], strong[k]});
  // The cover of the axes as first declared: the same cases (and ids) as before any extend().
  std::vector<std::vector<size_t>> out = cover::greedy(base_sizes, groups);
  // Each value added later (an extension axis's own values 1.., a widened axis's new ones): twins
  // of cases of that cover (the same values of the other axes, and the new value), taken greedily
  // until the new value meets every value of every other original axis: each step takes the
  // first case of the cover, in its order, whose values meet it for the most axes not yet met. A
  // twin is a point the cover already found worth running, and a new value's verdict can be read
  // against its twin's.
  const std::vector<std::vector<size_t>> base = out;
  for (size_t e = 0; e < n; ++e) {
    for (size_t v = axes_[e].published(); v < sizes[e]; ++v) {
      std::vector<std::vector<char>> met(n);
      size_t left = 0;
      for (size_t a = 0; a < n; ++a)
        if (!axes_[a].extension && a != e) met[a].assign(base_sizes[a], 0), left += base_sizes[a];
      std::vector<char> taken(base.size(), 0);
      while (left > 0) {
        size_t best = base.size(), best_gain = 0;
        for (size_t i = 0; i < base.size(); ++i) {
          if (taken[i]) continue;
          size_t gain = 0;
          for (size_t a = 0; a < n; ++a)
            if (!met[a].empty() && !met[a][base[i][a]]) ++gain;
          if (gain > best_gain) best = i, best_gain = gain;
        }
        if (best == base.size()) break;  // (cannot happen: the cover holds every value of every axis)
        taken[best] = 1;
        for (size_t a = 0; a < n; ++a)
          if (!met[a].empty() && !met[a][base[best][a]]) met[a][base[best][a]] = 1, --left;
        std::vector<size_t> p = base[best];
        p[e] = v;
        out.push_back(std::move(p));
      }
    }
  }
  return out;
}

bool Declare::has_axis(const std::string& name) const {
  for (const Axis& a : axes_)
    if (a.name == name) return true;
  return false;
}

}  // namespace dlpv
