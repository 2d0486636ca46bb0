#include "tandem/placement.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

namespace tandem {

namespace {

std::optional<std::uint32_t> whole_number(std::string_view text) {
    if (text.empty() || text.size() > 9 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    std::uint32_t value = 0;
    (void)std::from_chars(text.data(), text.data() + text.size(), value);
    return value;
}

} // namespace

Placement Placement::on_device(std::string selector) {
    Placement p{PlacementKind::Device, {}, std::move(selector), {}};
    p.adapter = whole_number(p.device);
    return p;
}

std::optional<Placement> Placement::parse(std::string_view text) {
    if (text == "auto") {
        return Placement{};
    }
    if (text == "primary") {
        return Placement::on_primary();
    }
    if (text == "worker") {
        return Placement{PlacementKind::Worker, {}, {}, {}};
    }
    constexpr std::string_view worker_prefix = "worker:";
    if (text.substr(0, worker_prefix.size()) == worker_prefix) {
        if (const auto n = whole_number(text.substr(worker_prefix.size()))) {
            return Placement{PlacementKind::Worker, n, {}, {}};
        }
        return std::nullopt;
    }
    if (const auto index = whole_number(text)) {
        return Placement::on_adapter(*index);
    }
    constexpr std::string_view device_prefix = "device:";
    if (text.substr(0, device_prefix.size()) == device_prefix &&
        text.size() > device_prefix.size()) {
        return on_device(std::string(text.substr(device_prefix.size())));
    }
    return std::nullopt;
}

std::string Placement::to_string() const {
    switch (kind) {
    case PlacementKind::Auto:
        return "auto";
    case PlacementKind::Primary:
        return "primary";
    case PlacementKind::Worker:
        return worker ? "worker:" + std::to_string(*worker) : "worker";
    case PlacementKind::Device:
        return adapter && device == std::to_string(*adapter) ? device : "device:" + device;
    }
    return "auto";
}

} // namespace tandem
