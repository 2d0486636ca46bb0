// JSON form of the capability and pair matrices (schema: docs/devices-json.md). The JSON is a
// public contract read by scripts: add fields freely, never rename or remove one.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "core/discovery.hpp"
#include "tandem/device_info.hpp"

namespace tandem::detail {

inline constexpr int k_devices_schema_version = 1;

[[nodiscard]] nlohmann::json to_json(const DeviceInfo& info);
[[nodiscard]] nlohmann::json to_json(const PairInfo& pair);
// The document `tandem devices --json` prints.
[[nodiscard]] nlohmann::json devices_document(const std::vector<Adapter>& adapters,
                                              const std::vector<PairInfo>& pairs,
                                              const Selection& selection);

} // namespace tandem::detail
