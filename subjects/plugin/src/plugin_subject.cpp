// subjects/plugin/src/plugin_subject.cpp: a plugin .so as a subject. Loaded only in worker
// processes (the supervisor runs preflight_shared_object, which reads the file but never
// maps it for execution).
// SPDX-License-Identifier: Apache-2.0
#include <dlfcn.h>
#include <dlpack_validate/plugin_subject.hpp>
#include <dlpack_validate/tensor.hpp>
#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace dlpv {

std::string preflight_shared_object(const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0)
    return fmt::format("cannot open '{}': {}", path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return fmt::format("'{}' is a directory, not a shared library", path);
  if (!S_ISREG(st.st_mode)) return fmt::format("'{}' is not a regular file", path);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fmt::format("cannot open '{}': {}", path, std::strerror(errno));
  unsigned char ident[sizeof(Elf64_Ehdr)] = {};
  ssize_t got = read(fd, ident, sizeof ident);
  close(fd);
  if (got < static_cast<ssize_t>(EI_NIDENT) || std::memcmp(ident, ELFMAG, SELFMAG) != 0)
    return fmt::format("'{}' is not an ELF shared library", path);
  if (ident[EI_CLASS] != ELFCLASS64)
    return fmt::format("'{}' is a 32-bit ELF file; this validator is 64-bit", path);
  if (got < static_cast<ssize_t>(sizeof(Elf64_Ehdr)))
    return fmt::format("'{}' is a truncated ELF file", path);
  Elf64_Ehdr hdr;
  std::memcpy(&hdr, ident, sizeof hdr);
#if defined(__x86_64__)
  const uint16_t machine = EM_X86_64;
  const char* machine_name = "x86-64";
#elif defined(__aarch64__)
  const uint16_t machine = EM_AARCH64;
  const char* machine_name = "aarch64";
#else
  const uint16_t machine = hdr.e_machine;
  const char* machine_name = "this machine";
#endif
  if (hdr.e_machine != machine)
    return fmt::format("'{}' is built for another architecture (ELF machine {}), not {}", path,
                       hdr.e_machine, machine_name);
  if (hdr.e_type != ET_DYN)
    return fmt::format("'{}' is an ELF file but not a shared library (e_type {})", path, hdr.e_type);
  return {};
}

namespace {

class PluginSubject final : public Subject {
 public:
  PluginSubject(void* handle, const DLPVPlugin* table, SubjectInfo info, uint32_t understood)
      : handle_(handle), p_(table), info_(std::move(info)), understood_(understood) {}
  // The library stays loaded until exit: unloading GPU runtimes and libraries with TLS
  // destructors between cases is a crash source of its own.
  ~PluginSubject() override = default;

  const SubjectInfo& info() const override { return info_; }
  int export_versioned(const DLPVRequest& req, DLManagedTensorVersioned** out) override {
    if (!understands(req)) return DLPV_UNSUPPORTED;
    return p_->export_versioned(&req, out);
  }
  int export_legacy(const DLPVRequest& req, DLManagedTensor** out) override {
    if (!understands(req)) return DLPV_UNSUPPORTED;
    return p_->export_legacy(&req, out);
  }
  bool refused_by_validator() const override { return t_not_sent; }
  int import_versioned(DLManagedTensorVersioned* t, void** out) override {
    return p_->import_versioned(t, out);
  }
  int import_legacy(DLManagedTensor* t, void** out) override { return p_->import_legacy(t, out); }
  int read_array(void* a, void* dst, size_t n) override { return p_->read_array(a, dst, n); }
  int is_writable(void* a) override { return p_->is_writable ? p_->is_writable(a) : -1; }
  void release_array(void* a) override { p_->release_array(a); }
  const DLPackExchangeAPI* exchange_api() override {
    return p_->exchange_api ? p_->exchange_api() : nullptr;
  }
  std::string last_error() override {
    if (t_not_sent) return t_not_sent_why;
    const char* e = p_->last_error ? p_->last_error() : nullptr;
    return e ? std::string(e) : std::string("(no last_error)");
  }
  std::string image_path() const override { return info_.path; }

 private:
  /// A request with a bit the plugin does not declare (dlpv_request_flags) is not sent.
  bool understands(const DLPVRequest& req) {
    const uint32_t unknown = req.flags & ~understood_;
    t_not_sent = unknown != 0;
    if (t_not_sent)
      t_not_sent_why = fmt::format(
          "the request carries {} (bits {:#x}), which the plugin does not declare among the requests it "
          "understands (dlpv_request_flags, include/dlpack_validate/plugin.h), so it was not sent",
          (unknown & DLPV_REQ_NO_COPY)      ? "DLPV_REQ_NO_COPY (copy=False)"
          : (unknown & DLPV_REQ_EDGE_VALUES) ? "DLPV_REQ_EDGE_VALUES (the edge pattern)"
                                             : "a request bit",
          unknown);
    return !t_not_sent;
  }

  void* handle_;
  const DLPVPlugin* p_;
  SubjectInfo info_;
  uint32_t understood_;
  static thread_local bool t_not_sent;
  static thread_local std::string t_not_sent_why;
};

thread_local bool PluginSubject::t_not_sent = false;
thread_local std::string PluginSubject::t_not_sent_why;

}  // namespace

std::unique_ptr<Subject> load_plugin_subject(const std::string& path, int index) {
  char resolved[PATH_MAX];
  if (!realpath(path.c_str(), resolved))
    throw SubjectLoadError{fmt::format("cannot open '{}': {}", path, std::strerror(errno))};
  dlerror();
  load_step("dlopen");  // the library's constructors run in here
  void* handle = dlopen(resolved, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    throw SubjectLoadError{fmt::format("cannot load '{}': {}", path, e ? e : "dlopen failed")};
  }
  auto entry = reinterpret_cast<dlpv_get_plugin_fn>(dlsym(handle, DLPV_ENTRY_POINT));
  if (!entry)
    throw SubjectLoadError{fmt::format(
        "'{}' does not export {}(): not a dlpack-validate plugin (see include/dlpack_validate/"
        "plugin.h and docs/plugin.md)", path, DLPV_ENTRY_POINT)};
  load_step("entry");
  const DLPVPlugin* table = entry();
  if (!table) throw SubjectLoadError{fmt::format("'{}': {}() returned NULL", path, DLPV_ENTRY_POINT)};
  // The table comes from the library: read it defensively (abi_version first, since a table
  // of another ABI version may be shorter), then use only what was read.
  uint32_t abi = 0;
  if (!safe_read(&table->abi_version, &abi, sizeof abi))
    throw SubjectLoadError{fmt::format("'{}': {}() returned an unreadable pointer ({})", path,
                                       DLPV_ENTRY_POINT, static_cast<const void*>(table))};
  if (abi != DLPV_ABI_VERSION)
    throw SubjectLoadError{fmt::format("'{}': plugin ABI version {} is not supported (this "
                                       "validator speaks version {})",
                                       path, abi, DLPV_ABI_VERSION)};
  DLPVPlugin copy;
  if (!safe_read(table, &copy, sizeof copy))
    throw SubjectLoadError{fmt::format("'{}': the plugin table returned by {}() is not readable "
                                       "in full", path, DLPV_ENTRY_POINT)};
  if (!copy.name) throw SubjectLoadError{fmt::format("'{}': plugin table has no name", path)};
  std::string plugin_name;  // at most 256 bytes of it
  for (char c = 1; plugin_name.size() < 256;) {
    if (!safe_read(copy.name + plugin_name.size(), &c, 1))
      throw SubjectLoadError{fmt::format("'{}': the plugin table's name points to unreadable memory",
                                         path)};
    if (c == 0) break;
    plugin_name.push_back(c);
  }

  SubjectInfo info;
  info.index = index;
  info.kind = "plugin";
  info.path = resolved;
  info.name = plugin_name;
  info.dlpack_version = copy.dlpack_version;
  const std::pair<const char*, bool> caps[] = {
      {"export_versioned", table->export_versioned != nullptr},
      {"export_legacy", table->export_legacy != nullptr},
      {"import_versioned", table->import_versioned != nullptr},
      {"import_legacy", table->import_legacy != nullptr},
      {"read_array", table->read_array != nullptr},
      {"is_writable", table->is_writable != nullptr},
      {"release_array", table->release_array != nullptr},
      {"exchange_api", table->exchange_api != nullptr}};
  for (const auto& [name, present] : caps)
    if (present) info.capabilities.push_back(name);
  // The request's copy flags are part of plugin ABI 1 (an exporter that ignores them is judged);
  // bits added later only where the plugin declares them (dlpv_request_flags).
  if (table->export_versioned || table->export_legacy) info.capabilities.push_back("copy_keyword");
  uint32_t understood = DLPV_REQ_BASE;
  if (auto flags_fn = reinterpret_cast<dlpv_request_flags_fn>(dlsym(handle, DLPV_REQUEST_FLAGS_ENTRY_POINT))) {
    load_step("request_flags");
    understood |= flags_fn();
  }
  if (!(understood & DLPV_REQ_NO_COPY))
    info.notes.push_back("declares no DLPV_REQ_NO_COPY (dlpv_request_flags): copy=False is never asked of it, and "
                         "its copy=False cases are skips");
  if ((table->export_versioned || table->export_legacy) && !(understood & DLPV_REQ_EDGE_VALUES))
    info.notes.push_back("declares no DLPV_REQ_EDGE_VALUES (dlpv_request_flags): its exports are never asked for "
                         "the edge pattern, and producer.input's edge-value cases are skips");
  if (info.legacy_only())
    info.notes.push_back(fmt::format(
        "declares DLPack {}: a legacy-only implementation (no versioned struct, no flags); "
        "versioned cases are skipped, not failed", info.version_text()));
  else
    info.notes.push_back("declares DLPack " + info.version_text());
  return std::make_unique<PluginSubject>(handle, table, std::move(info), understood);
}

}  // namespace dlpv
