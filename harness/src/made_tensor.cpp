// harness/src/made_tensor.cpp: tensors the validator builds to feed a consumer, with a
// counting deleter that poisons the struct (so a consumer touching it after delete lands
// on a guard page) and an optional guard page right after the version prefix (VER-03).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/cuda.hpp>
#include <dlpack_validate/tensor.hpp>
#include <fmt/format.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

namespace dlpv {

namespace {
// The MadeTensors alive now. A consumer may call a deleter after the case that made the tensor
// is over (a leaked array collected later); the deleter then finds its MadeTensor gone and
// must not write anywhere (poisoning freed memory would corrupt whatever lives there now).
std::mutex& live_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}
std::set<const MadeTensor*>& live() {
  static auto* s = new std::set<const MadeTensor*>;
  return *s;
}
bool alive(const MadeTensor* m) {
  std::lock_guard<std::mutex> lock(live_mutex());
  return live().count(m) != 0;
}
}  // namespace

size_t heap_in_use() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

void* guard_address() {
  static void* page = [] {
    void* p = mmap(nullptr, static_cast<size_t>(sysconf(_SC_PAGESIZE)), PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }();
  return page ? static_cast<char*>(page) + 64 : nullptr;
}

std::unique_ptr<MadeTensor> MadeTensor::make(const MadeSpec& spec, bool versioned) {
  std::unique_ptr<MadeTensor> m(new MadeTensor());
  {
    std::lock_guard<std::mutex> lock(live_mutex());
    live().insert(m.get());
  }
  m->spec_ = spec;
  m->shape_ = spec.shape;
  const size_t es = element_bytes(spec.dtype);
  const int64_t n = element_count(spec.shape);
  m->strides_ = canonical_strides(spec.layout, spec.shape);
  if (!spec.strides.empty()) {
    if (n != 0 || spec.strides.size() != spec.shape.size()) return nullptr;
    m->strides_ = spec.strides;
  }
  m->expected_ = expected_bytes(spec.dtype, spec.shape, spec.layout, spec.values);

  // Physical buffer: [pad of extra_byte_offset bytes][span addressed by the strides].
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < spec.shape.size(); ++i) {
    int64_t reach = (spec.shape[i] > 0 ? spec.shape[i] - 1 : 0) * m->strides_[i];
    (reach < 0 ? lo : hi) += reach;
  }
  const size_t span = n > 0 ? (es ? static_cast<size_t>(hi - lo + 1) * es : m->expected_.size()) : 0;
  // Start the storage on a 256-byte boundary (the alignment dlpack.h asks of `data`; plus the
  // requested misalignment), 0xA5 filler. A fixed alignment also makes consumers that copy
  // unaligned data (JAX) take the same path on every run.
  constexpr size_t kAlign = 256;
  m->buffer_.assign(kAlign + spec.extra_byte_offset + spec.misalign + span + static_cast<size_t>(n > 0 ? n : 0) + 24,
                    0xA5);
  const size_t head = (kAlign - reinterpret_cast<uintptr_t>(m->buffer_.data()) % kAlign) % kAlign;
  uint8_t* elem0 = m->buffer_.data() + head + spec.extra_byte_offset + spec.misalign +
                   static_cast<size_t>(-lo) * (es ? es : 1);
  if (n > 0) {
    if (es == 0 && spec.padded_subbyte) {
      // Padded: element i in the low bits of byte i (the padding unit is not specified, A14).
      for (int64_t i = 0; i < n; ++i) {
        unsigned v = 0;
        for (unsigned b = 0; b < spec.dtype.bits; ++b) {
          const size_t bit = static_cast<size_t>(i) * spec.dtype.bits + b;
          v |= ((m->expected_[bit / 8] >> (bit % 8)) & 1u) << b;
        }
        elem0[i] = static_cast<uint8_t>(v);
      }
    } else if (es == 0) {
      std::memcpy(elem0, m->expected_.data(), m->expected_.size());
    } else {
      std::vector<int64_t> idx(spec.shape.size(), 0);
      for (int64_t k = 0; k < n; ++k) {
        int64_t off = 0;
        for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * m->strides_[i];
        std::memcpy(elem0 + off * static_cast<int64_t>(es), m->expected_.data() + static_cast<size_t>(k) * es, es);
        for (size_t i = idx.size(); i-- > 0;) {
          if (++idx[i] < spec.shape[i]) break;
          idx[i] = 0;
        }
      }
    }
  }

  DLTensor t{};
  if (spec.extra_byte_offset > 0) {
    t.data = m->buffer_.data() + head;
    t.byte_offset = static_cast<uint64_t>(elem0 - (m->buffer_.data() + head));
  } else {
    t.data = elem0;
    t.byte_offset = 0;
  }
  if (spec.device_memory && !spec.null_data) {
    // The same bytes in real CUDA memory, from the 256-byte boundary on, so the device data
    // has the host data's alignment (CUDA allocations start on at least 256 bytes).
    const int kind = static_cast<int>(spec.device.device_type);
    m->device_head_ = head;
    const size_t size = m->buffer_.size() - head;
    m->device_buffer_ = cuda::allocate(kind, spec.device.device_id, size);
    if (!m->device_buffer_ || !cuda::copy_to_device(m->device_buffer_, m->buffer_.data() + head, size))
      return nullptr;
    t.data = static_cast<uint8_t*>(m->device_buffer_) + (static_cast<uint8_t*>(t.data) - (m->buffer_.data() + head));
  }
  if ((spec.flags & DLPACK_FLAG_BITMASK_READ_ONLY) && !spec.device_memory && !spec.null_data && n > 0) {
    // READ_ONLY: the consumer may read the data, never write it (dlpack.h: the flag says "the
    // tensor is read only"). The bytes move to pages of their own that are then made
    // read-only, so a consumer that writes any value there faults in the phase it wrote in;
    // buffer_ keeps the bytes as made, to compare with.
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t size = m->buffer_.size() - head;
    m->ro_size_ = (size + page - 1) / page * page;
    void* block = mmap(nullptr, m->ro_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) return nullptr;
    std::memcpy(block, m->buffer_.data() + head, size);
    mprotect(block, m->ro_size_, PROT_READ);
    m->ro_block_ = block;
    m->ro_head_ = head;
    t.data = static_cast<uint8_t*>(block) + (static_cast<uint8_t*>(t.data) - (m->buffer_.data() + head));
  }
  if (spec.null_data) t.data = nullptr;
  t.device = spec.device;
  t.ndim = static_cast<int32_t>(spec.shape.size());
  t.dtype = spec.dtype;
  t.shape = spec.null_shape ? nullptr : m->shape_.data();
  t.strides = spec.null_strides ? nullptr : m->strides_.data();

  if (versioned) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    if (spec.guard_after_prefix) {
      // Two pages; the second is PROT_NONE and dl_tensor (offset 32) starts exactly there,
      // so reading anything past the fixed prefix faults.
      void* block = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (block == MAP_FAILED) return nullptr;
      mprotect(static_cast<char*>(block) + page, page, PROT_NONE);
      m->struct_block_ = block;
      m->struct_block_size_ = 2 * page;
      m->struct_mmapped_ = true;
      m->versioned_ = reinterpret_cast<DLManagedTensorVersioned*>(
          static_cast<char*>(block) + page - offsetof(DLManagedTensorVersioned, dl_tensor));
    } else {
      m->struct_block_ = std::calloc(1, sizeof(DLManagedTensorVersioned));
      m->versioned_ = static_cast<DLManagedTensorVersioned*>(m->struct_block_);
      m->versioned_->dl_tensor = t;
    }
    m->versioned_->version = spec.version;
    m->versioned_->manager_ctx = m.get();
    m->versioned_->flags = spec.flags;
    m->versioned_->deleter = spec.deleter == DeleterKind::null ? nullptr : &MadeTensor::versioned_deleter;
  } else {
    m->struct_block_ = std::calloc(1, sizeof(DLManagedTensor));
    m->legacy_ = static_cast<DLManagedTensor*>(m->struct_block_);
    m->legacy_->dl_tensor = t;
    m->legacy_->manager_ctx = m.get();
    m->legacy_->deleter = spec.deleter == DeleterKind::null ? nullptr : &MadeTensor::legacy_deleter;
  }
  return m;
}

MadeTensor::~MadeTensor() {
  {
    std::lock_guard<std::mutex> lock(live_mutex());
    live().erase(this);
  }
  if (device_buffer_) cuda::release(static_cast<int>(spec_.device.device_type), device_buffer_);
  if (ro_block_) munmap(ro_block_, ro_size_);
  if (struct_mmapped_) munmap(struct_block_, struct_block_size_);
  else std::free(struct_block_);
}

void MadeTensor::poison() {
  // After the deleter the data and the struct are dead. The data is overwritten with 0xDB, so a
  // consumer that still reads the tensor's memory sees garbage, never the pattern (one that
  // copied before releasing still reads its copy); the struct's pointers go to a guard page,
  // and a second deleter call reaches a function that only counts.
  if (ro_block_) ro_written_at_delete_ = ro_bytes_changed();  // before the bytes are poisoned
  std::memset(buffer_.data(), 0xDB, buffer_.size());
  if (ro_block_) {
    mprotect(ro_block_, ro_size_, PROT_READ | PROT_WRITE);
    std::memset(ro_block_, 0xDB, ro_size_);
  }
  if (device_buffer_ && cuda::use_device(spec_.device.device_id))
    cuda::copy_to_device(device_buffer_, buffer_.data() + device_head_, buffer_.size() - device_head_);
  void* g = guard_address();
  if (versioned_) {
    versioned_->deleter = &MadeTensor::poisoned_versioned_deleter;
    if (!spec_.guard_after_prefix) {
      versioned_->dl_tensor.data = g;
      versioned_->dl_tensor.shape = static_cast<int64_t*>(g);
      versioned_->dl_tensor.strides = static_cast<int64_t*>(g);
    }
  } else {
    legacy_->deleter = &MadeTensor::poisoned_legacy_deleter;
    legacy_->dl_tensor.data = g;
    legacy_->dl_tensor.shape = static_cast<int64_t*>(g);
    legacy_->dl_tensor.strides = static_cast<int64_t*>(g);
  }
}

bool MadeTensor::read_only_data_written() const {
  if (!ro_block_) return false;
  return deleter_calls_.load() > 0 ? ro_written_at_delete_ : ro_bytes_changed();
}

bool MadeTensor::ro_bytes_changed() const {
  return std::memcmp(ro_block_, buffer_.data() + ro_head_, buffer_.size() - ro_head_) != 0;
}

void MadeTensor::versioned_deleter(DLManagedTensorVersioned* self) {
  auto* m = static_cast<MadeTensor*>(self->manager_ctx);
  if (alive(m) && m->deleter_calls_++ == 0) m->poison();
}
void MadeTensor::legacy_deleter(DLManagedTensor* self) {
  auto* m = static_cast<MadeTensor*>(self->manager_ctx);
  if (alive(m) && m->deleter_calls_++ == 0) m->poison();
}
void MadeTensor::poisoned_versioned_deleter(DLManagedTensorVersioned* self) {
  auto* m = static_cast<MadeTensor*>(self->manager_ctx);
  if (alive(m)) m->deleter_calls_++;
}
void MadeTensor::poisoned_legacy_deleter(DLManagedTensor* self) {
  auto* m = static_cast<MadeTensor*>(self->manager_ctx);
  if (alive(m)) m->deleter_calls_++;
}

CaseContext::DeathMeaning guard_meaning(const MadeSpec& spec, bool versioned) {
  if (!spec.guard_after_prefix || !versioned) return {};
  const std::string stamp = fmt::format("{}.{}", spec.version.major, spec.version.minor);
  return {fmt::format("a refusal that reads no more than the first 32 bytes of the DLManagedTensorVersioned "
                      "stamped {} (version, manager_ctx, deleter, flags)", stamp),
          fmt::format("a read of its dl_tensor (byte 32 on) of a tensor stamped {}", stamp),
          fmt::format("the library read the struct of a tensor stamped {}, which it must refuse unread (VER-03: \"It "
                      "is not safe to access any other fields as the memory layout will have changed\"); the "
                      "validator put dl_tensor on a PROT_NONE guard page so that such a read faults here, where it "
                      "can be seen (in real use it would read whatever lies there)",
                      stamp)};
}

}  // namespace dlpv
