// tandem::Error: the one exception type Tandem throws, and only from set-up paths.
// It carries a category (what kind of failure, for code to branch on), the VkResult (VK_SUCCESS
// when the failure was not a Vulkan call), what Tandem was doing, and a sentence telling the user
// what they can do about it. The per-frame path never throws; it returns status values instead
// (tandem/task.hpp, TaskError).
#pragma once

#include <stdexcept>
#include <string>

#include <vulkan/vulkan_core.h>

#include "tandem/export.hpp"

namespace tandem {

// What kind of failure an Error is. Built from a VkResult, the category follows it
// (VK_ERROR_DEVICE_LOST: DeviceLost; out of host or device memory: OutOfMemory; a missing layer,
// extension, feature, format or driver: Unsupported; any other: Vulkan). Without one it is
// Other unless the thrower names it: InvalidArgument for a refused argument (a TaskDesc, an
// option, a chain whose producer is no live task of the runtime, a calibration's job count).
enum class ErrorCategory {
    Other,           // not one of the below: a file that could not be opened or read
    InvalidArgument, // the call's argument was refused; the call changed nothing
    Unsupported,     // the device or driver lacks what was asked (layer, extension, feature)
    OutOfMemory,     // host or device memory ran out
    DeviceLost,      // a device was lost (VK_ERROR_DEVICE_LOST)
    Vulkan,          // another Vulkan call failed: result() says which result
};
// "other", "invalid argument", "unsupported", "out of memory", "device lost", "vulkan".
[[nodiscard]] TANDEM_API const char* to_string(ErrorCategory category) noexcept;
// The category of a failed Vulkan call's result (Other for VK_SUCCESS).
[[nodiscard]] TANDEM_API ErrorCategory category_of(VkResult result) noexcept;

class TANDEM_API Error : public std::runtime_error {
public:
    Error(VkResult result, std::string what_was_done, std::string what_to_do = {});
    explicit Error(std::string message, std::string what_to_do = {})
        : Error(VK_SUCCESS, std::move(message), std::move(what_to_do)) {}
    Error(ErrorCategory category, std::string message, std::string what_to_do = {})
        : Error(category, VK_SUCCESS, std::move(message), std::move(what_to_do)) {}
    // Every part given (a copy of a caught Error made afresh, say).
    Error(ErrorCategory category, VkResult result, std::string what_was_done,
          std::string what_to_do);

    [[nodiscard]] ErrorCategory category() const noexcept { return m_category; }

    [[nodiscard]] VkResult result() const noexcept { return m_result; }
    [[nodiscard]] const std::string& context() const noexcept { return m_context; }
    [[nodiscard]] const std::string& hint() const noexcept { return m_hint; }

private:
    ErrorCategory m_category;
    VkResult m_result;
    std::string m_context;
    std::string m_hint;
};

// Readable name of a VkResult ("VK_ERROR_DEVICE_LOST").
[[nodiscard]] TANDEM_API const char* to_string(VkResult result) noexcept;

} // namespace tandem
