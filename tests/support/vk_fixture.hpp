// VulkanTest: a GoogleTest fixture with a real Vulkan instance (validation on: synchronisation
// validation unless TANDEM_VALIDATION says otherwise) and adapters opened `virtual_devices()`
// times per physical device. Any validation message during the test fails it.
#pragma once

#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "core/device.hpp"
#include "core/discovery.hpp"
#include "core/instance.hpp"

namespace tandem::test {

class VulkanTest : public ::testing::Test {
protected:
    // Logical devices to open on each physical device; override for more.
    [[nodiscard]] virtual std::uint32_t virtual_devices() const { return 2; }

    void SetUp() override {
        detail::InstanceOptions options;
        options.application_name = "tandem-tests";
        options.validation = detail::validation_from_env(detail::Validation::Sync);
        m_instance = std::make_unique<detail::Instance>(options);
        m_adapters = detail::discover_adapters(*m_instance, virtual_devices());
    }

    void TearDown() override {
        m_devices.clear();
        if (m_instance) {
            EXPECT_EQ(m_instance->validation_messages(), 0u)
                << "validation reported: " << m_instance->last_validation_message();
        }
        m_instance.reset();
    }

    [[nodiscard]] detail::Instance& instance() { return *m_instance; }
    [[nodiscard]] std::vector<detail::Adapter>& adapters() { return m_adapters; }

    // Opens adapter `index` as a logical device owned by the fixture.
    detail::Device& open(std::uint32_t index, detail::DeviceOptions options = {}) {
        if (options.label.empty()) {
            options.label = "adapter" + std::to_string(index);
        }
        m_devices.push_back(
            std::make_unique<detail::Device>(*m_instance, m_adapters.at(index), options));
        return *m_devices.back();
    }

private:
    std::unique_ptr<detail::Instance> m_instance;
    std::vector<detail::Adapter> m_adapters;
    std::vector<std::unique_ptr<detail::Device>> m_devices;
};

} // namespace tandem::test
