// The one place every Vulkan result goes through. vk_check() throws tandem::Error for set-up
// paths; vk_status() returns the result for the per-frame path, which never throws. Both consult
// a fault-injection hook so tests can make a chosen call fail on demand.
#pragma once

#include <atomic>
#include <string_view>

#include <vulkan/vulkan_core.h>

namespace tandem::detail {

// Fault injection for tests: the next `count` checked calls whose context contains `match`
// report `result` instead of what the driver returned. Thread-safe; off by default.
void inject_vk_fault(std::string_view match, VkResult result, int count = 1);
void clear_vk_faults();
// TANDEM_FAULT_WORKER_LOST=N (tandem/runtime.hpp): from the first call on, every worker job
// submission after the first N reports VK_ERROR_DEVICE_LOST. Each runtime calls it as it opens;
// throws Error when the variable is not a whole number.
void inject_vk_faults_from_env();

// Returns `result`, or an injected fault for `context`.
[[nodiscard]] VkResult vk_status(VkResult result, std::string_view context) noexcept;

// Throws tandem::Error when `result` (or an injected fault) is not VK_SUCCESS.
// `hint` is what the user can do about it; empty picks a generic hint for the result.
void vk_check(VkResult result, std::string_view context, std::string_view hint = {});

} // namespace tandem::detail
