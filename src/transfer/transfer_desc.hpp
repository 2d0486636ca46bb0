// TransferDesc: what a TransferLink (transfer_link.hpp) is made with: the images' size and
// format, the ring of slots, the path (forced or negotiated), the bridge's limits and the
// in-place options. The runtime's streams (SlotTransport, src/runtime) are made with it too, so
// it carries their name and retire list besides.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <vulkan/vulkan_core.h>

#include "sync/pair_bridge.hpp"
#include "sync/retire_list.hpp"
#include "tandem/device_info.hpp"
#include "transfer/staging_copier.hpp"
#include "transfer/transfer_observer.hpp"

namespace tandem::detail {

// How a host bridge hands each band to the primary (TransferDesc::hand_off): Submit is
// BridgeSubmitHandOff, Signal is BridgeSignalHandOff (transfer/hand_off.hpp).
enum class BandHandOff { Submit, Signal };
[[nodiscard]] const char* to_string(BandHandOff hand_off) noexcept;

struct TransferDesc {
    // What the owner names the stream's objects and trace rows after (the runtime's slot images,
    // command buffers and hand-off track); the link itself names nothing by it.
    std::string name;
    std::uint32_t width = 0, height = 0;
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    std::uint32_t slots = 3;
    std::uint32_t band_rows = 0;        // 0: the path chooses (whole image when small)
    std::optional<TransferPath> forced; // else negotiated from the PairInfo, best first
    // The bridge's wait limit (0: never; the owner watches the worker for hangs), and how long
    // the destructor lets work in flight finish.
    std::chrono::milliseconds timeout{5000};
    // Whether the destructor settles both devices (Device::settle) once the link's last values
    // are reached. An owner that retires the link through a RetireList (the runtime) does not
    // need it: the list destroys it only once the GPU passed its retire_points() and a later
    // batch on each queue completed.
    bool settle_on_destroy = true;
    // Optional: grows while the worker device makes progress (HostBridge::Options::progress);
    // the bridge then gives up only after `timeout` without progress.
    std::function<std::uint64_t()> worker_progress;
    // How long the bridge polls a pending band without sleeping (HostBridge::Options::spin).
    // Unset: 1000 us on a machine with cores to spare (has_spare_cores()), else none.
    std::optional<std::chrono::microseconds> bridge_spin;
    // Host-bridged paths only: how the bridge hands each band to the primary. Submit: it submits
    // the band's copy. Signal: the copies are submitted with the worker's side and wait on a gate
    // the bridge raises; lower latency, but the primary's copy queue is held meanwhile
    // (BridgeSignalHandOff): for a link that has that queue to itself.
    BandHandOff hand_off = BandHandOff::Submit;
    // Paths with a stream of their copies (cuda-peer): true orders them on the GPUs by the
    // link's timelines (StreamHandOff) where both devices export timelines; false runs them as
    // the bridge's host step, handed on by `hand_off` (the benchmark compares the two).
    bool stream_copies = true;
    // Host-bridged paths: the bridge thread of this (worker, primary) pair, shared with the
    // pair's other links (the runtime's DevicePair); null: a thread of the link's own.
    std::shared_ptr<PairBridge> bridge;
    // Where the path is host-imported and the primary a CPU device (lavapipe), whose memory is
    // the host's: the primary's slot images are the staging itself (linear images over the
    // import), so the worker's copy is the whole transfer and the primary copies nothing
    // (HostImportedPath::read_in_place). Those images stay in GENERAL (primary_layout_after)
    // and must come from create_images(). Where the driver cannot, or the staging's rows do
    // not fit its images, the link copies as ever (reads_in_place() says which). For a
    // primary whose readers take any layout the link's says: a task's inputs.
    bool read_in_place = false;
    // The same on the worker's side, where the worker is a CPU device: its slot images are the
    // staging, which its work writes, so the primary's copy is the whole transfer. The work
    // must leave them in GENERAL (submit's worker_layout), and they need `worker_usage` (what
    // create_images() will be given for them) in linear tiling. For a worker whose work takes
    // the layout it is given: a task's outputs. Not with read_in_place (that side wins).
    bool write_in_place = false;
    VkImageUsageFlags worker_usage = 0;
    // Measurement only (band heights, GPU times, hand-off calls); may be null.
    std::shared_ptr<TransferObserver> observer;
    // The cuda-peer path's copy between the stagings; empty: CUDA's (tests give the host's).
    StagingCopierFactory cuda_copier;
    // The runtime's only: where the self-tests of a path leave what they made (choose_tested_path
    // in make_link_transport), so that nothing settles a device; the link itself does not use it.
    // An owner with one retires its links through it too (settle_on_destroy false).
    RetireList* retire = nullptr;
};

} // namespace tandem::detail
