// What a DeviceSession holds, for the harness's own measurements (probe, calibration).
// Harness-internal: only the harness's .cpp files include this header (it speaks in
// tandem::detail types).
#pragma once

#include <memory>
#include <vector>

#include "core/discovery.hpp"
#include "core/instance.hpp"
#include "harness/device_session.hpp"

namespace tandem::harness {

struct DeviceSession::State {
    std::unique_ptr<detail::Instance> instance;
    std::vector<detail::Adapter> adapters;
    detail::Selection selection;
    std::vector<DeviceInfo> infos; // adapters[i].info
};

} // namespace tandem::harness
