// Every transfer path moves random images of every format and a spread of sizes byte-exactly,
// banded or not, into a poisoned destination. The two sides are separated by blocking waits
// here; TransferLink's tests cover the semaphores between them.
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/capabilities.hpp"
#include "core/image_cache.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"
#include "transfer/cuda_peer_path.hpp"
#include "transfer/link_copy_queue.hpp"
#include "transfer/same_device_path.hpp"
#include "transfer/transfer_path.hpp"
#include "transfer/zero_copy_path.hpp"
#include "transfer_test_support.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

using detail::Band;
using detail::Device;
using detail::Image;
using detail::QueueRole;

struct Size {
    std::uint32_t w, h;
};
constexpr Size k_sizes[] = {{1, 1}, {64, 64}, {129, 97}, {333, 257}, {1024, 17}};
constexpr VkFormat k_formats[] = {VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_B8G8R8A8_UNORM,
                                  VK_FORMAT_R16G16B16A16_SFLOAT, VK_FORMAT_R32_SFLOAT};

Image make_image(const Device& device, Size size, VkFormat format, VkImageUsageFlags usage,
                 const std::string& name) {
    detail::ImageDesc desc;
    desc.width = size.w;
    desc.height = size.h;
    desc.format = format;
    desc.usage = usage | VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    desc.name = name;
    desc.queue_families = {device.queue(QueueRole::Main).family(),
                           device.queue(QueueRole::Transfer).family()};
    return detail::create_image(device, desc);
}

// Worker side, host step, primary side, each waited for on the host, on the queues a link
// copies on (the paths' queue-family transfers name them).
void run_blocking(const detail::TransferPathBackend& path, std::uint32_t slot, const Image& src,
                  const Image& dst) {
    const auto& layout = path.layout();
    const QueueRole worker_queue = detail::copy_queue_role(path.worker());
    const QueueRole primary_queue = detail::copy_queue_role(path.primary());
    if (path.kind() == TransferPath::SameDevice) {
        const auto& same = static_cast<const detail::SameDevicePath&>(path);
        // The whole transfer, its barriers included (the link records nothing else for it).
        detail::submit_and_wait(path.worker(), worker_queue, [&](VkCommandBuffer cmd) {
            same.record_transfer(cmd, src.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dst.get());
        });
        return;
    }
    if (path.kind() == TransferPath::ZeroCopy) {
        // One band, the whole image: released by the worker, acquired by the primary.
        detail::submit_and_wait(path.worker(), worker_queue, [&](VkCommandBuffer cmd) {
            path.record_worker_band(cmd, slot, layout.band(0), src.get(),
                                    VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
        });
        detail::submit_and_wait(path.primary(), primary_queue, [&](VkCommandBuffer cmd) {
            path.record_primary_band(cmd, slot, layout.band(0), dst.get());
        });
        return;
    }
    detail::submit_and_wait(path.worker(), worker_queue, [&](VkCommandBuffer cmd) {
        for (std::uint32_t b = 0; b < layout.band_count; ++b) {
            path.record_worker_band(cmd, slot, layout.band(b), src.get(),
                                    VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
        }
    });
    for (std::uint32_t b = 0; b < layout.band_count; ++b) {
        ASSERT_EQ(path.host_step(slot, layout.band(b)), VK_SUCCESS);
    }
    detail::submit_and_wait(path.primary(), primary_queue, [&](VkCommandBuffer cmd) {
        detail::image_barrier(cmd, dst.get(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        for (std::uint32_t b = 0; b < layout.band_count; ++b) {
            path.record_primary_band(cmd, slot, layout.band(b), dst.get());
        }
        detail::image_barrier(cmd, dst.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_READ_BIT);
    });
}

// A skip's message starts with a tag naming what the machine lacks: scripts/check-skips.sh
// compares the skipped tests with tests/expected-skips.txt.
std::string lacks_path(TransferPath path) {
    return "[expected-skip:no-" + std::string(to_string(path)) + "] ";
}

using PathCase = std::tuple<TransferPath, VkFormat>;

class TransferPaths : public VulkanTest, public ::testing::WithParamInterface<PathCase> {};

// Round trip of random data for every size, with band heights chosen by the path and forced
// small, into a destination poisoned before each run; a second slot as well.
TEST_P(TransferPaths, RoundTripsRandomImagesExactly) {
    const auto [kind, format] = GetParam();
    const bool same = kind == TransferPath::SameDevice;
    Device& primary = open(0);
    Device& worker = same ? primary : open(1);
    const auto pair = detail::query_pair_info(worker.info(), primary.info());
    if (!pair.allows(kind)) {
        GTEST_SKIP() << lacks_path(kind) << to_string(kind) << " is not available here";
    }
    std::uint32_t seed = 1;
    for (const Size size : k_sizes) {
        for (const std::uint32_t band_rows : {0u, 7u}) {
            SCOPED_TRACE(std::to_string(size.w) + "x" + std::to_string(size.h) + " band_rows " +
                         std::to_string(band_rows));
            const auto layout = detail::staging_layout_for(worker.info(), primary.info(), size.w,
                                                           size.h, format, 2, band_rows);
            auto path = detail::make_transfer_path(kind, worker, primary, layout);
            ASSERT_EQ(path->kind(), kind);
            Image src;
            Image dst;
            if (kind == TransferPath::ZeroCopy) {
                // One allocation seen from both devices: the primary's poison is overwritten
                // by the worker's upload, which the primary then sees through its own image.
                detail::ImageDesc desc;
                desc.width = size.w;
                desc.height = size.h;
                desc.format = format;
                desc.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                             VK_IMAGE_USAGE_TRANSFER_DST_BIT;
                desc.name = "zero-copy";
                auto images = static_cast<const detail::ZeroCopyPath&>(*path).create_images(desc);
                src = std::move(images.first);
                dst = std::move(images.second);
            } else {
                src = make_image(worker, size, format, VK_IMAGE_USAGE_SAMPLED_BIT, "src");
                dst = make_image(primary, size, format, VK_IMAGE_USAGE_SAMPLED_BIT, "dst");
            }
            const auto bytes = random_bytes(layout.image_bytes(), seed++);
            const std::uint32_t slot = size.h % 2;
            poison_image(primary, dst, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
            upload_image(worker, src, bytes, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
            run_blocking(*path, slot, src, dst);
            const auto out = read_image(primary, dst, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
            ASSERT_EQ(first_difference(out, bytes), -1);
        }
    }
}

// The zero-copy path's slot pairs come back for reuse (the driver keeps memory of every exported
// pair destroyed): a pair given back is the next one of its description, moves data exactly
// again, and the pair's memory on either device is counted as kept, not in use.
TEST_F(VulkanTest, TheZeroCopyPathReusesThePairsItsSlotsGaveBack) {
    Device& primary = open(0);
    Device& worker = open(1);
    const auto pair = detail::query_pair_info(worker.info(), primary.info());
    if (!pair.allows(TransferPath::ZeroCopy)) {
        GTEST_SKIP() << lacks_path(TransferPath::ZeroCopy) << "zero-copy is not available here";
    }
    const auto layout = detail::staging_layout_for(worker.info(), primary.info(), 64, 48,
                                                   VK_FORMAT_R8G8B8A8_UNORM, 2, 0);
    auto path = detail::make_transfer_path(TransferPath::ZeroCopy, worker, primary, layout);
    const auto& zero_copy = static_cast<const detail::ZeroCopyPath&>(*path);
    detail::ImageDesc desc;
    desc.width = 64;
    desc.height = 48;
    desc.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                 VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    desc.name = "reused pair";
    VkImage first_worker = VK_NULL_HANDLE;
    VkImage first_primary = VK_NULL_HANDLE;
    {
        const auto images = zero_copy.create_images(desc);
        first_worker = images.first.get();
        first_primary = images.second.get();
    }
    EXPECT_EQ(worker.image_cache().idle().first, 1u);
    EXPECT_EQ(primary.image_cache().idle().first, 1u) << "the primary's side is kept too";
    std::uint32_t seed = 900;
    for (int round = 0; round < 20; ++round) {
        auto images = zero_copy.create_images(desc);
        ASSERT_EQ(images.first.get(), first_worker);
        ASSERT_EQ(images.second.get(), first_primary);
        const auto bytes = random_bytes(layout.image_bytes(), seed++);
        poison_image(primary, images.second, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
        upload_image(worker, images.first, bytes, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
        run_blocking(*path, static_cast<std::uint32_t>(round % 2), images.first, images.second);
        const auto out =
            read_image(primary, images.second, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
        ASSERT_EQ(first_difference(out, bytes), -1) << "round " << round;
    }
    EXPECT_EQ(worker.image_cache().reused(), 20u);
}

TEST_F(VulkanTest, TheCudaPathsVulkanSideMovesBandsExactly) {
    Device& primary = open(0);
    Device& worker = open(1);
    const auto pair = detail::query_pair_info(worker.info(), primary.info());
    if (!pair.allows(TransferPath::SharedMemory)) {
        GTEST_SKIP() << lacks_path(TransferPath::SharedMemory) << "no opaque-fd memory here";
    }
    // The host through both devices' mappings of the stagings stands in for CUDA's copy.
    const detail::StagingCopierFactory mapped = host_staging_copier();
    std::uint32_t seed = 500;
    for (const VkFormat format : k_formats) {
        for (const Size size : k_sizes) {
            for (const std::uint32_t band_rows : {0u, 7u}) {
                SCOPED_TRACE(detail::format_name(format) + " " + std::to_string(size.w) + "x" +
                             std::to_string(size.h) + " band_rows " + std::to_string(band_rows));
                const auto layout = detail::staging_layout_for(
                    worker.info(), primary.info(), size.w, size.h, format, 2, band_rows);
                // Opaque-fd memory is there (checked above): a failure here is a regression.
                const auto path =
                    std::make_unique<detail::CudaPeerPath>(worker, primary, layout, mapped);
                const Image src =
                    make_image(worker, size, format, VK_IMAGE_USAGE_SAMPLED_BIT, "src");
                const Image dst =
                    make_image(primary, size, format, VK_IMAGE_USAGE_SAMPLED_BIT, "dst");
                const auto bytes = random_bytes(layout.image_bytes(), seed++);
                poison_image(primary, dst, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
                upload_image(worker, src, bytes, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
                run_blocking(*path, size.h % 2, src, dst);
                const auto out = read_image(primary, dst, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
                ASSERT_EQ(first_difference(out, bytes), -1);
            }
        }
    }
}

// Worker image == primary image is the zero-copy case of the same-device path.
TEST_F(VulkanTest, SameDevicePathWithOneImageOnlyChangesLayout) {
    Device& device = open(0);
    const auto layout = detail::staging_layout_for(device.info(), device.info(), 129, 97,
                                                   VK_FORMAT_R8G8B8A8_UNORM, 1, 0);
    auto path = detail::make_transfer_path(TransferPath::SameDevice, device, device, layout);
    const Image image = make_image(device, {129, 97}, VK_FORMAT_R8G8B8A8_UNORM,
                                   VK_IMAGE_USAGE_SAMPLED_BIT, "shared");
    const auto bytes = random_bytes(layout.image_bytes(), 99);
    upload_image(device, image, bytes, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    run_blocking(*path, 0, image, image);
    EXPECT_EQ(first_difference(read_image(device, image, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL),
                               bytes),
              -1);
}

std::string case_name(const ::testing::TestParamInfo<PathCase>& info) {
    std::string name = std::string(to_string(std::get<0>(info.param))) + "_" +
                       detail::format_name(std::get<1>(info.param));
    for (char& c : name) {
        if (c == '-') {
            c = '_';
        }
    }
    return name;
}

INSTANTIATE_TEST_SUITE_P(AllPathsAndFormats, TransferPaths,
                         ::testing::Combine(::testing::ValuesIn(k_all_transfer_paths),
                                            ::testing::ValuesIn(k_formats)),
                         case_name);

TEST(StagingLayout, PadsRowsAndAlignsBandsAndSlots) {
    const auto l =
        detail::make_staging_layout(129, 97, VK_FORMAT_R16G16B16A16_SFLOAT, 3, 7, 128, 256, 64);
    EXPECT_EQ(l.texel_bytes, 8u);
    EXPECT_EQ(l.row_pitch % 128, 0u);
    EXPECT_GE(l.row_pitch, 129u * 8u);
    EXPECT_EQ(l.row_texels * 8u, l.row_pitch);
    EXPECT_EQ(l.band_count, 14u); // 13 bands of 7 rows and one of 6
    std::uint32_t rows = 0;
    for (std::uint32_t b = 0; b < l.band_count; ++b) {
        const Band band = l.band(b);
        EXPECT_EQ(band.first_row, rows);
        EXPECT_EQ(band.offset % 256, 0u);
        EXPECT_LE(band.offset + band.bytes, l.slot_stride);
        rows += band.rows;
    }
    EXPECT_EQ(rows, 97u);
    EXPECT_EQ(l.band(13).rows, 6u);
    EXPECT_EQ(l.slot_offset(2) % 256, 0u);
    EXPECT_EQ(l.total_bytes, 3 * l.slot_stride);
}

TEST(StagingLayout, TakesBandsOfGivenHeights) {
    const std::vector<std::uint32_t> heights{10, 50, 1, 36};
    const auto l = detail::make_staging_layout(129, 97, VK_FORMAT_R8G8B8A8_UNORM, 2, 7, 128, 256,
                                               64, detail::k_submitted_bands, heights);
    ASSERT_EQ(l.band_count, 4u); // the heights win over band_rows
    EXPECT_EQ(l.band_rows, 50u); // the tallest
    std::uint32_t rows = 0;
    VkDeviceSize end = 0;
    for (std::uint32_t b = 0; b < l.band_count; ++b) {
        const Band band = l.band(b);
        EXPECT_EQ(band.first_row, rows);
        EXPECT_EQ(band.rows, heights[b]);
        EXPECT_EQ(band.offset % 256, 0u);
        EXPECT_GE(band.offset, end); // no overlap
        end = band.offset + band.bytes;
        rows += band.rows;
    }
    EXPECT_LE(end, l.slot_stride);
    EXPECT_EQ(l.slot_offset(1) % 64, 0u);
    const auto bad = [](std::vector<std::uint32_t> h) {
        (void)detail::make_staging_layout(129, 97, VK_FORMAT_R8G8B8A8_UNORM, 2, 0, 1, 1, 1,
                                          detail::k_submitted_bands, h);
    };
    // Band heights are the caller's argument: refused as InvalidArgument.
    const auto refusal = [&](std::vector<std::uint32_t> h) {
        try {
            bad(std::move(h));
        } catch (const Error& e) {
            return e.category();
        }
        ADD_FAILURE() << "accepted";
        return ErrorCategory::Other;
    };
    EXPECT_EQ(refusal({10, 50, 36}), ErrorCategory::InvalidArgument);    // 96 rows
    EXPECT_EQ(refusal({10, 50, 0, 37}), ErrorCategory::InvalidArgument); // an empty band
    EXPECT_EQ(refusal({10, 50, 1, 37}), ErrorCategory::InvalidArgument); // 98 rows
    EXPECT_NO_THROW(bad({97}));
}

TEST(StagingLayout, SmallImagesMoveWholeAndLargeOnesInBands) {
    const auto small = detail::make_staging_layout(256, 256, VK_FORMAT_R8G8B8A8_UNORM, 3, 0, 1, 1);
    EXPECT_EQ(small.band_count, 1u);
    const auto large =
        detail::make_staging_layout(1920, 1080, VK_FORMAT_R8G8B8A8_UNORM, 3, 0, 1, 1);
    EXPECT_EQ(large.band_count, 4u); // 8 MiB: four bands of at least 2 MiB
    const auto hd = detail::make_staging_layout(1280, 720, VK_FORMAT_R8G8B8A8_UNORM, 3, 0, 1, 1);
    EXPECT_EQ(hd.band_count, 2u); // 3.5 MiB: two bands of 2 MiB and 1.5 MiB
    const auto huge = detail::make_staging_layout(3840, 2160, VK_FORMAT_R8G8B8A8_UNORM, 3, 0, 1, 1);
    EXPECT_EQ(huge.band_count, detail::k_submitted_bands.max_bands);
    // Bands released by a host signal (BandHandOff::Signal): at least 1.5 MiB, at most 5.
    const auto gated = detail::make_staging_layout(1920, 1080, VK_FORMAT_R8G8B8A8_UNORM, 3, 0, 1, 1,
                                                   1, detail::k_gated_bands);
    EXPECT_EQ(gated.band_count, 5u);
    EXPECT_EQ(gated.band_rows, 216u);
    const auto gated_hd = detail::make_staging_layout(1280, 720, VK_FORMAT_R8G8B8A8_UNORM, 3, 0, 1,
                                                      1, 1, detail::k_gated_bands);
    EXPECT_EQ(gated_hd.band_count, 3u); // 3.5 MiB: bands of at least 1.5 MiB
    const auto gated_small = detail::make_staging_layout(256, 256, VK_FORMAT_R8G8B8A8_UNORM, 3, 0,
                                                         1, 1, 1, detail::k_gated_bands);
    EXPECT_EQ(gated_small.band_count, 1u); // up to 2 MiB: whole
    const auto forced =
        detail::make_staging_layout(64, 64, VK_FORMAT_R8G8B8A8_UNORM, 3, 1000, 1, 1);
    EXPECT_EQ(forced.band_rows, 64u);
    EXPECT_EQ(forced.band_count, 1u);
    EXPECT_THROW((void)detail::make_staging_layout(0, 5, VK_FORMAT_R8G8B8A8_UNORM, 3, 0, 1, 1),
                 Error);
    EXPECT_THROW((void)detail::make_staging_layout(5, 5, VK_FORMAT_D16_UNORM, 3, 0, 1, 1), Error);
}

TEST_F(VulkanTest, ForcingAnUnavailablePathThrowsTheMatrixReason) {
    const auto pair = detail::query_pair_info(adapters()[1].info, adapters()[0].info);
    try {
        (void)detail::negotiate_path(pair, TransferPath::SameDevice);
        FAIL() << "expected tandem::Error";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("same-device"), std::string::npos) << what;
        EXPECT_NE(what.find(pair.paths[0].reason), std::string::npos) << what;
    }
    EXPECT_EQ(detail::negotiate_path(pair, TransferPath::HostCopy), TransferPath::HostCopy);
    EXPECT_EQ(detail::negotiate_path(pair, std::nullopt), *pair.best_path());
    const auto self = detail::query_pair_info(adapters()[0].info, adapters()[0].info);
    EXPECT_EQ(detail::negotiate_path(self, std::nullopt), TransferPath::SameDevice);
    EXPECT_THROW((void)detail::negotiate_path(self, TransferPath::HostImported), Error);
}

// Where CUDA is absent (no libcuda.so.1, or no NVIDIA adapter), forcing the cuda-peer path is
// refused with the pair matrix's reason, and building it directly refuses with CUDA's.
TEST_F(VulkanTest, TheCudaPathIsRefusedWithItsReasonWithoutCuda) {
    const auto pair = detail::query_pair_info(adapters()[1].info, adapters()[0].info);
    if (pair.allows(TransferPath::CudaPeer)) {
        GTEST_SKIP() << "[expected-skip:cuda-present] CUDA drives these adapters";
    }
    try {
        (void)detail::negotiate_path(pair, TransferPath::CudaPeer);
        FAIL() << "expected tandem::Error";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("cuda-peer"), std::string::npos) << what;
        EXPECT_NE(what.find(pair.cuda_peer.reason), std::string::npos) << what;
    }
    detail::Device& worker = open(1);
    detail::Device& primary = open(0);
    const auto layout = detail::staging_layout_for(worker.info(), primary.info(), 64, 32,
                                                   VK_FORMAT_R8G8B8A8_UNORM, 2, 0);
    try {
        (void)detail::make_transfer_path(TransferPath::CudaPeer, worker, primary, layout);
        FAIL() << "expected tandem::Error";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_TRUE(what.find("CUDA") != std::string::npos ||
                    what.find("no CUDA device") != std::string::npos)
            << what;
        EXPECT_NE(e.hint().find("host-copy"), std::string::npos) << e.hint();
    }
}

} // namespace
} // namespace tandem::test
