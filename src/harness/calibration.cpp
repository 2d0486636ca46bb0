#include "harness/calibration.hpp"

#include <vector>

#include "calibrate/measure.hpp"
#include "harness/device_session_state.hpp"
#include "harness/run_scene_state.hpp"
#include "scene/snapshot_codec.hpp"
#include "sched/calibration.hpp"
#include "sched/profile.hpp"

namespace tandem::harness {

struct CalibrationProfile::State {
    detail::Profile profile;
};

CalibrationProfile::CalibrationProfile(std::unique_ptr<State> state) : m_state(std::move(state)) {}
CalibrationProfile::~CalibrationProfile() = default;
CalibrationProfile::CalibrationProfile(CalibrationProfile&&) noexcept = default;
CalibrationProfile& CalibrationProfile::operator=(CalibrationProfile&&) noexcept = default;

void CalibrationProfile::save(const std::filesystem::path& path) const {
    detail::save_profile(m_state->profile, path);
}

nlohmann::json CalibrationProfile::json() const {
    return detail::to_json(m_state->profile);
}

std::string CalibrationProfile::summary() const {
    return detail::profile_summary(m_state->profile);
}

CalibrationProfile calibrate(const DeviceSession& session, const CalibrationRequest& request) {
    const DeviceSession::State& s = session.state();
    std::vector<std::uint32_t> indices{s.selection.primary};
    for (const std::uint32_t w : s.selection.workers) {
        if (w != s.selection.primary) {
            indices.push_back(w);
        }
    }
    std::vector<DeviceInfo> devices;
    for (const std::uint32_t i : indices) {
        for (const auto& a : s.adapters) {
            if (a.info.index == i) {
                devices.push_back(a.info);
            }
        }
    }
    const std::vector<PairInfo> pairs = detail::pair_matrix(s.adapters);

    detail::MeasureOptions options;
    options.quick = request.quick;
    options.timeout = request.timeout;
    auto out = std::make_unique<CalibrationProfile::State>();
    {
        detail::Measurer measurer(*s.instance, s.adapters, indices, options);
        std::vector<detail::ReferenceWorkload> tasks;
        if (request.scene != nullptr) {
            const RunScene& scene = *request.scene;
            const std::uint64_t triangles = scene.triangles();
            for (std::size_t i = 0; i < scene.tasks().size(); ++i) {
                const RunTaskInfo& task = scene.tasks()[i];
                measurer.add_task_content(
                    task.content_key, scene.state().inputs.scene.shared_assets(),
                    detail::encode_snapshot(detail::task_snapshot(scene.state().inputs, i)));
                tasks.push_back(
                    {"capture", task.width, task.height, triangles, task.content_key, task.name});
            }
        }
        detail::CalibrationHooks hooks = measurer.hooks();
        if (request.on_progress) {
            hooks.progress = [&request](const detail::CalibrationProgress& p) {
                request.on_progress(p.step, p.total, p.what);
            };
        }
        if (request.on_start) {
            request.on_start(devices.size(), tasks.size());
        }
        out->profile = detail::run_calibration(devices, pairs, hooks, tasks);
        for (auto& d : out->profile.devices) {
            d.timing = measurer.timing(d.index);
        }
    }
    out->profile.tandem_version = request.tandem_version;
    return CalibrationProfile(std::move(out));
}

} // namespace tandem::harness
