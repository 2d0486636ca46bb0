#include "sched/cost_model.hpp"

#include <cmath>
#include <limits>

#include "sched/explanation.hpp"
#include "sched_fixture.hpp"

namespace tandem::test {
namespace {

using CostModels = SyntheticSchedTest;

detail::WorkloadShape pattern(std::uint32_t size) {
    return {"pattern", size, size, 0, 0};
}
detail::WorkloadShape capture(std::uint32_t size, std::uint64_t triangles) {
    return {"capture", size, size, triangles, 0};
}

TEST(WorkloadPrediction, InterpolatesBetweenCalibratedSizes) {
    detail::DeviceProfile d;
    d.workloads = {{"pattern", 256, 256, 0, 1.0},      {"pattern", 1024, 1024, 0, 16.0},
                   {"capture", 512, 512, 1000, 2.0},   {"capture", 512, 512, 100000, 6.0},
                   {"capture", 1024, 1024, 1000, 8.0}, {"capture", 1024, 1024, 100000, 12.0}};
    // Calibrated points come back exactly.
    EXPECT_DOUBLE_EQ(*detail::predict_workload_ms(d, pattern(256)), 1.0);
    EXPECT_DOUBLE_EQ(*detail::predict_workload_ms(d, pattern(1024)), 16.0);
    // Linear in pixels between them: 512x512 is a fifth of the way from 256^2 to 1024^2.
    EXPECT_DOUBLE_EQ(*detail::predict_workload_ms(d, pattern(512)), 4.0);
    // Beyond the range the last segment's slope carries on.
    EXPECT_DOUBLE_EQ(*detail::predict_workload_ms(d, pattern(2048)), 64.0);
    // Below it, never under proportional scaling of the smallest point.
    EXPECT_DOUBLE_EQ(*detail::predict_workload_ms(d, pattern(128)), 0.25);
    // Captures: bilinear over pixels and triangles.
    EXPECT_DOUBLE_EQ(*detail::predict_workload_ms(d, capture(512, 50500)), 4.0);
    EXPECT_DOUBLE_EQ(*detail::predict_workload_ms(d, capture(1024, 100000)), 12.0);
    // Between 512^2 and 1024^2 at 1000 triangles: 2 + 6 * (pixels fraction).
    const double fraction = (768.0 * 768.0 - 512.0 * 512.0) / (1024.0 * 1024.0 - 512.0 * 512.0);
    EXPECT_NEAR(*detail::predict_workload_ms(d, capture(768, 1000)), 2.0 + 6.0 * fraction, 1e-9);
    // A kind the device was not calibrated for has no prediction.
    EXPECT_FALSE(detail::predict_workload_ms(d, {"fluid", 256, 256, 0, 0}).has_value());
}

TEST(WorkloadPrediction, ATaskCalibratedItselfIsPredictedByItsOwnSample) {
    detail::DeviceProfile d;
    d.workloads = {{"capture", 256, 256, 1000, 2.0},
                   {"capture", 1024, 1024, 1000, 8.0},
                   {"capture", 256, 256, 100000, 4.0},
                   {"capture", 1024, 1024, 100000, 10.0},
                   // The application's own task: far cheaper than the references suggest.
                   {"capture", 320, 240, 1916, 0.5, "security@demo#0123"}};
    detail::WorkloadShape security{"capture", 320, 240, 1916, 0, "security@demo#0123"};
    ASSERT_TRUE(detail::calibrated_task_ms(d, security).has_value());
    EXPECT_DOUBLE_EQ(*detail::calibrated_task_ms(d, security), 0.5);
    // The reference model never mixes the task sample into its interpolation.
    const double reference = *detail::predict_workload_ms(d, security);
    EXPECT_GT(reference, 2.0);
    // Other content, another size, or no content: no task sample.
    auto other = security;
    other.content = "security@demo#4567";
    EXPECT_FALSE(detail::calibrated_task_ms(d, other).has_value());
    auto resized = security;
    resized.width = 640;
    EXPECT_FALSE(detail::calibrated_task_ms(d, resized).has_value());
    auto plain = security;
    plain.content.clear();
    EXPECT_FALSE(detail::calibrated_task_ms(d, plain).has_value());
    EXPECT_DOUBLE_EQ(*detail::predict_workload_ms(d, plain), reference);
}

TEST(RobustEstimate, OneStallDoesNotMoveTheEstimate) {
    detail::RobustEstimate estimate;
    estimate.add(2.0);
    estimate.add(2.1);
    EXPECT_FALSE(estimate.estimate().has_value()) << "two samples are not enough to trust";
    estimate.add(500.0); // a stall among the very first samples
    EXPECT_DOUBLE_EQ(*estimate.estimate(), 2.1);
    for (int i = 0; i < 20; ++i) {
        estimate.add(i % 2 == 0 ? 1.9 : 2.1);
    }
    const double before = *estimate.estimate();
    estimate.add(1000.0);
    EXPECT_NEAR(*estimate.estimate(), before, 0.2 + 1e-12);
    EXPECT_LE(*estimate.estimate(), 2.1);
}

TEST(RobustEstimate, ALastingChangeMovesItWithinHalfAWindow) {
    detail::RobustEstimate estimate;
    for (int i = 0; i < 9; ++i) {
        estimate.add(2.0);
    }
    for (std::size_t i = 0; i < detail::RobustEstimate::k_window / 2; ++i) {
        estimate.add(10.0);
        EXPECT_DOUBLE_EQ(*estimate.estimate(), 2.0);
    }
    estimate.add(10.0);
    EXPECT_DOUBLE_EQ(*estimate.estimate(), 10.0);
}

TEST_F(CostModels, MeasurementsRefineTheProfileRobustly) {
    detail::CostModel model(synthetic({{1.0}, {1.0}, {1.0}}), infos());
    const auto shape = pattern(512);
    auto p = model.execute("mirror", shape, 1);
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->source, detail::CostSource::Profile);
    EXPECT_DOUBLE_EQ(p->ms, 4.0);
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(model.observe("mirror", 1, detail::Stage::Execute, 3.0));
    }
    p = model.execute("mirror", shape, 1);
    EXPECT_EQ(p->source, detail::CostSource::Measured);
    EXPECT_DOUBLE_EQ(p->ms, 3.0);
    ASSERT_TRUE(model.observe("mirror", 1, detail::Stage::Execute, 900.0));
    EXPECT_DOUBLE_EQ(model.execute("mirror", shape, 1)->ms, 3.0);
    // Other devices and other tasks keep the profile's numbers.
    EXPECT_EQ(model.execute("mirror", shape, 2)->source, detail::CostSource::Profile);
    EXPECT_EQ(model.execute("minimap", shape, 1)->source, detail::CostSource::Profile);
    // Nonsense timings are refused and change nothing.
    EXPECT_FALSE(model.observe("mirror", 1, detail::Stage::Execute, -1.0));
    EXPECT_FALSE(model.observe("mirror", 1, detail::Stage::Execute,
                               std::numeric_limits<double>::quiet_NaN()));
    model.forget("mirror");
    EXPECT_EQ(model.execute("mirror", shape, 1)->source, detail::CostSource::Profile);
}

TEST_F(CostModels, ATaskSampleComesFirstAndMeasurementsStillReplaceIt) {
    auto profile = synthetic({{1.0}, {1.0}, {1.0}});
    for (auto& d : profile.devices) {
        d.workloads.push_back({"pattern", 512, 512, 0, 0.25 * (d.index + 1), "mirror@x#1"});
    }
    detail::CostModel model(profile, infos());
    detail::WorkloadShape mirror{"pattern", 512, 512, 0, 0, "mirror@x#1"};
    for (std::uint32_t device = 0; device < 3; ++device) {
        const auto p = model.execute("mirror", mirror, device);
        ASSERT_TRUE(p.has_value());
        EXPECT_EQ(p->source, detail::CostSource::Profile);
        EXPECT_TRUE(p->task_calibrated);
        EXPECT_DOUBLE_EQ(p->ms, 0.25 * (device + 1));
        ASSERT_TRUE(p->reference_ms.has_value());
        EXPECT_DOUBLE_EQ(*p->reference_ms, 4.0);
    }
    // A task the profile did not measure falls back on the reference workloads.
    auto other = mirror;
    other.content = "minimap@x#2";
    const auto q = model.execute("minimap", other, 1);
    EXPECT_FALSE(q->task_calibrated);
    EXPECT_DOUBLE_EQ(q->ms, 4.0);
    // Measured timings still win.
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(model.observe("mirror", 1, detail::Stage::Execute, 0.7));
    }
    EXPECT_EQ(model.execute("mirror", mirror, 1)->source, detail::CostSource::Measured);
    EXPECT_DOUBLE_EQ(model.execute("mirror", mirror, 1)->ms, 0.7);
}

TEST_F(CostModels, MovingAResultCostsPreparationTransferSyncAndReintegration) {
    SyntheticLink link;
    link.gbps = 4.0;
    link.latency_us = 50.0;
    link.sync_us = 40.0;
    detail::CostModel model(synthetic({{1.0, 20.0}, {1.0, 30.0}, {1.0, 20.0}}, link), infos());
    const auto shape = pattern(1024); // 4 MiB of RGBA8
    ASSERT_EQ(shape.bytes(), 4u * 1024u * 1024u);
    const auto move = model.move("mirror", shape, 1, 0);
    ASSERT_TRUE(move.has_value());
    EXPECT_EQ(move->path, TransferPath::HostImported); // the cheaper of the two measured
    EXPECT_FALSE(move->gpu_side_sync);
    // Calibration timed each part apart: they stay apart, each from the profile.
    ASSERT_TRUE(move->prepare && move->parts);
    EXPECT_FALSE(move->delivery);
    const auto& parts = *move->parts;
    EXPECT_DOUBLE_EQ(move->prepare->ms, 0.030);                   // the worker's prepare_us
    EXPECT_DOUBLE_EQ(parts.transfer.ms, 0.050 + 4194304.0 / 4e6); // latency + bytes / bandwidth
    EXPECT_DOUBLE_EQ(parts.sync.ms, 0.040);
    EXPECT_DOUBLE_EQ(parts.reintegrate.ms, 0.010 + 4194304.0 / 20e6); // the primary's copy
    for (const auto* p : {&*move->prepare, &parts.transfer, &parts.sync, &parts.reintegrate}) {
        EXPECT_EQ(p->source, detail::CostSource::Profile);
    }
    EXPECT_DOUBLE_EQ(move->total_ms(),
                     move->prepare->ms + parts.transfer.ms + parts.sync.ms + parts.reintegrate.ms);
    EXPECT_DOUBLE_EQ(move->path_ms(), parts.transfer.ms);
    EXPECT_DOUBLE_EQ(move->primary_ms(), parts.reintegrate.ms);

    const auto forced = model.move("mirror", shape, 1, 0, TransferPath::HostCopy);
    ASSERT_TRUE(forced.has_value());
    EXPECT_EQ(forced->path, TransferPath::HostCopy);
    EXPECT_DOUBLE_EQ(forced->parts->transfer.ms, 0.100 + 4194304.0 / 2e6);
    EXPECT_FALSE(model.move("mirror", shape, 1, 0, TransferPath::SharedMemory).has_value());

    // A part the runtime timed apart replaces the profile's once there are enough of them; the
    // others keep the profile's, each saying so.
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(model.observe("mirror", 1, detail::Stage::Transfer, 0.5));
    }
    const auto timed = model.move("mirror", shape, 1, 0);
    EXPECT_DOUBLE_EQ(timed->parts->transfer.ms, 0.5);
    EXPECT_EQ(timed->parts->transfer.source, detail::CostSource::Measured);
    EXPECT_EQ(timed->parts->sync.source, detail::CostSource::Profile);
}

TEST_F(CostModels, AMeasuredDeliveryIsOneFigureNeverSplit) {
    detail::CostModel model(synthetic({}), infos());
    const auto shape = pattern(512);
    const auto before = *model.move("mirror", shape, 1, 0);
    ASSERT_TRUE(before.parts);
    const double predicted = before.parts->total_ms();
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(model.observe("mirror", 1, detail::Stage::Delivery, 3.0 * predicted));
    }
    ASSERT_TRUE(model.observe("mirror", 1, detail::Stage::Delivery, 500.0)); // a stall
    const auto after = *model.move("mirror", shape, 1, 0);
    // The runtime timed worker done -> ready as a whole: that is what the move reports.
    EXPECT_FALSE(after.parts) << "a delivery measured as a whole was split into parts";
    ASSERT_TRUE(after.delivery);
    EXPECT_DOUBLE_EQ(after.delivery->ms, 3.0 * predicted);
    EXPECT_EQ(after.delivery->source, detail::CostSource::Measured);
    EXPECT_EQ(after.path, before.path);
    ASSERT_TRUE(after.prepare);
    EXPECT_DOUBLE_EQ(after.prepare->ms, before.prepare->ms); // not part of delivery
    EXPECT_EQ(after.prepare->source, detail::CostSource::Profile);
    EXPECT_DOUBLE_EQ(after.total_ms(), before.prepare->ms + 3.0 * predicted);
    // The path carries the result for at most the whole delivery; the primary's share of it
    // was not measured apart.
    EXPECT_DOUBLE_EQ(after.path_ms(), 3.0 * predicted);
    EXPECT_DOUBLE_EQ(after.primary_ms(), 0.0);
    // The explanation says it as one measured figure.
    const auto text = detail::describe_move(after);
    EXPECT_NE(text.find("delivery"), std::string::npos) << text;
    EXPECT_NE(text.find("(measured, as a whole)"), std::string::npos) << text;
    EXPECT_EQ(text.find("transfer"), std::string::npos) << text;
    EXPECT_EQ(text.find("reintegrate"), std::string::npos) << text;
    detail::DeviceEstimate estimate;
    estimate.device = 1;
    estimate.move = after;
    const auto json = detail::to_json(estimate)["move"];
    EXPECT_EQ(json["delivery"]["source"], "measured");
    EXPECT_DOUBLE_EQ(json["delivery"]["ms"].get<double>(), 3.0 * predicted);
    EXPECT_TRUE(json["transfer"].is_null());
    EXPECT_TRUE(json["sync"].is_null());
    EXPECT_TRUE(json["reintegrate"].is_null());
    EXPECT_EQ(json["prepare"]["source"], "profile");
}

TEST_F(CostModels, WithoutThePairInTheProfileAMeasuredDeliveryAlonePricesTheMove) {
    // What the runtime has without a profile: the adapters' identities and its own timings.
    detail::CostModel model(detail::profile_skeleton(infos()), infos());
    const auto shape = pattern(256);
    EXPECT_FALSE(model.move("mirror", shape, 1, 0).has_value()) << "nothing known yet";
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(model.observe("mirror", 1, detail::Stage::Delivery, 2.5));
    }
    const auto move = model.move("mirror", shape, 1, 0, TransferPath::SharedMemory);
    ASSERT_TRUE(move.has_value());
    ASSERT_TRUE(move->delivery);
    EXPECT_DOUBLE_EQ(move->delivery->ms, 2.5);
    EXPECT_EQ(move->delivery->source, detail::CostSource::Measured);
    EXPECT_FALSE(move->parts);
    EXPECT_EQ(move->path, TransferPath::SharedMemory); // the path the runtime uses
    // Preparation was timed by nobody: unknown, not a made-up zero.
    EXPECT_FALSE(move->prepare.has_value());
    EXPECT_DOUBLE_EQ(move->total_ms(), 2.5);
    // Without a path named, none is claimed.
    EXPECT_FALSE(model.move("mirror", shape, 1, 0)->path.has_value());
}

TEST_F(CostModels, APairWithoutMeasuredPathsCannotMove) {
    auto profile = synthetic({});
    std::erase_if(profile.pairs, [](const auto& p) { return p.worker == 2 && p.primary == 0; });
    detail::CostModel model(profile, infos());
    EXPECT_FALSE(model.move("mirror", pattern(256), 2, 0).has_value());
    EXPECT_TRUE(model.move("mirror", pattern(256), 1, 0).has_value());
}

} // namespace
} // namespace tandem::test
