// subjects/plugin/src/bench_routes.cpp: the bench routes of plugin subjects (export ->
// import -> delete per ordered pair, export alone, the exchange API's allocator), registered
// with the timing loop (harness/src/bench.cpp) by register_plugin_bench_routes().
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/bench.hpp>
#include <dlpack_validate/plugin_subject.hpp>
#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

namespace dlpv {

namespace {

using bench::Route;

/// The tensor every route exchanges: 16 float32 on the CPU, contiguous. Small on purpose:
/// the figures are the exchange's own cost, not a copy's.
struct Tensor16 {
  int64_t shape[1] = {16};
  DLPVRequest req{};
  Tensor16() {
    req.struct_size = sizeof(DLPVRequest);
    req.dtype = DLDataType{kDLFloat, 32, 1};
    req.device = DLDevice{kDLCPU, 0};
    req.ndim = 1;
    req.shape = shape;
    req.layout = DLPV_LAYOUT_CONTIGUOUS;
    req.max_version = DLPackVersion{DLPV_DLPACK_MAJOR, DLPV_DLPACK_MINOR};
    req.stream = DLPV_NO_STREAM;
  }
};

std::string missing(const SubjectInfo& s, const char* need) {
  if (s.has(need)) return {};
  if (auto why = s.absent.find(need); why != s.absent.end()) return why->second;
  const bool versioned = std::strstr(need, "versioned") != nullptr;
  if (versioned && s.legacy_only())
    return fmt::format("legacy-only subject (declares DLPack {}): no {}", s.version_text(), need);
  return fmt::format("the subject does not implement {}", need);
}

std::string pair_label(const Subject& p, const Subject& c) {
  return fmt::format("{} -> {}", p.info().name, c.info().name);
}

void call_deleter(DLManagedTensorVersioned* t) {
  if (t && t->deleter) t->deleter(t);
}
void call_deleter(DLManagedTensor* t) {
  if (t && t->deleter) t->deleter(t);
}

template <bool Versioned>
Route export_import_route(Subject& p, Subject& c) {
  using Managed = std::conditional_t<Versioned, DLManagedTensorVersioned, DLManagedTensor>;
  const char* v = Versioned ? "versioned" : "legacy";
  Route r;
  r.id = fmt::format("plugin.export_import_delete.{}", v);
  r.title = fmt::format("export ({}) a new float32[16], import it, release the array (the "
                        "consumer calls the deleter): {}", v, pair_label(p, c));
  r.subject = p.info().index;
  r.peer = c.info().index;
  r.unavailable = missing(p.info(), Versioned ? "export_versioned" : "export_legacy");
  if (r.unavailable.empty()) r.unavailable = missing(c.info(), Versioned ? "import_versioned" : "import_legacy");
  if (r.unavailable.empty()) r.unavailable = missing(c.info(), "release_array");
  auto t = std::make_shared<Tensor16>();
  auto err = std::make_shared<std::string>();
  r.op = [&p, &c, t, err]() {
    Managed* m = nullptr;
    int rc = Versioned ? p.export_versioned(t->req, reinterpret_cast<DLManagedTensorVersioned**>(&m))
                       : p.export_legacy(t->req, reinterpret_cast<DLManagedTensor**>(&m));
    if (rc != DLPV_OK || !m) {
      *err = fmt::format("export returned {}: {}", rc, p.last_error());
      return false;
    }
    void* array = nullptr;
    rc = Versioned ? c.import_versioned(reinterpret_cast<DLManagedTensorVersioned*>(m), &array)
                   : c.import_legacy(reinterpret_cast<DLManagedTensor*>(m), &array);
    if (rc != DLPV_OK) {
      call_deleter(m);  // ownership stayed with us
      *err = fmt::format("import returned {}: {}", rc, c.last_error());
      return false;
    }
    c.release_array(array);
    return true;
  };
  r.error = [err] { return *err; };
  return r;
}

template <bool Versioned>
Route export_route(Subject& p) {
  using Managed = std::conditional_t<Versioned, DLManagedTensorVersioned, DLManagedTensor>;
  const char* v = Versioned ? "versioned" : "legacy";
  Route r;
  r.id = fmt::format("plugin.export_delete.{}", v);
  r.title = fmt::format("export ({}) a new float32[16] and call its deleter (export alone)", v);
  r.subject = p.info().index;
  r.unavailable = missing(p.info(), Versioned ? "export_versioned" : "export_legacy");
  auto t = std::make_shared<Tensor16>();
  auto err = std::make_shared<std::string>();
  r.op = [&p, t, err]() {
    Managed* m = nullptr;
    const int rc = Versioned ? p.export_versioned(t->req, reinterpret_cast<DLManagedTensorVersioned**>(&m))
                             : p.export_legacy(t->req, reinterpret_cast<DLManagedTensor**>(&m));
    if (rc != DLPV_OK || !m) {
      *err = fmt::format("export returned {}: {}", rc, p.last_error());
      return false;
    }
    call_deleter(m);
    return true;
  };
  r.error = [err] { return *err; };
  return r;
}

/// The allocator of the C exchange API: the route a C/C++ consumer uses to get a tensor of
/// the library's kind without Python (the *_from_py_object routes need a Python object).
Route allocator_route(Subject& p) {
  Route r;
  r.id = "exchange_api.managed_tensor_allocator";
  r.title = "exchange API: managed_tensor_allocator(float32[16] prototype) + deleter";
  r.subject = p.info().index;
  r.unavailable = missing(p.info(), "exchange_api");
  const DLPackExchangeAPI* api = r.unavailable.empty() ? p.exchange_api() : nullptr;
  if (r.unavailable.empty() && !api) r.unavailable = "exchange_api() returned NULL";
  if (api && api->header.version.major != 1)
    r.unavailable = fmt::format("exchange API table of major version {} (this harness speaks 1)",
                                api->header.version.major);
  if (r.unavailable.empty() && !api->managed_tensor_allocator)
    r.unavailable = "the exchange API table has no managed_tensor_allocator";
  if (!r.unavailable.empty()) return r;
  struct State {
    int64_t shape[1] = {16};
    DLTensor proto{};
    std::string err;
  };
  auto st = std::make_shared<State>();
  st->proto.device = DLDevice{kDLCPU, 0};
  st->proto.ndim = 1;
  st->proto.dtype = DLDataType{kDLFloat, 32, 1};
  st->proto.shape = st->shape;
  r.op = [api, st]() {
    DLManagedTensorVersioned* out = nullptr;
    const int rc = api->managed_tensor_allocator(
        &st->proto, &out, st.get(), [](void* ctx, const char* kind, const char* message) {
          static_cast<State*>(ctx)->err = fmt::format("{}: {}", kind ? kind : "?", message ? message : "");
        });
    if (rc != 0 || !out) {
      if (st->err.empty()) st->err = fmt::format("managed_tensor_allocator returned {}", rc);
      return false;
    }
    call_deleter(out);
    return true;
  };
  r.error = [st] { return st->err; };
  return r;
}

std::vector<Route> plugin_routes(const std::vector<Subject*>& subjects) {
  std::vector<Route> out;
  for (Subject* p : subjects) {
    if (p->info().kind != "plugin") continue;
    for (Subject* c : subjects) {
      if (c->info().kind != "plugin") continue;
      out.push_back(export_import_route<true>(*p, *c));
      out.push_back(export_import_route<false>(*p, *c));
    }
    out.push_back(export_route<true>(*p));
    out.push_back(export_route<false>(*p));
    out.push_back(allocator_route(*p));
  }
  return out;
}

}  // namespace

void register_plugin_bench_routes() {
  static const bool once = (bench::register_provider(plugin_routes), true);
  (void)once;
}

}  // namespace dlpv
