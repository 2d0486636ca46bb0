// Frame generation from colour alone (tandem::interpolate_colour_task) through the public API,
// its one input the application's colour on the primary, run on a worker and on the primary:
// the first job gives its own colour; a textured square moving over a textured background is
// generated between two frames closer to the true middle frame than their blend is; settings
// that do not fit and descriptions of the wrong shape are refused. On lavapipe, under the
// fixture's validation.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "app_image.hpp"
#include "core/mix_hash.hpp"
#include "post/reference.hpp"
#include "post_task_test.hpp"
#include "runtime_fixture.hpp"
#include "tandem/post.hpp"

namespace tandem::test {
namespace {

using detail::Rgba8Image;

constexpr std::uint32_t k_w = 96;
constexpr std::uint32_t k_h = 64;
constexpr int k_side = 28;
constexpr int k_top = 18;
constexpr int k_speed = 6; // texels per frame, to the right

// Grain over waves, seeded per surface: the background's fixed to the screen, the square's
// carried with it.
void surface(int u, int v, std::uint32_t seed, std::uint8_t* p) {
    const std::uint32_t grain =
        detail::mix32(static_cast<std::uint32_t>(u * 7919 + v * 104729) ^ seed);
    for (int c = 0; c < 3; ++c) {
        const double wave = 40.0 * std::sin(0.3 * u + 0.2 * v + 2.0 * c + seed % 7);
        p[c] = static_cast<std::uint8_t>(std::clamp(
            128.0 + wave + static_cast<double>((grain >> (8 * c)) % 96) - 48.0, 0.0, 255.0));
    }
    p[3] = 255;
}

Rgba8Image frame(int left) {
    Rgba8Image f(k_w, k_h);
    for (int y = 0; y < static_cast<int>(k_h); ++y) {
        for (int x = 0; x < static_cast<int>(k_w); ++x) {
            std::uint8_t* p = f.at(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y));
            const bool inside = y >= k_top && y < k_top + k_side && x >= left && x < left + k_side;
            if (inside) {
                surface(x - left, y - k_top, 0x5eedu, p);
            } else {
                surface(x, y, 0xbac0u, p);
            }
        }
    }
    return f;
}

class ColourInterpolateTask : public PostTaskTest {
protected:
    // One job with `colour` as its one input, its output read back.
    Rgba8Image run_job(Runtime& runtime, TaskId task, AppImage& image, const Rgba8Image& colour,
                       std::span<const std::byte> settings = {}) {
        return PostTaskTest::run_job(runtime, task, {&image}, {colour.pixels}, settings);
    }
};

class ColourInterpolateTaskOn : public ColourInterpolateTask,
                                public ::testing::WithParamInterface<const char*> {};

TEST_P(ColourInterpolateTaskOn, AMovingTexturedSquareBeatsTheBlendAgainstTheTrueMiddleFrame) {
    const bool primary = std::string(GetParam()) == "primary";
    auto runtime = make_runtime(primary ? "none" : "1");
    TaskDesc d = interpolate_colour_task("frame-gen", k_w, k_h);
    d.placement = Placement::parse(GetParam()).value();
    const TaskId task = runtime->register_task(d);
    AppImage colour(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_w, k_h);
    const int left = 20;
    const Rgba8Image a = frame(left);
    const Rgba8Image b = frame(left + k_speed);
    const Rgba8Image middle = frame(left + k_speed / 2);

    const Rgba8Image first = run_job(*runtime, task, colour, a);
    EXPECT_TRUE(first.pixels == a.pixels) << "with nothing before it: its own colour";
    const Rgba8Image got = run_job(*runtime, task, colour, b);
    ASSERT_EQ(got.pixels.size(), middle.pixels.size());
    const double generated = detail::psnr(got, middle);
    const double blended = detail::psnr(detail::blend(a, b), middle);
    std::printf("[ psnr     ] from colour: generated %.2f dB, blend %.2f dB\n", generated, blended);
    // Measured on lavapipe (deterministic): generated 33.62 dB, blend 25.37 dB. 6 dB (a quarter
    // of the blend's squared error) leaves 2 dB for other devices' rounding; an output that
    // followed the motion only half the time would not reach it.
    EXPECT_GE(generated, blended + 6.0);
    colour.finish(m_released);
}

INSTANTIATE_TEST_SUITE_P(WorkerAndPrimary, ColourInterpolateTaskOn,
                         ::testing::Values("worker", "primary"),
                         [](const auto& param) { return std::string(param.param); });

TEST_F(ColourInterpolateTask, SettingsOfTheWrongSizeOrRangeAreRefusedWithBadBytes) {
    auto runtime = make_runtime("1");
    TaskDesc d = interpolate_colour_task("frame-gen", 16, 16);
    d.placement = Placement::parse("worker").value();
    const TaskId task = runtime->register_task(d);
    AppImage colour(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, 16, 16);
    const std::vector<std::uint8_t> px(16 * 16 * 4, 128);
    const InputImage in = colour.write(px, 0);
    const std::array<std::byte, 5> odd{};
    SubmitResult r = runtime->submit(task, odd, std::span(&in, 1));
    EXPECT_EQ(r.error, TaskError::BadBytes);
    EXPECT_NE(r.reason.find("a interpolate job takes no bytes or one interpolate settings"),
              std::string::npos)
        << r.reason;
    InterpolateSettings late;
    late.t = 1.5f;
    r = runtime->submit(task, settings_bytes(late), std::span(&in, 1));
    EXPECT_EQ(r.error, TaskError::BadBytes);
    EXPECT_NE(r.reason.find("t is 0 to 1"), std::string::npos) << r.reason;
    InterpolateSettings wide;
    wide.fill_radius = 17;
    r = runtime->submit(task, settings_bytes(wide), std::span(&in, 1));
    EXPECT_EQ(r.error, TaskError::BadBytes);
    EXPECT_EQ(runtime->stats(task).accepted, 0u);
    Rgba8Image flat(16, 16);
    flat.pixels = px;
    const Rgba8Image out = run_job(*runtime, task, colour, flat);
    EXPECT_TRUE(out.pixels == px) << "the next good submit runs";
    colour.finish(m_released);
}

TEST_F(ColourInterpolateTask, ADescriptionThatDoesNotFitIsRefusedAtRegistration) {
    auto runtime = make_runtime("1");
    TaskDesc d = interpolate_colour_task("frame-gen", 32, 32);
    d.inputs.push_back({"depth", VK_FORMAT_R32_SFLOAT, 32, 32});
    try {
        (void)runtime->register_task(d);
        ADD_FAILURE() << "a colour interpolation with two inputs was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.category(), ErrorCategory::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("declares 2 inputs"), std::string::npos) << e.what();
    }
    d = interpolate_colour_task("frame-gen", 32, 32);
    d.inputs[0].width = 16;
    EXPECT_THROW((void)runtime->register_task(d), Error);
    EXPECT_EQ(runtime->resources().tasks, 0u);
}

} // namespace
} // namespace tandem::test
