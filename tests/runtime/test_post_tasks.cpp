// The post-processing tasks of tandem/post.hpp through the public API, their inputs the
// application's images on the primary: a blur, an upscale and frame interpolation run on a
// worker (and on the primary) and give what their passes promise, judged against CPU truths and
// baselines; settings and descriptions that do not fit are refused with a sentence. On lavapipe,
// under the fixture's validation.
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "app_image.hpp"
#include "post/reference.hpp"
#include "post_task_test.hpp"
#include "runtime_fixture.hpp"
#include "tandem/post.hpp"

namespace tandem::test {
namespace {

using detail::Rgba8Image;

// IEEE half from float for the values the tests use (normal numbers and zero), rounded to
// nearest.
std::uint16_t to_half(float f) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    const std::uint32_t sign = (bits >> 16) & 0x8000u;
    const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
    const std::uint32_t mantissa = bits & 0x7fffffu;
    if ((bits & 0x7fffffffu) == 0 || exponent <= 0) {
        return static_cast<std::uint16_t>(sign);
    }
    const std::uint32_t rounded = (mantissa + 0x1000u) >> 13;
    return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exponent) << 10) |
                                      (rounded & 0x3ffu)) +
           static_cast<std::uint16_t>((rounded >> 10) << 10);
}

template <typename T>
std::span<const std::uint8_t> bytes_of(const std::vector<T>& v) {
    return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(T)};
}

using PostTasks = PostTaskTest;

// On the primary, on a worker over the pair's best path, and on a worker over the host-imported
// path, where a CPU worker reads its inputs and writes its output in place (in GENERAL).
class PostTasksOn : public PostTasks, public ::testing::WithParamInterface<const char*> {
protected:
    [[nodiscard]] bool on_primary() const { return std::string(GetParam()) == "primary"; }
    [[nodiscard]] std::unique_ptr<Runtime> placed_runtime() {
        RuntimeOptions options;
        if (std::string(GetParam()) == "worker_host_imported") {
            options.transfer_path = "host-imported";
        }
        return make_runtime(on_primary() ? "none" : "1", options);
    }
    [[nodiscard]] Placement placement() const {
        return Placement::parse(on_primary() ? "primary" : "worker").value();
    }
};

// --- blur -----------------------------------------------------------------------------------

TEST_P(PostTasksOn, BlurKeepsAConstantExactAndSmoothsAnEdgeOnlyNearIt) {
    constexpr std::uint32_t w = 48;
    constexpr std::uint32_t h = 32;
    auto runtime = placed_runtime();
    TaskDesc d = blur_task("blur", w, h);
    d.placement = placement();
    const TaskId task = runtime->register_task(d);
    AppImage colour(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, w, h);

    Rgba8Image constant(w, h);
    for (std::size_t i = 0; i < constant.pixels.size(); i += 4) {
        constant.pixels[i] = 37;
        constant.pixels[i + 1] = 120;
        constant.pixels[i + 2] = 200;
        constant.pixels[i + 3] = 255;
    }
    BlurSettings s;
    s.radius = 3;
    const Rgba8Image flat =
        run_job(*runtime, task, {&colour}, {constant.pixels}, settings_bytes(s));
    EXPECT_TRUE(flat.pixels == constant.pixels) << "a constant image stays exactly constant";

    // A vertical edge at x = 24: dark left, bright right.
    Rgba8Image edge(w, h);
    for (std::uint32_t y = 0; y < h; ++y) {
        for (std::uint32_t x = 0; x < w; ++x) {
            const std::uint8_t v = x < 24 ? 10 : 240;
            std::uint8_t* p = edge.at(x, y);
            p[0] = p[1] = p[2] = v;
            p[3] = 255;
        }
    }
    const Rgba8Image soft = run_job(*runtime, task, {&colour}, {edge.pixels}, settings_bytes(s));
    ASSERT_EQ(soft.pixels.size(), edge.pixels.size());
    for (std::uint32_t y = 0; y < h; ++y) {
        for (std::uint32_t x = 0; x + 1 < w; ++x) {
            EXPECT_LE(soft.at(x, y)[0], soft.at(x + 1, y)[0]) << "monotonic across the edge";
        }
        EXPECT_EQ(soft.at(24 - 4, y)[0], 10) << "beyond the radius nothing changes";
        EXPECT_EQ(soft.at(24 + 3, y)[0], 240);
        EXPECT_GT(soft.at(23, y)[0], 10) << "the edge is smoothed";
        EXPECT_LT(soft.at(24, y)[0], 240);
    }
    finish({&colour});
}

// --- upscale --------------------------------------------------------------------------------

// A disc and a rotated square on a gradient, box-filtered at any size (4x4 samples per texel),
// the same scene at every resolution.
Rgba8Image scene(std::uint32_t w, std::uint32_t h) {
    Rgba8Image out(w, h);
    constexpr int k = 4;
    for (std::uint32_t y = 0; y < h; ++y) {
        for (std::uint32_t x = 0; x < w; ++x) {
            double sum[3] = {0, 0, 0};
            for (int sy = 0; sy < k; ++sy) {
                for (int sx = 0; sx < k; ++sx) {
                    const double u = (x + (sx + 0.5) / k) / w;
                    const double v = (y + (sy + 0.5) / k) / h;
                    double c[3] = {40 + 60 * u, 60 + 40 * v, 90.0};
                    if ((u - 0.35) * (u - 0.35) + (v - 0.5) * (v - 0.5) < 0.06) {
                        c[0] = 230;
                        c[1] = 200;
                        c[2] = 40;
                    }
                    const double a = (u - 0.72) * 0.8 + (v - 0.5) * 0.6;
                    const double b = -(u - 0.72) * 0.6 + (v - 0.5) * 0.8;
                    if (std::abs(a) < 0.12 && std::abs(b) < 0.12) {
                        c[0] = 20;
                        c[1] = 30;
                        c[2] = 220;
                    }
                    for (int i = 0; i < 3; ++i) {
                        sum[i] += c[i];
                    }
                }
            }
            std::uint8_t* p = out.at(x, y);
            for (int i = 0; i < 3; ++i) {
                p[i] = static_cast<std::uint8_t>(std::lround(sum[i] / (k * k)));
            }
            p[3] = 255;
        }
    }
    return out;
}

TEST_P(PostTasksOn, UpscaleOfAKnownSceneBeatsBilinearAgainstTheNativeRender) {
    constexpr std::uint32_t in_w = 64;
    constexpr std::uint32_t in_h = 48;
    constexpr std::uint32_t out_w = 128;
    constexpr std::uint32_t out_h = 96;
    auto runtime = placed_runtime();
    TaskDesc d = upscale_task("upscale", in_w, in_h, out_w, out_h);
    d.placement = placement();
    const TaskId task = runtime->register_task(d);
    AppImage colour(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, in_w, in_h);
    const Rgba8Image low = scene(in_w, in_h);
    const Rgba8Image native = scene(out_w, out_h);
    const Rgba8Image up = run_job(*runtime, task, {&colour}, {low.pixels});
    ASSERT_EQ(up.pixels.size(), native.pixels.size());
    const double upscaled = detail::psnr(up, native);
    const double bilinear = detail::psnr(detail::bilinear_upscale(low, out_w, out_h), native);
    std::printf("[ psnr     ] upscale %.2f dB, bilinear %.2f dB\n", upscaled, bilinear);
    EXPECT_GE(upscaled, bilinear) << "the upscaler beats bilinear";
    EXPECT_GE(upscaled, 26.0) << "within the stated tolerance of the native render";
    finish({&colour});
}

// --- interpolate ----------------------------------------------------------------------------

constexpr std::uint32_t k_w = 96;
constexpr std::uint32_t k_h = 64;
constexpr int k_side = 32;
constexpr int k_top = 16;
constexpr int k_speed = 8;

// A textured square (near) at `left`, moving k_speed pixels right per frame, over a textured
// background (far): colour, depth and motion vectors (pointing one frame back, as RG16F).
struct Frame {
    Rgba8Image colour{k_w, k_h};
    std::vector<float> depth = std::vector<float>(k_w * k_h);
    std::vector<std::uint16_t> motion = std::vector<std::uint16_t>(k_w * k_h * 2);
};

Frame frame(int left) {
    Frame f;
    for (int y = 0; y < static_cast<int>(k_h); ++y) {
        for (int x = 0; x < static_cast<int>(k_w); ++x) {
            const std::size_t i = static_cast<std::size_t>(y) * k_w + x;
            const bool inside = y >= k_top && y < k_top + k_side && x >= left && x < left + k_side;
            std::uint8_t* p =
                f.colour.at(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y));
            if (inside) {
                const int u = x - left;
                const int v = y - k_top;
                p[0] = static_cast<std::uint8_t>(200 + (u * 7) % 50);
                p[1] = static_cast<std::uint8_t>(40 + (v * 3) % 60);
                p[2] = static_cast<std::uint8_t>(30 + ((u ^ v) & 7) * 4);
            } else {
                p[0] = static_cast<std::uint8_t>(20 + (x * 3) % 40);
                p[1] = static_cast<std::uint8_t>(60 + (y * 5) % 80);
                p[2] = static_cast<std::uint8_t>(160 + ((x + y) % 16) * 4);
            }
            p[3] = 255;
            f.depth[i] = inside ? 0.25f : 0.9f;
            f.motion[i * 2] = to_half(inside ? -static_cast<float>(k_speed) : 0.0f);
            f.motion[i * 2 + 1] = to_half(0.0f);
        }
    }
    return f;
}

TEST_P(PostTasksOn, InterpolateGeneratesTheMiddleFrameWithTheSquareAtTheMidpoint) {
    auto runtime = placed_runtime();
    TaskDesc d = interpolate_task("frame-gen", k_w, k_h);
    d.placement = placement();
    const TaskId task = runtime->register_task(d);
    AppImage colour(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_w, k_h);
    AppImage depth(app_device(), *runtime, VK_FORMAT_R32_SFLOAT, k_w, k_h);
    AppImage motion(app_device(), *runtime, VK_FORMAT_R16G16_SFLOAT, k_w, k_h);
    const std::vector<AppImage*> images{&colour, &depth, &motion};
    const auto job = [&](const Frame& f) {
        return run_job(*runtime, task, images,
                       {f.colour.pixels, bytes_of(f.depth), bytes_of(f.motion)});
    };
    const int left_a = 24;
    const Frame a = frame(left_a);
    const Frame b = frame(left_a + k_speed);
    const Frame middle = frame(left_a + k_speed / 2);

    const Rgba8Image first = job(a);
    EXPECT_TRUE(first.pixels == a.colour.pixels) << "with nothing before it: its own colour";
    const Rgba8Image got = job(b);
    ASSERT_EQ(got.pixels.size(), middle.colour.pixels.size());
    double sum_x = 0;
    double sum_y = 0;
    int count = 0;
    for (std::uint32_t y = 0; y < k_h; ++y) {
        for (std::uint32_t x = 0; x < k_w; ++x) {
            const std::uint8_t* p = got.at(x, y);
            if (p[0] > p[2]) { // the square's texture is red, the background's blue
                sum_x += x;
                sum_y += y;
                ++count;
            }
        }
    }
    ASSERT_GT(count, 0);
    EXPECT_NEAR(count, k_side * k_side, k_side);
    EXPECT_NEAR(sum_x / count, left_a + k_speed / 2 + (k_side - 1) / 2.0, 1.0);
    EXPECT_NEAR(sum_y / count, k_top + (k_side - 1) / 2.0, 1.0);
    const double generated = detail::psnr(got, middle.colour);
    const double blended = detail::psnr(detail::blend(a.colour, b.colour), middle.colour);
    std::printf("[ psnr     ] interpolated %.2f dB, blend %.2f dB\n", generated, blended);
    EXPECT_GE(generated, blended + 3.0);
    finish(images);
}

INSTANTIATE_TEST_SUITE_P(WorkerAndPrimary, PostTasksOn,
                         ::testing::Values("worker", "worker_host_imported", "primary"),
                         [](const auto& param) { return std::string(param.param); });

// --- refusals -------------------------------------------------------------------------------

TEST_F(PostTasks, SettingsOfTheWrongSizeOrRangeFailThatSubmitAlone) {
    auto runtime = make_runtime("1");
    TaskDesc d = blur_task("blur", 16, 16);
    d.placement = Placement::parse("worker").value();
    const TaskId task = runtime->register_task(d);
    AppImage colour(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, 16, 16);
    const std::vector<std::uint8_t> px(16 * 16 * 4, 128);
    InputImage in = colour.write(px, 0);
    const std::array<std::byte, 3> odd{};
    SubmitResult r = runtime->submit(task, odd, std::span(&in, 1));
    EXPECT_EQ(r.error, TaskError::BadBytes);
    EXPECT_NE(r.reason.find("a blur job takes no bytes or one blur settings struct"),
              std::string::npos)
        << r.reason;
    BlurSettings wide;
    wide.radius = 500;
    r = runtime->submit(task, settings_bytes(wide), std::span(&in, 1));
    EXPECT_EQ(r.error, TaskError::BadBytes);
    EXPECT_NE(r.reason.find("radius is 0 to 64"), std::string::npos) << r.reason;
    EXPECT_EQ(runtime->stats(task).accepted, 0u);
    const Rgba8Image out = run_job(*runtime, task, {&colour}, {px});
    EXPECT_TRUE(out.pixels == px) << "the next good submit runs";
    finish({&colour});
}

TEST_F(PostTasks, ADescriptionThatDoesNotFitItsKindIsRefusedAtRegistration) {
    auto runtime = make_runtime("1");
    TaskDesc d = interpolate_task("frame-gen", 32, 32);
    d.inputs.pop_back();
    try {
        (void)runtime->register_task(d);
        ADD_FAILURE() << "an interpolation with two inputs was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("declares 2 inputs"), std::string::npos) << e.what();
    }
    d = interpolate_task("frame-gen", 32, 32);
    d.inputs[2].format = VK_FORMAT_R32_SFLOAT;
    try {
        (void)runtime->register_task(d);
        ADD_FAILURE() << "motion vectors as R32F were accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("motion input is RG16F"), std::string::npos)
            << e.what();
    }
    d = blur_task("blur", 32, 32);
    d.inputs[0].width = 16;
    EXPECT_THROW((void)runtime->register_task(d), Error);
    EXPECT_EQ(runtime->resources().tasks, 0u);
}

} // namespace
} // namespace tandem::test
