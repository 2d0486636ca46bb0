// tandem::Error: the one exception type Tandem throws, and only from set-up paths.
// It carries the VkResult (VK_SUCCESS when the failure was not a Vulkan call), what Tandem was
// doing, and a sentence telling the user what they can do about it. The per-frame path never
// throws; it returns status values instead.
#pragma once

#include <stdexcept>
#include <string>

#include <vulkan/vulkan_core.h>

#include "tandem/export.hpp"

namespace tandem {

class TANDEM_API Error : public std::runtime_error {
public:
    Error(VkResult result, std::string what_was_done, std::string what_to_do = {});
    explicit Error(std::string message, std::string what_to_do = {})
        : Error(VK_SUCCESS, std::move(message), std::move(what_to_do)) {}

    [[nodiscard]] VkResult result() const noexcept { return m_result; }
    [[nodiscard]] const std::string& context() const noexcept { return m_context; }
    [[nodiscard]] const std::string& hint() const noexcept { return m_hint; }

private:
    VkResult m_result;
    std::string m_context;
    std::string m_hint;
};

// Readable name of a VkResult ("VK_ERROR_DEVICE_LOST").
[[nodiscard]] TANDEM_API const char* to_string(VkResult result) noexcept;

} // namespace tandem
