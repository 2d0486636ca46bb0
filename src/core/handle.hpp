// Handle<T>: a move-only owner of one Vulkan handle. Destruction goes through a deleter bound at
// construction, so user code never calls vkDestroy*. Objects that a GPU may still use are not
// destroyed here directly: their owners hand them to a DeferredDeleter (see device.hpp) first.
#pragma once

#include <functional>
#include <utility>

#include <vulkan/vulkan_core.h>

namespace tandem::detail {

template <typename T>
class Handle {
public:
    using Deleter = std::function<void(T)>;

    Handle() = default;
    Handle(T handle, Deleter deleter) : m_handle(handle), m_deleter(std::move(deleter)) {}
    ~Handle() { reset(); }

    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    Handle(Handle&& other) noexcept
        : m_handle(std::exchange(other.m_handle, VK_NULL_HANDLE)),
          m_deleter(std::move(other.m_deleter)) {}
    Handle& operator=(Handle&& other) noexcept {
        if (this != &other) {
            reset();
            m_handle = std::exchange(other.m_handle, VK_NULL_HANDLE);
            m_deleter = std::move(other.m_deleter);
        }
        return *this;
    }

    [[nodiscard]] T get() const noexcept { return m_handle; }
    [[nodiscard]] explicit operator bool() const noexcept { return m_handle != VK_NULL_HANDLE; }

    // Gives up ownership without destroying.
    [[nodiscard]] T release() noexcept { return std::exchange(m_handle, VK_NULL_HANDLE); }

    void reset() noexcept {
        if (m_handle != VK_NULL_HANDLE && m_deleter) {
            m_deleter(m_handle);
        }
        m_handle = VK_NULL_HANDLE;
    }

private:
    T m_handle = VK_NULL_HANDLE;
    Deleter m_deleter;
};

} // namespace tandem::detail
