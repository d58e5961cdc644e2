// tests/unit/idle_subject.hpp: a subject that answers every call with a refusal, for unit tests
// of what happens inside a case (verdicts, typed parameters) without a library.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/subject.hpp>

#include <string>

struct IdleSubject : dlpv::Subject {
  dlpv::SubjectInfo i;
  const dlpv::SubjectInfo& info() const override { return i; }
  int export_versioned(const DLPVRequest&, DLManagedTensorVersioned**) override { return 1; }
  int export_legacy(const DLPVRequest&, DLManagedTensor**) override { return 1; }
  int import_versioned(DLManagedTensorVersioned*, void**) override { return 1; }
  int import_legacy(DLManagedTensor*, void**) override { return 1; }
  int read_array(void*, void*, size_t) override { return 1; }
  int is_writable(void*) override { return -1; }
  void release_array(void*) override {}
  const DLPackExchangeAPI* exchange_api() override { return nullptr; }
  std::string last_error() override { return {}; }
  std::string image_path() const override { return {}; }
};
