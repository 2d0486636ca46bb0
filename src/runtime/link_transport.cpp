// The SlotTransport over src/transfer's TransferLink (every cross-device path).
#include "runtime/slot_transport.hpp"
#include "tandem/error.hpp"

#if TANDEM_HAVE_TRANSFER
#include "transfer/path_health.hpp"
#include "transfer/path_self_test.hpp"
#include "transfer/transfer_link.hpp"
#endif

namespace tandem::detail {

#if TANDEM_HAVE_TRANSFER
namespace {

class LinkTransport final : public SlotTransport {
public:
    LinkTransport(const Device& worker, const Device& primary, const PairInfo& pair,
                  const TransferDesc& desc)
        : m_link(worker, primary, pair, desc) {}

    std::string path_name() const override { return to_string(m_link.path()); }
    bool shares_images() const noexcept override { return false; }
    bool images_are_the_path() const noexcept override {
        return m_link.path() == TransferPath::ZeroCopy;
    }
    bool may_wait_for(std::uint64_t primary_value) const noexcept override {
        return m_link.may_wait_for(primary_value);
    }
    SlotImages create_images(std::uint32_t slot, const std::string& name,
                             VkImageUsageFlags worker_usage,
                             VkImageUsageFlags primary_usage) const override {
        LinkImages images = m_link.create_images(slot, name, worker_usage, primary_usage);
        return {std::move(images.worker), std::move(images.primary)};
    }
    VkResult submit(std::uint32_t slot, VkImage worker_image, VkImageLayout worker_layout,
                    VkSemaphoreSubmitInfo worker_wait, VkImage primary_image,
                    VkImageLayout primary_layout, SlotTicket& out) noexcept override {
        TransferTicket ticket;
        const VkResult r = m_link.submit(slot, worker_image, worker_layout, worker_wait,
                                         primary_image, primary_layout, ticket);
        out.worker_value = ticket.worker_value;
        out.primary_value = ticket.primary_value;
        return r;
    }
    bool reads_in_place() const noexcept override { return m_link.reads_in_place(); }
    bool writes_in_place() const noexcept override { return m_link.writes_in_place(); }
    VkImageLayout worker_layout_after(VkImageLayout worker_layout) const noexcept override {
        return m_link.worker_layout_after(worker_layout);
    }
    VkSemaphore worker_semaphore() const noexcept override {
        return m_link.worker_timeline().handle();
    }
    VkSemaphore primary_semaphore() const noexcept override {
        return m_link.primary_timeline().handle();
    }
    VkResult primary_value(std::uint64_t& out) const noexcept override {
        return m_link.completed_primary_value(out);
    }
    bool failed() const noexcept override { return m_link.failed(); }
    std::string error() const override { return m_link.error(); }
    std::string not_ready_reason() const override { return m_link.not_ready_reason(); }
    std::vector<RetirePoint> quiesce() noexcept override { return m_link.quiesce(); }

private:
    TransferLink m_link;
};

} // namespace

std::unique_ptr<SlotTransport> make_link_transport(const Device& worker, const Device& primary,
                                                   const PairInfo& pair, const TransferDesc& desc,
                                                   PathHealth* health) {
    if (health == nullptr) {
        return std::make_unique<LinkTransport>(worker, primary, pair, desc);
    }
    // Each round returns or drops a path, so it ends once the pair has none left (then
    // choose_tested_path throws the reason).
    for (;;) {
        const TransferPath path =
            choose_tested_path(worker, primary, pair, desc.forced, desc.format, *health,
                               desc.cuda_copier, desc.retire);
        TransferDesc tested = desc;
        tested.forced = path;
        try {
            return std::make_unique<LinkTransport>(worker, primary, health->restrict(pair), tested);
        } catch (const Error& e) {
            (void)health->drop(pair.worker, pair.primary, path,
                               std::string("setting up a task's link failed: ") + e.what());
        }
    }
}

#else
std::unique_ptr<SlotTransport>
make_link_transport(const Device& /*worker*/, const Device& /*primary*/, const PairInfo& /*pair*/,
                    const TransferDesc& /*desc*/, PathHealth* /*health*/) {
    throw Error("This build of Tandem has no cross-device transfer layer (src/transfer)",
                "Place the task on the primary (placement \"primary\") or build with src/transfer");
}

#endif

} // namespace tandem::detail
