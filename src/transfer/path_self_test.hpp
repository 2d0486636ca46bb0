// Path self-test: before a transfer path carries a pair's first task, a small known image moves
// through a TransferLink on that path and is checked byte for byte on the primary, so a path that
// cannot move a frame correctly on this machine (an import that fails, a driver that corrupts
// shared memory) is found before an application's output depends on it. choose_tested_path() is
// the policy around it: negotiate the best path PathHealth still allows for the pair, self-test it
// when it is untested, drop it with the reason when it fails, and try the next.
//
// The known image (self_test_byte) gives every byte of every texel a value that tells its row,
// column and byte within the texel apart: a shifted row, a transposed band or swapped channels
// fail the check as surely as garbage.
//
// Threads: blocking (waits for its own batches on both devices, bounded): the runtime calls it on
// its preparation thread, never on the application's. What a self-test made goes to the
// `retire` list when one is given (the runtime's: freed once the GPU passed it, nothing settled),
// else both devices are settled before it is destroyed. Every Vulkan result it checks goes through
// vk_status with the context "path self-test <path>: <step>", so tests can fail one path's
// self-test by name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "sync/retire_list.hpp"
#include "tandem/device_info.hpp"
#include "transfer/path_health.hpp"
#include "transfer/staging_copier.hpp"

namespace tandem::detail {

inline constexpr std::uint32_t k_self_test_width = 37; // odd sizes: rows need padding in staging
inline constexpr std::uint32_t k_self_test_height = 11;

struct SelfTestResult {
    bool ok = false;
    std::string reason; // why it failed, one sentence: the step and its VkResult, or the byte
};

// Byte `byte` (0 .. texel size - 1) of texel (x, y) of the known image.
[[nodiscard]] constexpr std::uint8_t self_test_byte(std::uint32_t x, std::uint32_t y,
                                                    std::uint32_t byte) noexcept {
    // Steps of 3, 53 and 89 modulo the prime 251: a neighbour along any axis differs.
    return static_cast<std::uint8_t>((x * 3u + y * 53u + byte * 89u + 17u) % 251u);
}

// The prefix of every context the self-test of `path` checks its Vulkan results under.
[[nodiscard]] std::string self_test_context(TransferPath path);

// Moves the known image in `format` from `worker` to `primary` (one Device for SameDevice)
// through a TransferLink forced to `path`, reads it back on the primary and compares every byte.
// Never throws: a failed set-up is a failed self-test. Leaves no work of its own in flight, or
// hands what may still be in flight to `retire`.
// `cuda_copier`: what the cuda-peer path copies with (TransferDesc::cuda_copier; empty: CUDA).
[[nodiscard]] SelfTestResult self_test_path(const Device& worker, const Device& primary,
                                            const PairInfo& pair, TransferPath path,
                                            VkFormat format,
                                            const StagingCopierFactory& cuda_copier = {},
                                            RetireList* retire = nullptr) noexcept;

// The path a link of `format` between `worker` and `primary` should take: `forced` when given,
// else the best of health.restrict(pair) (zero copy passed over, not dropped, when the worker
// cannot export `format`, as TransferLink does), self-tested first when untested. A path that
// fails its self-test is dropped in `health` and the next one tried. Throws Error when no path is
// left (quoting why each was dropped), or when `forced` is unavailable or dropped (its reason).
[[nodiscard]] TransferPath
choose_tested_path(const Device& worker, const Device& primary, const PairInfo& pair,
                   std::optional<TransferPath> forced, VkFormat format, PathHealth& health,
                   const StagingCopierFactory& cuda_copier = {}, RetireList* retire = nullptr);

// Test hook: the next `count` self-tests of `path` send the known image with one byte altered
// (byte 0 of texel (5, 3) inverted), as a path that corrupts what it moves would deliver it.
void inject_self_test_corruption(TransferPath path, int count = 1);
void clear_self_test_corruption() noexcept;

} // namespace tandem::detail
