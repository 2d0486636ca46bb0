// The public headers' value types and names, as an application uses them (no device): every
// Placement factory with its text form and parse() round trip, Error's parts, each to_string
// of the public headers (one distinct, non-empty name per value; a value outside the enum
// answered without naming a real one), TaskStats::transfer_path's text, a built Scene's counts
// and mesh names, and a read-back image's texels, refused outside the image. All through
// tandem/tandem.hpp alone.
#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

// The one include an application needs: everything below comes through it.
#include "tandem/tandem.hpp"

namespace tandem {
namespace {

// Names of `values` are non-empty and distinct; a value outside the enum gets a name that is
// none of them (never one of the real values', which would hide the bug that made it).
template <typename Enum, std::size_t N>
void expect_distinct_names(const std::array<Enum, N>& values) {
    std::set<std::string> names;
    for (Enum v : values) {
        const std::string name = to_string(v);
        EXPECT_FALSE(name.empty()) << static_cast<int>(v);
        EXPECT_TRUE(names.insert(name).second) << "two values are called " << name;
    }
    const std::string unknown = to_string(static_cast<Enum>(1000));
    EXPECT_FALSE(unknown.empty());
    EXPECT_EQ(names.count(unknown), 0u) << unknown;
}

TEST(PublicPlacement, EachFactoryWritesItsTextAndParsesBack) {
    struct Case {
        Placement placement;
        std::string text;
        PlacementKind kind;
        bool manual;
    };
    const std::vector<Case> cases = {
        {Placement::automatic(), "auto", PlacementKind::Auto, false},
        {Placement::on_primary(), "primary", PlacementKind::Primary, true},
        {Placement::on_a_worker(), "worker", PlacementKind::Worker, true},
        {Placement::on_worker(3), "worker:3", PlacementKind::Worker, true},
        {Placement::on_adapter(2), "2", PlacementKind::Device, true},
        {Placement::on_device("2"), "2", PlacementKind::Device, true},
        {Placement::on_device("nvidia"), "device:nvidia", PlacementKind::Device, true},
        {Placement::on_device("1a2b3c"), "device:1a2b3c", PlacementKind::Device, true},
    };
    for (const Case& c : cases) {
        EXPECT_EQ(c.placement.kind, c.kind) << c.text;
        EXPECT_EQ(c.placement.manual(), c.manual) << c.text;
        EXPECT_EQ(c.placement.to_string(), c.text);
        const auto parsed = Placement::parse(c.text);
        ASSERT_TRUE(parsed) << c.text;
        EXPECT_EQ(*parsed, c.placement) << c.text;
    }
    // on_a_worker leaves the choice to the runtime; on_worker names one.
    EXPECT_FALSE(Placement::on_a_worker().worker);
    EXPECT_EQ(Placement::on_worker(3).worker, 3u);
    EXPECT_NE(Placement::on_a_worker(), Placement::on_worker(0));
    // An index names its adapter at once; any other selector is resolved by the runtime.
    EXPECT_EQ(Placement::on_adapter(7).adapter, 7u);
    EXPECT_EQ(Placement::on_adapter(7).device, "7");
    EXPECT_EQ(Placement::on_device("7").adapter, 7u);
    EXPECT_FALSE(Placement::on_device("nvidia").adapter);
    EXPECT_EQ(Placement::on_device("nvidia").device, "nvidia");
    // A selector that only looks like an index keeps its text, and still round-trips.
    const Placement padded = Placement::on_device("02");
    EXPECT_EQ(padded.adapter, 2u);
    EXPECT_EQ(padded.to_string(), "device:02");
    EXPECT_EQ(Placement::parse(padded.to_string()), padded);
    for (const char* bad : {"", "Auto", "worker:", "worker:x", "worker:-1", "device:", "gpu"}) {
        EXPECT_FALSE(Placement::parse(bad)) << "'" << bad << "'";
    }
}

TEST(PublicError, KeepsItsResultContextAndHintApart) {
    const Error vulkan(VK_ERROR_DEVICE_LOST, "Submitting the copy", "Restart the application");
    EXPECT_EQ(vulkan.result(), VK_ERROR_DEVICE_LOST);
    EXPECT_EQ(vulkan.context(), "Submitting the copy");
    EXPECT_EQ(vulkan.hint(), "Restart the application");
    EXPECT_STREQ(vulkan.what(),
                 "Submitting the copy (VK_ERROR_DEVICE_LOST). Restart the application");
    const Error plain("The scene has no mesh");
    EXPECT_EQ(plain.result(), VK_SUCCESS);
    EXPECT_EQ(plain.context(), "The scene has no mesh");
    EXPECT_EQ(plain.hint(), "");
    EXPECT_STREQ(plain.what(), "The scene has no mesh");
    try {
        throw Error("Loading scene.gltf failed", "Check the file");
    } catch (const std::runtime_error& e) { // catchable as the standard type
        const auto* error = dynamic_cast<const Error*>(&e);
        ASSERT_NE(error, nullptr);
        EXPECT_EQ(error->context(), "Loading scene.gltf failed");
    }
}

// The per-frame calls' results are one CallResult each, so code that reports a failure takes
// any of them the same way.
std::string describe(const CallResult& result) {
    return result.failed() ? std::string(to_string(result.error)) + ": " + result.reason : "ok";
}

TEST(PublicResults, EveryPerFrameResultIsACallResult) {
    static_assert(std::is_base_of_v<CallResult, SubmitResult>);
    static_assert(std::is_base_of_v<CallResult, LendResult>);
    static_assert(std::is_base_of_v<CallResult, AcquireResult>);
    static_assert(std::is_base_of_v<CallResult, CalibrationResult>);
    SubmitResult submit;
    submit.error = TaskError::BadBytes;
    submit.reason = "two bytes";
    EXPECT_EQ(describe(submit), "bad bytes: two bytes");
    AcquireResult acquire;
    EXPECT_FALSE(acquire.failed());
    EXPECT_FALSE(acquire) << "no lease and no error: no output yet";
    EXPECT_EQ(describe(acquire), "ok");
    CalibrationResult calibration;
    calibration.error = TaskError::NotMeasured;
    EXPECT_TRUE(calibration.failed());
}

TEST(PublicNames, EveryEnumValueHasItsOwnName) {
    expect_distinct_names(std::array{SubmitStatus::Accepted, SubmitStatus::Busy,
                                     SubmitStatus::Preparing, SubmitStatus::Failed});
    expect_distinct_names(
        std::array{TaskError::None, TaskError::UnknownTask, TaskError::BadBytes, TaskError::Stopped,
                   TaskError::PreparationFailed, TaskError::DeviceLost, TaskError::NoTransferPath,
                   TaskError::OutOfMemory, TaskError::LeaseNotHeld, TaskError::NotMeasured,
                   TaskError::BadInputs, TaskError::ChainBroken, TaskError::LoanNotHeld,
                   TaskError::BadArgument, TaskError::PrimarySubmitFailed,
                   TaskError::WorkloadFailed, TaskError::TransferFailed});
    expect_distinct_names(std::array{ErrorCategory::Other, ErrorCategory::InvalidArgument,
                                     ErrorCategory::Unsupported, ErrorCategory::OutOfMemory,
                                     ErrorCategory::DeviceLost, ErrorCategory::Vulkan});
    expect_distinct_names(
        std::array{RuntimeEventKind::JobFailed, RuntimeEventKind::TaskStopped,
                   RuntimeEventKind::PreparationFailed, RuntimeEventKind::DeviceLost,
                   RuntimeEventKind::TransferPathDropped, RuntimeEventKind::TaskMoved});
    expect_distinct_names(std::array{LogLevel::Trace, LogLevel::Debug, LogLevel::Info,
                                     LogLevel::Warn, LogLevel::Error, LogLevel::Off});
    expect_distinct_names(k_all_transfer_paths);
    EXPECT_STREQ(to_string(SubmitStatus::Accepted), "accepted");
    EXPECT_STREQ(to_string(TaskError::UnknownTask), "unknown task");
}

TEST(PublicNames, LogLevelsAndTransferPathsParseTheirOwnNames) {
    for (LogLevel level : {LogLevel::Trace, LogLevel::Debug, LogLevel::Info, LogLevel::Warn,
                           LogLevel::Error, LogLevel::Off}) {
        EXPECT_EQ(parse_log_level(to_string(level)), level) << to_string(level);
    }
    EXPECT_EQ(parse_log_level("warning"), LogLevel::Warn);
    EXPECT_FALSE(parse_log_level("WARN"));
    EXPECT_FALSE(parse_log_level(""));
    const std::vector<std::string> documented = {"same-device", "zero-copy",     "shared-memory",
                                                 "cuda-peer",   "host-imported", "host-copy"};
    for (std::size_t i = 0; i < k_all_transfer_paths.size(); ++i) {
        EXPECT_EQ(to_string(k_all_transfer_paths[i]), documented.at(i));
        EXPECT_EQ(parse_transfer_path(documented[i]), k_all_transfer_paths[i]);
    }
    EXPECT_FALSE(parse_transfer_path("host_copy"));
    EXPECT_EQ(transfer_path_names(),
              "same-device, zero-copy, shared-memory, cuda-peer, host-imported or host-copy");
}

TEST(PublicNames, VkResultsUuidsAndTaskIdsReadAsDocumented) {
    EXPECT_STREQ(to_string(VK_SUCCESS), "VK_SUCCESS");
    EXPECT_STREQ(to_string(VK_TIMEOUT), "VK_TIMEOUT");
    EXPECT_STREQ(to_string(VK_ERROR_DEVICE_LOST), "VK_ERROR_DEVICE_LOST");
    EXPECT_STREQ(to_string(VK_ERROR_OUT_OF_DEVICE_MEMORY), "VK_ERROR_OUT_OF_DEVICE_MEMORY");
    EXPECT_STREQ(to_string(static_cast<VkResult>(-123456)), "VK_RESULT_UNKNOWN");
    Uuid uuid{};
    for (std::size_t i = 0; i < uuid.size(); ++i) {
        uuid[i] = static_cast<std::uint8_t>(0x10 * i + 0xa);
    }
    EXPECT_EQ(to_string(uuid), "0a1a2a3a-4a5a-6a7a-8a9a-aabacadaeafa");
    EXPECT_EQ(to_string(Uuid{}), "00000000-0000-0000-0000-000000000000");
    EXPECT_EQ(to_string(TaskId{7, 3, 1}), "7:3");
    EXPECT_EQ(to_string(TaskId{}), "0:0");
    EXPECT_FALSE(TaskId{});
}

TEST(PublicScene, CountsImagesAndNamesMeshes) {
    SceneBuilder builder;
    const std::vector<std::uint8_t> texels(2 * 2 * 4, 200);
    const ImageId checker = builder.add_image(2, 2, texels, "checker");
    (void)builder.add_image(2, 2, texels, "unused");
    MaterialDesc paint;
    paint.base_color_image = checker;
    const MaterialId material = builder.add_material(paint);
    const std::vector<float> triangle = {0, 0, 0, 1, 0, 0, 0, 2, 0};
    PrimitiveDesc p;
    p.positions = triangle;
    p.material = material;
    const MeshId floor = builder.add_mesh("floor", {p});
    const MeshId wall = builder.add_mesh("wall", {p, p});
    const MeshId twin = builder.add_mesh("floor", {p});
    EXPECT_EQ(builder.image_count(), 2u);
    const std::shared_ptr<const Scene> scene = builder.build();
    EXPECT_EQ(builder.image_count(), 0u) << "the builder is empty again";
    EXPECT_EQ(scene->image_count(), 2u) << "an image no material uses still counts";
    EXPECT_EQ(scene->material_count(), 2u);
    EXPECT_EQ(scene->mesh_count(), 3u);
    EXPECT_EQ(scene->mesh_name(floor), "floor");
    EXPECT_EQ(scene->mesh_name(wall), "wall");
    EXPECT_EQ(scene->mesh_name(twin), "floor");
    EXPECT_EQ(scene->find_mesh("floor"), floor) << "the first of that name";
    EXPECT_FALSE(scene->find_mesh("ceiling"));
    EXPECT_THROW((void)scene->mesh_name(MeshId{3}), Error);
    const MeshBounds b = scene->mesh_bounds(wall);
    EXPECT_EQ(b.min, (std::array<float, 3>{0, 0, 0}));
    EXPECT_EQ(b.max, (std::array<float, 3>{1, 2, 0}));
    // A scene without images counts none.
    SceneBuilder plain;
    PrimitiveDesc white;
    white.positions = triangle;
    (void)plain.add_mesh("plain", {white});
    EXPECT_EQ(plain.build()->image_count(), 0u);
}

// tandem.hpp declares the whole API: trace export (tandem/trace.hpp) as well.
static_assert(std::is_same_v<decltype(&write_trace), void (*)(const Runtime&, const std::string&)>);

TEST(PublicNames, ATaskStatsTransferPathReadsAsItsNameOrWhyThereIsNone) {
    TaskStats stats;
    for (const TransferPath path : k_all_transfer_paths) {
        stats.transfer_path = path;
        EXPECT_EQ(transfer_path_name(stats), to_string(path));
    }
    stats.transfer_path.reset();
    stats.preparing = true;
    EXPECT_EQ(transfer_path_name(stats), "(preparing)");
    stats.preparing = false;
    EXPECT_EQ(transfer_path_name(stats), "(not prepared)");
    stats.error = TaskError::UnknownTask;
    EXPECT_EQ(transfer_path_name(stats), "");
}

TEST(PublicReadback, TexelReadsInsideTheImageAndRefusesOutsideIt) {
    ReadbackImage image;
    image.format = VK_FORMAT_R8G8B8A8_UNORM;
    image.extent = {3, 2};
    image.texel_bytes = 4;
    for (std::uint8_t i = 0; i < 3 * 2 * 4; ++i) {
        image.bytes.push_back(i);
    }
    EXPECT_EQ(image.texel(0, 0), 0x03020100u);
    EXPECT_EQ(image.texel(2, 1), 0x17161514u); // the last texel
    EXPECT_THROW((void)image.texel(3, 0), Error);
    EXPECT_THROW((void)image.texel(0, 2), Error);
    try {
        (void)image.texel(7, 9);
        ADD_FAILURE() << "texel (7, 9) of a 3x2 image was read";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("(7, 9) of a 3x2 image"), std::string::npos)
            << e.what();
        EXPECT_EQ(e.category(), ErrorCategory::InvalidArgument);
    }
    image.texel_bytes = 8; // RGBA16F: read `bytes`
    EXPECT_THROW((void)image.texel(0, 0), Error);
    EXPECT_THROW((void)ReadbackImage{}.texel(0, 0), Error) << "an empty image has no texel";
}

} // namespace
} // namespace tandem
