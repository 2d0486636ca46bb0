// DeviceSession: a Vulkan instance and every adapter on it, with the primary and the workers a
// command line selected, for the tools that work on devices directly instead of through a
// Runtime (`tandem devices`, `probe`, `calibrate`). It answers in public types: each adapter's
// DeviceInfo, the pair matrix, the devices document (docs/devices-json.md) and the instance's
// validation messages; probe.hpp and calibration.hpp measure on it.
// Threads: one thread at a time. Lifetime: outlives whatever measures on it; moved-from
// sessions hold nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tandem/device_info.hpp"

namespace tandem::harness {

struct SessionOptions {
    std::string validation;      // off, core or sync; empty: $TANDEM_VALIDATION, else off
    std::string virtual_devices; // 1-16; empty: $TANDEM_VIRTUAL_DEVICES, else 1
    std::string primary = "auto";
    std::string workers = "auto";
};

// A virtual device count (1 to 16); throws tandem::Error naming the text otherwise.
[[nodiscard]] std::uint32_t parse_virtual_devices(std::string_view text);

class DeviceSession {
public:
    // Creates the instance, lists the adapters and resolves the selection. Throws tandem::Error
    // (a bad validation mode, virtual device count or selector; no Vulkan).
    explicit DeviceSession(const SessionOptions& options);
    ~DeviceSession();
    DeviceSession(DeviceSession&&) noexcept;
    DeviceSession& operator=(DeviceSession&&) noexcept;

    // Every adapter, in index order (a selection may have added a second opening of the only
    // one).
    [[nodiscard]] const std::vector<DeviceInfo>& adapters() const noexcept;
    [[nodiscard]] std::uint32_t primary() const noexcept;
    [[nodiscard]] const std::vector<std::uint32_t>& workers() const noexcept;
    // Every ordered (worker, primary) pair of the adapters, diagonal included.
    [[nodiscard]] std::vector<PairInfo> pair_matrix() const;
    // The document `tandem devices --json` prints.
    [[nodiscard]] nlohmann::json devices_document(const std::vector<PairInfo>& pairs) const;
    // Opens each adapter and measures which of its queues copies within it fastest, the queue
    // the same-device and shared-memory paths copy on (core/copy_queue.hpp): one sentence per
    // adapter, in index order, with the rates (or why the device could not be opened). Blocking:
    // a device opened and a few milliseconds of copies per adapter.
    [[nodiscard]] std::vector<std::string> copy_queues() const;
    // Khronos validation messages (warning or worse) the instance saw, and the last one.
    [[nodiscard]] std::uint64_t validation_messages() const noexcept;
    [[nodiscard]] std::string last_validation_message() const;

    // The instance and adapters inside (harness/device_session_state.hpp, for the harness's
    // own measurements).
    struct State;
    [[nodiscard]] const State& state() const noexcept { return *m_state; }

private:
    std::unique_ptr<State> m_state;
};

} // namespace tandem::harness
