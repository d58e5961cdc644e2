// cases/support/consumer_flow.hpp: the shared consumer round trip: validator-made tensor
// -> import -> read back -> release, with deleter accounting at every step (DEL-02/08).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "helpers.hpp"

namespace dlpv::cases {

enum class Refusal {
  fails,   ///< the consumer must accept this tensor: a refusal violates `requirement`
  allowed, ///< a clean refusal is a legal answer (only misreading is a violation)
  warns,   ///< a clean refusal breaks no MUST but costs interoperability: a warning
  skips    ///< a clean refusal means the consumer lacks the feature: a reasoned skip
};

/// Run the round trip for `spec`; `requirement` is what the read-back checks.
void consumer_roundtrip(CaseContext& ctx, const MadeSpec& spec, bool versioned,
                        const char* requirement, Refusal refusal, const std::string& what);

/// A 3x4 tensor of the case's dtype and layout, imported, read back and released; what the
/// read-back judges is the case's first requirement (LAYOUT-01 where that is DEL-02). Refusing
/// float32 or int64 compact arrays fails; refusing a strided layout cleanly is lawful; other
/// dtypes are optional (a skip). consumer.roundtrip.* and consumer.layout.*.
void dtype_layout_roundtrip(CaseContext& ctx);

/// Right after an import: the deleter calls the consumer made already (0, or 1 for a consumer
/// that copied the data and released the tensor at once, which is lawful and noted; more fail
/// DEL-02). The tensor's memory is poisoned by the deleter, so a read-back that still matches
/// shows a copy.
int released_at_import(CaseContext& ctx, const MadeTensor& made);

/// Release an imported array and check that this ran the tensor's deleter exactly once (DEL-02).
void release_expecting_one_delete(CaseContext& ctx, void* array, const MadeTensor& made);

/// After an import the consumer refused: whoever owns the tensor now releases it exactly once
/// (DEL-08; for another major, VER-03). dlpack.h: "the consumer must call the deleter (and it
/// is safe to do so)" for a major it does not know; the plugin ABI lets a refusing importer
/// call it once itself or leave it to the caller. The validator counts the consumer's calls,
/// calls the deleter itself when the consumer did not (its own cleanup), and fails a total
/// other than one.
void judge_refusal_ownership(CaseContext& ctx, MadeTensor& made, const std::string& what);

/// A refusal (rc other than DLPV_OK) of the rule's own kind passes, any other kind warns:
/// ERR-07 (LAYOUT-11 where `requirement` is LAYOUT-11) at SHOULD, with what the consumer said.
void judge_refusal_kind(CaseContext& ctx, int rc, const std::string& requirement, const std::string& what);

/// Whether the consumer takes 0-d tensors at all: a 0-d float32 tensor whose shape and strides
/// pointers are set (not NULL) is imported and released (DEL-02 judged), or refused (its
/// ownership judged, DEL-08). "" when imported, else the refusal ("RC: last_error"). A consumer
/// whose arrays have no 0-d form (Awkward Array) refuses it; one that only rejects NULL shape
/// pointers takes it.
std::string refuses_plain_scalar(CaseContext& ctx, bool versioned);

/// Whether the consumer takes the plain form of `spec` at all: the same dtype, shape and device,
/// compact, with no byte_offset. "" when it imports it (released, DEL-02 judged), else its
/// refusal ("RC: last_error"; ownership judged, DEL-08). A refusal that a rule only warns on
/// (byte_offset) is about that rule only when the plain tensor is taken: dpnp 0.15 refuses every
/// host tensor, with or without byte_offset (a device matter, not LAYOUT-08's).
std::string refuses_plain_form(CaseContext& ctx, const MadeSpec& spec, bool versioned);

/// The consumer must refuse this tensor (unknown dtype, foreign device ...): a clean refusal
/// that releases the tensor exactly once (judge_refusal_ownership) passes; an import violates
/// `requirement` (the array is then released, with the usual deleter accounting).
void consumer_must_refuse(CaseContext& ctx, const MadeSpec& spec, bool versioned,
                          const char* requirement, const std::string& what);

}  // namespace dlpv::cases
