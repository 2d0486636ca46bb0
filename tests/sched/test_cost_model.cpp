#include "sched/cost_model.hpp"

#include <cmath>
#include <limits>

#include "sched_fixture.hpp"

namespace tandem::test {
namespace {

using CostModels = SchedTest;

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
    EXPECT_DOUBLE_EQ(move->prepare.ms, 0.030);                    // the worker's prepare_us
    EXPECT_DOUBLE_EQ(move->transfer.ms, 0.050 + 4194304.0 / 4e6); // latency + bytes / bandwidth
    EXPECT_DOUBLE_EQ(move->sync.ms, 0.040);
    EXPECT_DOUBLE_EQ(move->reintegrate.ms, 0.010 + 4194304.0 / 20e6); // the primary's copy
    EXPECT_DOUBLE_EQ(move->total_ms(),
                     move->prepare.ms + move->transfer.ms + move->sync.ms + move->reintegrate.ms);

    const auto forced = model.move("mirror", shape, 1, 0, TransferPath::HostCopy);
    ASSERT_TRUE(forced.has_value());
    EXPECT_EQ(forced->path, TransferPath::HostCopy);
    EXPECT_DOUBLE_EQ(forced->transfer.ms, 0.100 + 4194304.0 / 2e6);
    EXPECT_FALSE(model.move("mirror", shape, 1, 0, TransferPath::SharedMemory).has_value());

    // Measured transfers replace the profile's once there are enough of them.
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(model.observe("mirror", 1, detail::Stage::Transfer, 0.5));
    }
    EXPECT_DOUBLE_EQ(model.move("mirror", shape, 1, 0)->transfer.ms, 0.5);
    EXPECT_EQ(model.move("mirror", shape, 1, 0)->transfer.source, detail::CostSource::Measured);
}

TEST_F(CostModels, AMeasuredDeliveryIsSplitInTheProfilesProportions) {
    detail::CostModel model(synthetic({}), infos());
    const auto shape = pattern(512);
    const auto before = *model.move("mirror", shape, 1, 0);
    const double predicted = before.transfer.ms + before.sync.ms + before.reintegrate.ms;
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(model.observe("mirror", 1, detail::Stage::Delivery, 3.0 * predicted));
    }
    ASSERT_TRUE(model.observe("mirror", 1, detail::Stage::Delivery, 500.0)); // a stall
    const auto after = *model.move("mirror", shape, 1, 0);
    EXPECT_NEAR(after.transfer.ms, 3.0 * before.transfer.ms, 1e-12);
    EXPECT_NEAR(after.sync.ms, 3.0 * before.sync.ms, 1e-12);
    EXPECT_NEAR(after.reintegrate.ms, 3.0 * before.reintegrate.ms, 1e-12);
    EXPECT_EQ(after.transfer.source, detail::CostSource::Measured);
    EXPECT_DOUBLE_EQ(after.prepare.ms, before.prepare.ms); // not part of delivery
    EXPECT_EQ(after.prepare.source, detail::CostSource::Profile);
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
