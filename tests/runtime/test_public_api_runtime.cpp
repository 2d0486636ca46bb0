// The public placements and post-processing settings as a runtime answers them (lavapipe opened
// three times: a primary and two workers). on_a_worker spreads tasks over the workers,
// on_adapter and on_device put a task on the adapter named, and a placement that names none is
// refused at registration. Each post task's settings are checked at submit as tandem/post.hpp
// documents: NaN, infinities and values out of range fail that submit with BadBytes, and every
// value at the ends of its range passes the check (the submit then fails only for its missing
// inputs, so no job runs). Runtime::worker_pairs answers each worker's cell to the primary, and
// RuntimeOptions::name_objects off leaves every device without the naming entry point.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "runtime/worker.hpp"
#include "runtime_fixture.hpp"
#include "tandem/post.hpp"

namespace tandem::test {
namespace {

constexpr float k_nan = std::numeric_limits<float>::quiet_NaN();
constexpr float k_inf = std::numeric_limits<float>::infinity();

class PublicApiRuntime : public RuntimeTest {};

TEST_F(PublicApiRuntime, PlacementsPutEachTaskWhereTheyName) {
    auto runtime = make_runtime("auto");
    const std::vector<DeviceInfo> workers = runtime->worker_devices();
    ASSERT_EQ(workers.size(), 2u);
    const std::uint32_t primary = runtime->primary_device().index;
    auto on = [&](const std::string& name, const Placement& placement) {
        TaskDesc d = pattern_task("primary");
        d.name = name;
        d.placement = placement;
        return runtime->register_task(d);
    };
    // The worker with the fewest tasks, each time: two such tasks go to different workers.
    const TaskId a = on("a", Placement::on_a_worker());
    const TaskId b = on("b", Placement::on_a_worker());
    EXPECT_NE(runtime->stats(a).device, primary);
    EXPECT_NE(runtime->stats(b).device, primary);
    EXPECT_NE(runtime->stats(a).device, runtime->stats(b).device);
    // An adapter by index, and by a selector that is an index.
    const TaskId c = on("c", Placement::on_adapter(workers[1].index));
    EXPECT_EQ(runtime->stats(c).device, workers[1].index);
    const TaskId d = on("d", Placement::on_device(std::to_string(workers[0].index)));
    EXPECT_EQ(runtime->stats(d).device, workers[0].index);
    const TaskId p = on("p", Placement::on_adapter(primary));
    EXPECT_EQ(runtime->stats(p).device, primary);
    // Each runs where it was put and delivers exact outputs.
    auto reader = make_reader(*runtime);
    feed_until_ready(*runtime, *reader, {a, b, c, d, p}, 3, 1);
    EXPECT_EQ(runtime->stats(c).device, workers[1].index) << "a manual placement never moves";
    for (const Placement& none :
         {Placement::on_adapter(99), Placement::on_device("no-such-device")}) {
        try {
            (void)on("nowhere", none);
            ADD_FAILURE() << none.to_string() << " was accepted";
        } catch (const Error& e) {
            const std::string named = "No device matches '" + none.device + "'";
            EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
        }
    }
}

// Registers `desc` on the primary and submits `settings` with no inputs: the answer says
// whether the settings passed the check (BadInputs: only the inputs are missing) or not
// (BadBytes, with the reason).
class SettingsCheck {
public:
    SettingsCheck(Runtime& runtime, TaskDesc desc) : m_runtime(runtime) {
        desc.placement = Placement::on_primary();
        m_task = runtime.register_task(desc);
    }
    template <typename Settings>
    void expect(const Settings& settings, bool valid, const std::string& what,
                const std::string& reason = {}) {
        const SubmitResult r = m_runtime.submit(m_task, settings_bytes(settings));
        EXPECT_EQ(r.status, SubmitStatus::Failed) << what;
        EXPECT_EQ(r.error, valid ? TaskError::BadInputs : TaskError::BadBytes)
            << what << ": " << r.reason;
        if (!valid) {
            EXPECT_NE(r.reason.find(reason), std::string::npos) << what << ": " << r.reason;
        }
    }
    void expect_size_refused(std::size_t size, const std::string& reason) {
        const std::vector<std::byte> bytes(size);
        const SubmitResult r = m_runtime.submit(m_task, bytes);
        EXPECT_EQ(r.error, TaskError::BadBytes) << size << " bytes: " << r.reason;
        EXPECT_NE(r.reason.find(reason), std::string::npos) << r.reason;
    }
    ~SettingsCheck() { EXPECT_EQ(m_runtime.stats(m_task).accepted, 0u); }

private:
    Runtime& m_runtime;
    TaskId m_task;
};

TEST_F(PublicApiRuntime, WorkerPairsAreEachWorkersCellToThePrimary) {
    auto runtime = make_runtime("auto");
    const std::vector<DeviceInfo> workers = runtime->worker_devices();
    const std::vector<PairInfo> pairs = runtime->worker_pairs();
    ASSERT_EQ(pairs.size(), workers.size());
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        EXPECT_EQ(pairs[i].worker, workers[i].index);
        EXPECT_EQ(pairs[i].primary, runtime->primary_device().index);
        ASSERT_EQ(pairs[i].paths.size(), k_all_transfer_paths.size());
        EXPECT_FALSE(pairs[i].allows(TransferPath::SameDevice)) << "two devices";
        EXPECT_TRUE(pairs[i].allows(TransferPath::HostCopy)) << "every pair has the host";
        EXPECT_TRUE(pairs[i].best_path().has_value());
    }
}

// Naming is Device::set_name's call of vkSetDebugUtilsObjectNameEXT, which it skips without the
// entry point: off, no device of the runtime has it; on (the default), each has it where the
// instance has VK_EXT_debug_utils.
TEST_F(PublicApiRuntime, NameObjectsOffNamesNoObjectOnAnyDevice) {
    for (const bool name_objects : {true, false}) {
        RuntimeOptions options;
        options.name_objects = name_objects;
        auto runtime = make_runtime("auto", options);
        const detail::RuntimeImpl& impl = detail::RuntimeAccess::impl(*runtime);
        const bool named = name_objects && instance().has_debug_utils();
        EXPECT_EQ(impl.primary().fn().set_object_name != nullptr, named) << name_objects;
        ASSERT_EQ(impl.workers().workers().size(), 2u);
        for (const detail::Worker* worker : impl.workers().workers()) {
            EXPECT_EQ(worker->device().fn().set_object_name != nullptr, named) << name_objects;
        }
        // Tasks run as ever without names.
        auto reader = make_reader(*runtime);
        const TaskId task = runtime->register_task(pattern_task("auto"));
        feed_until_ready(*runtime, *reader, {task}, 2, 1);
    }
}

TEST_F(PublicApiRuntime, BlurSettingsAreChecked) {
    auto runtime = make_runtime();
    SettingsCheck check(*runtime, blur_task("blur", 16, 16));
    const std::string range = "radius is 0 to 64 and its sigma a finite number";
    for (const float sigma : {0.0f, -1.0f, 0.5f, 1e30f}) {
        check.expect(BlurSettings{64, sigma}, true, "sigma " + std::to_string(sigma));
    }
    check.expect(BlurSettings{0, 1.0f}, true, "radius 0");
    check.expect(BlurSettings{65, 1.0f}, false, "radius 65", range);
    for (const float sigma : {k_nan, k_inf, -k_inf}) {
        check.expect(BlurSettings{2, sigma}, false, "sigma " + std::to_string(sigma), range);
    }
    check.expect_size_refused(sizeof(BlurSettings) + 1, "blur");
}

TEST_F(PublicApiRuntime, UpscaleSettingsAreChecked) {
    auto runtime = make_runtime();
    SettingsCheck check(*runtime, upscale_task("upscale", 8, 8, 16, 16));
    const std::string range = "sharpness is 0 to 2 and its adapt 0 to 1";
    for (const float sharpness : {0.0f, 2.0f}) {
        for (const float adapt : {0.0f, 1.0f}) {
            check.expect(UpscaleSettings{sharpness, adapt}, true, "ends of the ranges");
        }
    }
    for (const float bad : {k_nan, k_inf, -k_inf, -0.01f, 2.01f}) {
        check.expect(UpscaleSettings{bad, 0.5f}, false, "sharpness " + std::to_string(bad), range);
    }
    for (const float bad : {k_nan, k_inf, -k_inf, -0.01f, 1.01f}) {
        check.expect(UpscaleSettings{0.5f, bad}, false, "adapt " + std::to_string(bad), range);
    }
    check.expect_size_refused(1, "upscale");
}

TEST_F(PublicApiRuntime, TemporalUpscaleSettingsAreChecked) {
    auto runtime = make_runtime();
    SettingsCheck check(*runtime, temporal_upscale_task("temporal", 8, 8, 16, 16));
    const std::string range = "jitter is -0.5 to 0.5 render texels";
    const auto with = [](auto change) {
        TemporalUpscaleSettings s;
        change(s);
        return s;
    };
    check.expect(with([](auto& s) { s.jitter_x = -0.5f; }), true, "jitter x -0.5");
    check.expect(with([](auto& s) { s.jitter_y = 0.5f; }), true, "jitter y 0.5");
    check.expect(with([](auto& s) { s.moving_blend = 0.0f; }), true, "moving blend 0");
    check.expect(with([](auto& s) { s.moving_blend = 1.0f; }), true, "moving blend 1");
    check.expect(with([](auto& s) { s.depth_tolerance = 0.0f; }), true, "depth tolerance 0");
    // "At least 0": no upper end, so an infinite tolerance (keep every history) passes.
    check.expect(with([](auto& s) { s.depth_tolerance = k_inf; }), true, "depth tolerance inf");
    check.expect(with([](auto& s) { s.reset = 1; }), true, "reset 1");
    for (const float bad : {k_nan, k_inf, -k_inf, 0.51f, -0.51f}) {
        const std::string v = std::to_string(bad);
        check.expect(with([&](auto& s) { s.jitter_x = bad; }), false, "jitter x " + v, range);
        check.expect(with([&](auto& s) { s.jitter_y = bad; }), false, "jitter y " + v, range);
    }
    for (const float bad : {k_nan, k_inf, -0.01f, 1.01f}) {
        check.expect(with([&](auto& s) { s.moving_blend = bad; }), false,
                     "moving blend " + std::to_string(bad), range);
    }
    for (const float bad : {k_nan, -k_inf, -1e-9f}) {
        check.expect(with([&](auto& s) { s.depth_tolerance = bad; }), false,
                     "depth tolerance " + std::to_string(bad), range);
    }
    check.expect(with([](auto& s) { s.reset = 2; }), false, "reset 2", range);
    check.expect_size_refused(sizeof(TemporalUpscaleSettings) - 1, "temporal upscale");
}

TEST_F(PublicApiRuntime, InterpolateSettingsAreChecked) {
    auto runtime = make_runtime();
    SettingsCheck check(*runtime, interpolate_task("frame-gen", 16, 16));
    const std::string range = "interpolation's t is 0 to 1";
    const auto with = [](auto change) {
        InterpolateSettings s;
        change(s);
        return s;
    };
    check.expect(with([](auto& s) { s.t = 0.0f; }), true, "t 0");
    check.expect(with([](auto& s) { s.t = 1.0f; }), true, "t 1");
    check.expect(with([](auto& s) { s.depth_tolerance = 0.0f; }), true, "depth tolerance 0");
    check.expect(with([](auto& s) { s.fill_radius = 0; }), true, "fill radius 0");
    check.expect(with([](auto& s) { s.fill_radius = 16; }), true, "fill radius 16");
    check.expect(with([](auto& s) { s.reversed_depth = 1; }), true, "reversed depth");
    for (const float bad : {k_nan, k_inf, -k_inf, -0.01f, 1.01f}) {
        check.expect(with([&](auto& s) { s.t = bad; }), false, "t " + std::to_string(bad), range);
    }
    for (const float bad : {k_nan, -k_inf, -0.01f}) {
        check.expect(with([&](auto& s) { s.depth_tolerance = bad; }), false,
                     "depth tolerance " + std::to_string(bad), range);
    }
    check.expect(with([](auto& s) { s.fill_radius = 17; }), false, "fill radius 17", range);
    check.expect(with([](auto& s) { s.reversed_depth = 2; }), false, "reversed depth 2", range);
    check.expect_size_refused(2, "interpolate");
}

} // namespace
} // namespace tandem::test
