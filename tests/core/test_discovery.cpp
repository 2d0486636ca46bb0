#include <algorithm>
#include <set>

#include "core/device.hpp"
#include "core/discovery.hpp"
#include "tandem/error.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

class Discovery : public VulkanTest {
protected:
    std::uint32_t virtual_devices() const override { return 3; }
};

TEST_F(Discovery, FindsEveryPhysicalDeviceOncePerVirtualOpening) {
    const auto physicals = instance().physical_devices();
    ASSERT_FALSE(physicals.empty());
    ASSERT_EQ(adapters().size(), physicals.size() * 3);
    for (std::uint32_t i = 0; i < adapters().size(); ++i) {
        EXPECT_EQ(adapters()[i].info.index, i);
        EXPECT_EQ(adapters()[i].info.virtual_index, i % 3);
        EXPECT_EQ(adapters()[i].info.physical_index, i / 3);
    }
}

TEST_F(Discovery, ReportsTheCapabilitiesTandemNeeds) {
    const auto& info = adapters().front().info;
    EXPECT_FALSE(info.name.empty());
    EXPECT_FALSE(info.driver_name.empty());
    EXPECT_TRUE(info.features.timeline_semaphore);
    EXPECT_TRUE(info.features.synchronization2);
    EXPECT_TRUE(info.features.dynamic_rendering);
    EXPECT_FALSE(info.queue_families.empty());
    EXPECT_FALSE(info.memory_heaps.empty());
    EXPECT_EQ(info.formats.size(), 5u);
    EXPECT_TRUE(info.formats.front().transfer_src);
    EXPECT_NE(info.device_uuid, Uuid{});
}

TEST_F(Discovery, VirtualDevicesAreDistinctLogicalDevices) {
    auto& a = open(0);
    auto& b = open(1);
    auto& c = open(2);
    std::set<VkDevice> handles = {a.handle(), b.handle(), c.handle()};
    EXPECT_EQ(handles.size(), 3u);
    EXPECT_EQ(a.physical(), b.physical());
    EXPECT_NE(a.queue(detail::QueueRole::Main).handle(), b.queue(detail::QueueRole::Main).handle());
}

TEST_F(Discovery, SelectsByIndexNameAndUuid) {
    auto& list = adapters();
    EXPECT_EQ(detail::match_adapters(list, "2"), std::vector<std::uint32_t>{2});
    const std::string name = list.front().info.name;
    const auto same_name =
        std::count_if(list.begin(), list.end(), [&](const auto& a) { return a.info.name == name; });
    EXPECT_EQ(detail::match_adapters(list, name.substr(0, 4)).size(),
              static_cast<std::size_t>(same_name));
    const std::string uuid = tandem::to_string(list.front().info.device_uuid);
    EXPECT_EQ(detail::match_adapters(list, uuid).front(), 0u);
    EXPECT_EQ(detail::match_adapters(list, uuid.substr(0, 8)).front(), 0u);
}

TEST_F(Discovery, ASelectorThatMatchesNothingSaysSo) {
    try {
        (void)detail::match_adapters(adapters(), "no-such-gpu");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("No device matches 'no-such-gpu'"), std::string::npos);
        EXPECT_EQ(e.category(), ErrorCategory::InvalidArgument);
    }
    // A selector the user typed is refused as an argument, whatever is wrong with it.
    for (const char* selector : {"99", ""}) {
        try {
            (void)detail::match_adapters(adapters(), selector);
            ADD_FAILURE() << "'" << selector << "' was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.category(), ErrorCategory::InvalidArgument) << e.what();
        }
    }
}

// Selectors that survive a reboot: the PCI address (in any of the forms lspci prints) and the
// vendor:device ids. Plain adapters, so that every form is tested whatever the machine has.
TEST(AdapterSelection, SelectsByPciAddressAndVendorDevice) {
    std::vector<detail::Adapter> list(3);
    for (std::uint32_t i = 0; i < list.size(); ++i) {
        list[i].info.index = i;
        list[i].info.name = "GPU " + std::to_string(i);
    }
    list[0].info.vendor_id = 0x10de;
    list[0].info.device_id = 0x2330;
    list[0].info.pci_address = "0000:3b:00.0";
    list[1].info.vendor_id = 0x1002;
    list[1].info.device_id = 0x744c;
    list[1].info.pci_address = "0000:c1:00.0";
    list[2].info.vendor_id = 0x10005; // lavapipe: a Khronos vendor id, no PCI address
    const std::vector<std::uint32_t> first{0};
    const std::vector<std::uint32_t> second{1};
    EXPECT_EQ(detail::match_adapters(list, "pci:0000:3b:00.0"), first);
    EXPECT_EQ(detail::match_adapters(list, "0000:3b:00.0"), first);
    EXPECT_EQ(detail::match_adapters(list, "3b:00.0"), first);
    EXPECT_EQ(detail::match_adapters(list, "PCI:0000:C1:00.0"), second);
    EXPECT_EQ(detail::match_adapters(list, "10de:2330"), first);
    EXPECT_EQ(detail::match_adapters(list, "1002:744C"), second);
    EXPECT_EQ(detail::match_adapters(list, "10005:0000"), std::vector<std::uint32_t>{2});
    // Well formed but absent, and malformed: refused with what to write.
    for (const char* selector : {"pci:0000:3c:00.0", "10de:9999", "pci:3b:00", "pci:zz:00.0"}) {
        try {
            (void)detail::match_adapters(list, selector);
            ADD_FAILURE() << "'" << selector << "' was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.category(), ErrorCategory::InvalidArgument) << e.what();
            EXPECT_NE(std::string(e.what()).find(selector), std::string::npos) << e.what();
        }
    }
}

TEST(AdapterSelection, NoAdapterAtAllIsUnsupported) {
    std::vector<detail::Adapter> none;
    try {
        (void)detail::select_adapters(none, "auto", "auto");
        ADD_FAILURE() << "an empty adapter list was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.category(), ErrorCategory::Unsupported) << e.what();
        EXPECT_NE(std::string(e.what()).find("No Vulkan device was found"), std::string::npos);
    }
}

TEST_F(Discovery, AutoSelectionUsesEveryOtherAdapterAsWorker) {
    auto list = adapters();
    auto selection = detail::select_adapters(list, "auto", "auto");
    EXPECT_EQ(selection.workers.size(), list.size() - 1);
    for (auto w : selection.workers) {
        EXPECT_NE(w, selection.primary);
    }
}

TEST_F(Discovery, ALoneDeviceIsOpenedTwiceUnderAutoSelection) {
    std::vector<detail::Adapter> one = {adapters().front()};
    auto selection = detail::select_adapters(one, "auto", "auto");
    ASSERT_EQ(one.size(), 2u);
    EXPECT_EQ(selection.primary, 0u);
    EXPECT_EQ(selection.workers, std::vector<std::uint32_t>{1});
    EXPECT_EQ(one[1].info.index, 1u);
}

TEST(VirtualDeviceCount, RefusesNonsense) {
    EXPECT_EQ(detail::parse_virtual_devices("3"), 3u);
    for (const char* bad : {"0", "17", "-1", "abc", "2x", ""}) {
        try {
            (void)detail::parse_virtual_devices(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const Error& e) {
            EXPECT_EQ(e.category(), ErrorCategory::InvalidArgument) << bad;
        }
    }
}

} // namespace
} // namespace tandem::test
