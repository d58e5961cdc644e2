// harness/src/deleter_counter.cpp: counting a library's own deleter (see tensor.hpp). The
// managed struct keeps its manager_ctx; only the deleter pointer is swapped for a trampoline,
// which finds the original again by the struct's address, counts every call, and forwards the
// first one only (a second call must never reach the library: that would be a double free).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/tensor.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>

namespace dlpv {

namespace {
struct Slot {
  void (*versioned)(DLManagedTensorVersioned*) = nullptr;
  void (*legacy)(DLManagedTensor*) = nullptr;
  int calls = 0;
};
std::mutex& slots_mutex() {
  static auto* m = new std::mutex;  // never destroyed: a deleter may run during exit
  return *m;
}
std::map<const void*, Slot>& slots() {
  static auto* s = new std::map<const void*, Slot>;
  return *s;
}

template <class M>
void trampoline(M* self) {
  Slot forward;
  {
    std::lock_guard<std::mutex> lock(slots_mutex());
    auto it = slots().find(self);
    if (it == slots().end()) return;
    if (++it->second.calls > 1) return;
    forward = it->second;
  }
  if constexpr (std::is_same_v<M, DLManagedTensorVersioned>) forward.versioned(self);
  else forward.legacy(self);
}
}  // namespace

DeleterCounter::DeleterCounter(void* managed, bool versioned) : key_(managed) {
  if (!managed) return;
  std::lock_guard<std::mutex> lock(slots_mutex());
  Slot s;
  if (versioned) {
    auto* v = static_cast<DLManagedTensorVersioned*>(managed);
    if (!v->deleter) return;
    s.versioned = v->deleter;
    v->deleter = &trampoline<DLManagedTensorVersioned>;
  } else {
    auto* l = static_cast<DLManagedTensor*>(managed);
    if (!l->deleter) return;
    s.legacy = l->deleter;
    l->deleter = &trampoline<DLManagedTensor>;
  }
  slots()[managed] = s;
  installed_ = true;
}

DeleterCounter::~DeleterCounter() {
  if (!installed_) return;
  // The entry stays while the tensor may still be deleted (a leaked tensor, deleted later):
  // only a tensor whose deleter ran is forgotten.
  std::lock_guard<std::mutex> lock(slots_mutex());
  auto it = slots().find(key_);
  if (it != slots().end() && it->second.calls > 0) slots().erase(it);
}

int await_calls(const std::function<int()>& calls, int want, int max_ms) {
  int n = calls();
  for (int waited = 0; n < want && waited < max_ms; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = calls();
  }
  return n;
}

int DeleterCounter::calls() const {
  if (!installed_) return 0;
  std::lock_guard<std::mutex> lock(slots_mutex());
  auto it = slots().find(key_);
  return it == slots().end() ? 0 : it->second.calls;
}

}  // namespace dlpv
