// subjects/plugin/include/dlpack_validate/plugin_subject.hpp: a plugin library (the C ABI of
// include/dlpack_validate/plugin.h) as a Subject, loaded with dlopen in a worker.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/subject.hpp>

#include <memory>
#include <string>

namespace dlpv {

/// Load a plugin with dlopen(RTLD_NOW | RTLD_LOCAL) and check its table (ABI version, name).
std::unique_ptr<Subject> load_plugin_subject(const std::string& path, int index);

/// Checks a path before anything loads it: exists, regular file, ELF, 64-bit, this
/// machine's architecture. Returns an empty string when fine, else the one-line reason.
std::string preflight_shared_object(const std::string& path);

/// Adds the plugin routes (export -> import -> delete, export alone, the allocator) to the
/// bench's timing loop; once per process, before bench::measure.
void register_plugin_bench_routes();

}  // namespace dlpv
