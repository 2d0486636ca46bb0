#include "harness/device_session.hpp"

#include <exception>
#include <string>

#include "core/copy_queue.hpp"
#include "core/device.hpp"
#include "core/device_json.hpp"
#include "harness/device_session_state.hpp"
#include "tandem/error.hpp"

namespace tandem::harness {

std::uint32_t parse_virtual_devices(std::string_view text) {
    return detail::parse_virtual_devices(text);
}

DeviceSession::DeviceSession(const SessionOptions& options) : m_state(std::make_unique<State>()) {
    detail::Validation validation = detail::validation_from_env(detail::Validation::Off);
    if (!options.validation.empty()) {
        auto parsed = detail::parse_validation(options.validation);
        if (!parsed) {
            throw Error(ErrorCategory::InvalidArgument,
                        "--validation '" + options.validation + "' is not understood",
                        "Use off, core or sync");
        }
        validation = *parsed;
    }
    std::uint32_t virtual_devices = detail::virtual_devices_from_env(1);
    if (!options.virtual_devices.empty()) {
        virtual_devices = detail::parse_virtual_devices(options.virtual_devices);
    }
    detail::InstanceOptions instance_options;
    instance_options.validation = validation;
    m_state->instance = std::make_unique<detail::Instance>(instance_options);
    m_state->adapters = detail::discover_adapters(*m_state->instance, virtual_devices);
    m_state->selection =
        detail::select_adapters(m_state->adapters, options.primary, options.workers);
    for (const detail::Adapter& a : m_state->adapters) {
        m_state->infos.push_back(a.info);
    }
}

DeviceSession::~DeviceSession() = default;
DeviceSession::DeviceSession(DeviceSession&&) noexcept = default;
DeviceSession& DeviceSession::operator=(DeviceSession&&) noexcept = default;

const std::vector<DeviceInfo>& DeviceSession::adapters() const noexcept {
    return m_state->infos;
}

std::uint32_t DeviceSession::primary() const noexcept {
    return m_state->selection.primary;
}

const std::vector<std::uint32_t>& DeviceSession::workers() const noexcept {
    return m_state->selection.workers;
}

std::vector<PairInfo> DeviceSession::pair_matrix() const {
    return detail::pair_matrix(m_state->adapters);
}

nlohmann::json DeviceSession::devices_document(const std::vector<PairInfo>& pairs) const {
    return detail::devices_document(m_state->adapters, pairs, m_state->selection);
}

std::vector<std::string> DeviceSession::copy_queues() const {
    std::vector<std::string> out;
    for (const detail::Adapter& adapter : m_state->adapters) {
        try {
            detail::DeviceOptions options;
            options.label = "copy queue " + std::to_string(adapter.info.index);
            const detail::Device device(*m_state->instance, adapter, options);
            out.push_back(device.copy_queue_choice().reason);
        } catch (const std::exception& e) {
            out.push_back(std::string("not measured: the device could not be opened (") + e.what() +
                          ")");
        }
    }
    return out;
}

std::uint64_t DeviceSession::validation_messages() const noexcept {
    return m_state && m_state->instance ? m_state->instance->validation_messages() : 0;
}

std::string DeviceSession::last_validation_message() const {
    return m_state && m_state->instance ? m_state->instance->last_validation_message()
                                        : std::string();
}

} // namespace tandem::harness
