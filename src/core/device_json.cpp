#include "core/device_json.hpp"

namespace tandem::detail {

using nlohmann::json;

json to_json(const DeviceInfo& d) {
    json heaps = json::array();
    for (const auto& h : d.memory_heaps) {
        json heap = {{"size", h.size}, {"device_local", h.device_local}};
        heap["budget"] = h.budget ? json(*h.budget) : json(nullptr);
        heap["usage"] = h.usage ? json(*h.usage) : json(nullptr);
        heaps.push_back(heap);
    }
    json types = json::array();
    for (const auto& t : d.memory_types) {
        types.push_back({{"heap", t.heap},
                         {"device_local", t.device_local},
                         {"host_visible", t.host_visible},
                         {"host_coherent", t.host_coherent},
                         {"host_cached", t.host_cached}});
    }
    json families = json::array();
    for (const auto& q : d.queue_families) {
        families.push_back({{"index", q.index},
                            {"count", q.count},
                            {"graphics", q.graphics},
                            {"compute", q.compute},
                            {"transfer", q.transfer},
                            {"timestamp_valid_bits", q.timestamp_valid_bits}});
    }
    json formats = json::array();
    for (const auto& f : d.formats) {
        formats.push_back({{"name", f.name},
                           {"vk_format", static_cast<int>(f.format)},
                           {"color_attachment", f.color_attachment},
                           {"depth_attachment", f.depth_attachment},
                           {"storage", f.storage},
                           {"sampled", f.sampled},
                           {"transfer_src", f.transfer_src},
                           {"transfer_dst", f.transfer_dst}});
    }
    const auto& f = d.features;
    json features = {
        {"timeline_semaphore", f.timeline_semaphore},
        {"synchronization2", f.synchronization2},
        {"dynamic_rendering", f.dynamic_rendering},
        {"external_memory_host", f.external_memory_host},
        {"min_imported_host_pointer_alignment", f.min_imported_host_pointer_alignment},
        {"external_memory_fd", f.external_memory_fd},
        {"external_memory_fd_image", f.external_memory_fd_image},
        {"external_memory_dma_buf", f.external_memory_dma_buf},
        {"external_semaphore_fd", f.external_semaphore_fd},
        {"external_semaphore_fd_binary", f.external_semaphore_fd_binary},
        {"external_semaphore_fd_timeline", f.external_semaphore_fd_timeline},
        {"calibrated_timestamps", f.calibrated_timestamps},
        {"host_query_reset", f.host_query_reset},
        {"global_priority", f.global_priority},
        {"memory_budget", f.memory_budget},
    };
    json peers = json::array();
    for (const auto& uuid : d.cuda.peers) {
        peers.push_back(tandem::to_string(uuid));
    }
    json cuda = {{"present", d.cuda.present},
                 {"ordinal", d.cuda.present ? json(d.cuda.ordinal) : json(nullptr)},
                 {"reason", d.cuda.reason},
                 {"peers", peers}};
    return {
        {"index", d.index},
        {"physical_index", d.physical_index},
        {"virtual_index", d.virtual_index},
        {"name", d.name},
        {"vendor", d.vendor},
        {"vendor_id", d.vendor_id},
        {"device_id", d.device_id},
        {"pci_address", d.pci_address.empty() ? json(nullptr) : json(d.pci_address)},
        {"type", d.type},
        {"driver_name", d.driver_name},
        {"driver_info", d.driver_info},
        {"driver_version", d.driver_version},
        {"api_version", d.api_version},
        {"device_uuid", tandem::to_string(d.device_uuid)},
        {"driver_uuid", tandem::to_string(d.driver_uuid)},
        {"uma", d.uma},
        {"cache_coherent_uma", d.cache_coherent_uma},
        {"device_local_bytes", d.device_local_bytes},
        {"optimal_buffer_copy_row_pitch_alignment", d.optimal_buffer_copy_row_pitch_alignment},
        {"optimal_buffer_copy_offset_alignment", d.optimal_buffer_copy_offset_alignment},
        {"non_coherent_atom_size", d.non_coherent_atom_size},
        {"timestamp_period_ns", d.timestamp_period_ns},
        {"memory_heaps", heaps},
        {"memory_types", types},
        {"queue_families", families},
        {"formats", formats},
        {"features", features},
        {"extensions", d.extensions},
        {"cuda", cuda},
    };
}

json to_json(const PairInfo& p) {
    json paths = json::array();
    for (const auto& a : p.paths) {
        paths.push_back(
            {{"path", to_string(a.path)}, {"available", a.available}, {"reason", a.reason}});
    }
    const auto best = p.best_path();
    return {{"worker", p.worker},
            {"primary", p.primary},
            {"paths", paths},
            {"best_path", best ? json(to_string(*best)) : json(nullptr)},
            {"gpu_side_sync", p.gpu_side_sync},
            {"sync", p.gpu_side_sync ? "gpu" : "host-bridge"},
            {"sync_reason", p.sync_reason},
            {"cuda_peer", {{"present", p.cuda_peer.present}, {"reason", p.cuda_peer.reason}}}};
}

json devices_document(const std::vector<Adapter>& adapters, const std::vector<PairInfo>& pairs,
                      const Selection& selection) {
    json devices = json::array();
    for (const auto& a : adapters) {
        devices.push_back(to_json(a.info));
    }
    json pair_list = json::array();
    for (const auto& p : pairs) {
        pair_list.push_back(to_json(p));
    }
    return {{"schema_version", k_devices_schema_version},
            {"devices", devices},
            {"pairs", pair_list},
            {"selection", {{"primary", selection.primary}, {"workers", selection.workers}}}};
}

} // namespace tandem::detail
