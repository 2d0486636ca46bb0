// What Tandem knows about each adapter (the capability matrix) and each ordered pair of adapters
// (the pair matrix). Plain data, filled once at discovery; safe to copy between threads.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "tandem/export.hpp"

namespace tandem {

using Uuid = std::array<std::uint8_t, VK_UUID_SIZE>;
[[nodiscard]] TANDEM_API std::string to_string(const Uuid& uuid);

struct QueueFamilyInfo {
    std::uint32_t index = 0;
    std::uint32_t count = 0;
    bool graphics = false;
    bool compute = false;
    bool transfer = false;
    std::uint32_t timestamp_valid_bits = 0;
};

struct MemoryHeapInfo {
    std::uint64_t size = 0;
    bool device_local = false;
    std::optional<std::uint64_t> budget; // VK_EXT_memory_budget, where present
    std::optional<std::uint64_t> usage;
};

struct MemoryTypeInfo {
    std::uint32_t heap = 0;
    bool device_local = false;
    bool host_visible = false;
    bool host_coherent = false;
    bool host_cached = false;
};

// What one format can be used for with optimal tiling (colour/depth target, storage image)
// and as a copy source or destination.
struct FormatSupport {
    VkFormat format = VK_FORMAT_UNDEFINED;
    std::string name; // "RGBA8", "BGRA8", "RGBA16F", "R32F", "D32"
    bool color_attachment = false;
    bool depth_attachment = false;
    bool storage = false;
    bool sampled = false;
    bool transfer_src = false;
    bool transfer_dst = false;
};

struct DeviceFeatures {
    bool timeline_semaphore = false;
    bool synchronization2 = false;
    bool dynamic_rendering = false;
    bool external_memory_host = false;
    std::uint64_t min_imported_host_pointer_alignment = 0; // 0 when external_memory_host is absent
    bool external_memory_fd = false;                       // opaque fd buffers
    // Opaque-fd export+import of an optimal RGBA8 2D image (transfer source and destination,
    // sampled): what the zero-copy path needs.
    bool external_memory_fd_image = false;
    bool external_memory_dma_buf = false;
    bool external_semaphore_fd = false;
    bool external_semaphore_fd_binary = false;   // opaque fd export+import of a binary semaphore
    bool external_semaphore_fd_timeline = false; // opaque fd export+import of a timeline semaphore
    bool calibrated_timestamps = false;
    bool host_query_reset = false; // vkResetQueryPool from the host (Vulkan 1.2 feature)
    bool global_priority = false;
    bool memory_budget = false;
    bool debug_utils = false;
};

// CUDA on one adapter, found through the driver API at run time (libcuda.so.1, loaded with
// dlopen; no CUDA toolkit is needed to build Tandem). Only NVIDIA adapters are looked up.
struct CudaDeviceInfo {
    bool present = false; // a CUDA device has this adapter's device UUID
    int ordinal = -1;     // that CUDA device's ordinal
    std::string reason;   // one sentence: which CUDA device it is, or why there is none
    // Device UUIDs of the other CUDA devices this one can access as a peer
    // (cuDeviceCanAccessPeer).
    std::vector<Uuid> peers;
};

// An optional extension or feature the driver has that a device was created without: only on an
// application's device (tandem/embedding.hpp), whose engine left it out. Tandem does without it.
struct NotEnabled {
    std::string name;      // "VK_KHR_external_semaphore_fd", or a feature: "hostQueryReset"
    std::string rules_out; // what Tandem does without, one sentence
};

// One row of the capability matrix. `index` is the adapter index Tandem uses everywhere
// (selectors, JSON, logs); `physical_index` and `virtual_index` say which physical device it
// is and which of its logical openings (see TANDEM_VIRTUAL_DEVICES).
struct DeviceInfo {
    std::uint32_t index = 0;
    std::uint32_t physical_index = 0;
    std::uint32_t virtual_index = 0;
    std::string name;
    std::uint32_t vendor_id = 0;
    std::string vendor;
    std::uint32_t device_id = 0;
    // The PCI address "dddd:bb:dd.f" (VK_EXT_pci_bus_info), stable across boots unlike an
    // index; empty where the driver does not report one (lavapipe).
    std::string pci_address;
    std::string type; // "discrete", "integrated", "virtual", "cpu", "other"
    std::string driver_name;
    std::string driver_info;
    std::string driver_version;
    std::string api_version;
    Uuid device_uuid{};
    Uuid driver_uuid{};
    bool uma = false;
    bool cache_coherent_uma = false;
    std::uint64_t optimal_buffer_copy_row_pitch_alignment = 1;
    std::uint64_t optimal_buffer_copy_offset_alignment = 1;
    std::uint64_t non_coherent_atom_size = 1;
    double timestamp_period_ns = 1.0;
    std::vector<MemoryHeapInfo> memory_heaps;
    std::vector<MemoryTypeInfo> memory_types;
    std::vector<QueueFamilyInfo> queue_families;
    std::vector<FormatSupport> formats;
    // What Tandem can use: on an application's device, only what its engine enabled.
    DeviceFeatures features;
    std::vector<std::string> extensions;  // every device extension the driver reports
    std::vector<NotEnabled> not_enabled;  // empty on the devices Tandem opens itself
    std::uint64_t device_local_bytes = 0; // sum of device-local heaps
    CudaDeviceInfo cuda;
};

// Transfer paths between a worker and the primary, best first.
enum class TransferPath { SameDevice, ZeroCopy, SharedMemory, CudaPeer, HostImported, HostCopy };
inline constexpr std::array<TransferPath, 6> k_all_transfer_paths = {
    TransferPath::SameDevice, TransferPath::ZeroCopy,     TransferPath::SharedMemory,
    TransferPath::CudaPeer,   TransferPath::HostImported, TransferPath::HostCopy};
[[nodiscard]] TANDEM_API const char* to_string(TransferPath path) noexcept;
// "same-device", "zero-copy", "shared-memory", "cuda-peer", "host-imported", "host-copy"; nullopt
// for anything else.
[[nodiscard]] TANDEM_API std::optional<TransferPath>
parse_transfer_path(std::string_view text) noexcept;
// Every path's name, best first, for messages and help: "same-device, zero-copy, ..., host-copy"
// with `last` (e.g. " or ") before the last one.
[[nodiscard]] TANDEM_API std::string transfer_path_names(std::string_view last = " or ");

struct PathAvailability {
    TransferPath path = TransferPath::HostCopy;
    bool available = false;
    std::string reason; // why it is or is not available, one sentence
};

// Whether a way of moving results that is not a TransferPath exists for a pair, and why.
struct InteropAvailability {
    bool present = false;
    std::string reason; // one sentence, for "no" as much as for "yes"
};

// One cell of the pair matrix: the worker's result moves worker -> primary (a runtime's:
// Runtime::worker_pairs).
struct TANDEM_API PairInfo {
    std::uint32_t worker = 0;
    std::uint32_t primary = 0;
    std::vector<PathAvailability> paths; // in k_all_transfer_paths order
    bool gpu_side_sync = false;          // a timeline semaphore can be shared between the two
    std::string sync_reason;
    // A CUDA peer copy between two GPUs (NVIDIA, libcuda.so.1 present, peer access): what the
    // cuda-peer path (TransferPath::CudaPeer) needs between different GPUs. That path is also
    // available between two openings of one CUDA GPU (a copy within it), where this says why
    // there is no peer.
    InteropAvailability cuda_peer;
    [[nodiscard]] std::optional<TransferPath> best_path() const;
    [[nodiscard]] bool allows(TransferPath path) const;
};

} // namespace tandem
