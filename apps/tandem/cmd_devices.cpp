// `tandem devices`: the capability matrix (one row per adapter) and the pair matrix (one row per
// ordered worker -> primary pair), as tables or as the JSON documented in docs/devices-json.md.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "harness/table.hpp"

namespace tandem::cli {

namespace {

std::string yes_no(bool value) {
    return value ? "yes" : "no";
}

std::string bytes_text(std::uint64_t bytes) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
    return buffer;
}

std::string queue_text(const DeviceInfo& d) {
    std::string text;
    for (const auto& q : d.queue_families) {
        if (!text.empty()) {
            text += " ";
        }
        text += std::to_string(q.index) + ":";
        text += q.graphics ? "G" : "";
        text += q.compute ? "C" : "";
        text += q.transfer ? "T" : "";
        text += "x" + std::to_string(q.count);
    }
    return text;
}

void print_copy_queues(const Session& s, const std::vector<std::string>& reasons) {
    std::printf("\nCopy queues (where the device's transfer links copy)\n\n");
    for (std::size_t i = 0; i < reasons.size(); ++i) {
        std::printf("  %u: %s\n", s.devices.adapters()[i].index, reasons[i].c_str());
    }
}

void print_tables(const Session& s, const std::vector<PairInfo>& pairs) {
    std::printf("Devices (primary %u; workers:", s.devices.primary());
    for (auto w : s.devices.workers()) {
        std::printf(" %u", w);
    }
    std::printf(")\n\n");
    harness::Table devices({"#", "name", "type", "vendor", "driver", "api", "device uuid", "vram",
                            "uma", "queues (G/C/T x count)"});
    for (const DeviceInfo& d : s.devices.adapters()) {
        devices.add({std::to_string(d.index) +
                         (d.virtual_index > 0 ? "." + std::to_string(d.virtual_index) : ""),
                     d.name, d.type, d.vendor, d.driver_name + " " + d.driver_version,
                     d.api_version, to_string(d.device_uuid), bytes_text(d.device_local_bytes),
                     d.cache_coherent_uma ? "coherent" : yes_no(d.uma), queue_text(d)});
    }
    devices.print();

    // Selectors that survive a reboot, unlike the index (TANDEM_FRAMEGEN_WORKER, --primary, ...).
    std::printf("\nSelectors (stable across boots: give any of these, or part of the name)\n\n");
    harness::Table selectors({"#", "vendor:device", "pci", "uuid"});
    for (const DeviceInfo& d : s.devices.adapters()) {
        char ids[24];
        std::snprintf(ids, sizeof(ids), "%04x:%04x", d.vendor_id, d.device_id);
        selectors.add({std::to_string(d.index), ids,
                       d.pci_address.empty() ? "- (none reported)" : "pci:" + d.pci_address,
                       to_string(d.device_uuid)});
    }
    selectors.print();

    std::printf("\nFeatures\n\n");
    harness::Table features({"#", "timeline", "sync2", "dyn.render", "ext.mem host (align)",
                             "ext.mem fd (buf/img)", "dma-buf", "ext.sem fd (bin/timeline)",
                             "calibrated ts", "global prio", "mem budget", "cuda"});
    for (const DeviceInfo& d : s.devices.adapters()) {
        const auto& f = d.features;
        features.add({std::to_string(d.index), yes_no(f.timeline_semaphore),
                      yes_no(f.synchronization2), yes_no(f.dynamic_rendering),
                      f.external_memory_host
                          ? "yes (" + std::to_string(f.min_imported_host_pointer_alignment) + ")"
                          : "no",
                      yes_no(f.external_memory_fd) + "/" + yes_no(f.external_memory_fd_image),
                      yes_no(f.external_memory_dma_buf),
                      yes_no(f.external_semaphore_fd_binary) + "/" +
                          yes_no(f.external_semaphore_fd_timeline),
                      yes_no(f.calibrated_timestamps), yes_no(f.global_priority),
                      yes_no(f.memory_budget),
                      d.cuda.present ? "device " + std::to_string(d.cuda.ordinal) : "no"});
    }
    features.print();

    std::printf("\nFormats (C colour target, D depth, S storage, s sampled, src/dst transfer)\n\n");
    std::vector<std::string> header = {"#"};
    for (const auto& f : s.devices.adapters().front().formats) {
        header.push_back(f.name);
    }
    harness::Table formats(header);
    for (const DeviceInfo& d : s.devices.adapters()) {
        std::vector<std::string> row = {std::to_string(d.index)};
        for (const auto& f : d.formats) {
            std::string cell;
            cell += f.color_attachment ? "C" : "";
            cell += f.depth_attachment ? "D" : "";
            cell += f.storage ? "S" : "";
            cell += f.sampled ? "s" : "";
            cell += f.transfer_src ? " src" : "";
            cell += f.transfer_dst ? " dst" : "";
            row.push_back(cell.empty() ? "-" : cell);
        }
        formats.add(row);
    }
    formats.print();

    std::printf("\nPairs (worker -> primary)\n\n");
    std::vector<std::string> pair_header = {"worker", "primary"};
    for (const TransferPath path : k_all_transfer_paths) {
        pair_header.emplace_back(to_string(path));
    }
    for (const char* column : {"best", "sync"}) {
        pair_header.emplace_back(column);
    }
    harness::Table pair_table(pair_header);
    for (const auto& p : pairs) {
        if (p.worker == p.primary) {
            continue;
        }
        std::vector<std::string> row = {std::to_string(p.worker), std::to_string(p.primary)};
        for (const auto& a : p.paths) {
            row.push_back(yes_no(a.available));
        }
        const auto best = p.best_path();
        row.push_back(best ? to_string(*best) : "none");
        row.push_back(p.gpu_side_sync ? "gpu" : "host bridge");
        pair_table.add(row);
    }
    pair_table.print();

    std::printf("\nWhy (first pair of each kind)\n");
    std::vector<std::string> seen;
    for (const auto& p : pairs) {
        if (p.worker == p.primary) {
            continue;
        }
        std::string key;
        for (const auto& a : p.paths) {
            key += a.reason + "|";
        }
        key += p.cuda_peer.reason + "|" + p.sync_reason;
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
            continue;
        }
        seen.push_back(key);
        std::printf("  %u -> %u:\n", p.worker, p.primary);
        for (const auto& a : p.paths) {
            std::printf("    %-13s %-3s %s\n", to_string(a.path), yes_no(a.available).c_str(),
                        a.reason.c_str());
        }
        // The peer copy's own reason, where the cuda-peer path above does not already say it
        // (one GPU opened twice: the path copies within it).
        const auto cuda_path =
            std::find_if(p.paths.begin(), p.paths.end(), [](const PathAvailability& a) {
                return a.path == TransferPath::CudaPeer;
            });
        if (cuda_path != p.paths.end() && cuda_path->reason != p.cuda_peer.reason) {
            std::printf("    %-13s %-3s %s\n", "(peer copy)", yes_no(p.cuda_peer.present).c_str(),
                        p.cuda_peer.reason.c_str());
        }
        std::printf("    %-13s %-3s %s\n", "sync", p.gpu_side_sync ? "gpu" : "host",
                    p.sync_reason.c_str());
    }
}

} // namespace

Runner add_devices_command(CLI::App& app, const GlobalOptions& global) {
    auto* cmd = app.add_subcommand(
        "devices", "List every Vulkan device (CPU devices included) with its capabilities, and "
                   "which transfer paths and synchronisation each worker -> primary pair allows, "
                   "with the reasons");
    auto json = std::make_shared<bool>(false);
    auto copy_queues = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "Print the matrices as JSON (schema: docs/devices-json.md)");
    cmd->add_flag("--copy-queues", *copy_queues,
                  "Also open each device and measure which queue copies within it fastest (main "
                  "or transfer; the queue its transfer links copy on), and "
                  "say why, with the rates");
    return [json, copy_queues, &global]() {
        Session s = open_session(global);
        const auto pairs = s.devices.pair_matrix();
        const std::vector<std::string> reasons =
            *copy_queues ? s.devices.copy_queues() : std::vector<std::string>{};
        if (*json) {
            nlohmann::json doc = s.devices.devices_document(pairs);
            for (std::size_t i = 0; i < reasons.size() && i < doc["devices"].size(); ++i) {
                doc["devices"][i]["copy_queue"] = reasons[i];
            }
            std::printf("%s\n", doc.dump(2).c_str());
        } else {
            print_tables(s, pairs);
            if (!reasons.empty()) {
                print_copy_queues(s, reasons);
            }
        }
        return 0;
    };
}

} // namespace tandem::cli
