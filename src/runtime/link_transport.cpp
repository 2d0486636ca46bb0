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
    // TransferLink's worker is the sender, its primary the receiver.
    LinkTransport(const Device& sender, const Device& receiver, const PairInfo& pair,
                  const TransferDesc& desc)
        : m_link(sender, receiver, pair, desc) {}

    std::string path_name() const override { return to_string(m_link.path()); }
    bool shares_images() const noexcept override { return false; }
    bool images_are_the_path() const noexcept override {
        return m_link.path() == TransferPath::ZeroCopy;
    }
    bool may_wait_for(std::uint64_t receiver_value) const noexcept override {
        return m_link.may_wait_for(receiver_value);
    }
    SlotImages create_images(std::uint32_t slot, const std::string& name,
                             VkImageUsageFlags sender_usage,
                             VkImageUsageFlags receiver_usage) const override {
        LinkImages images = m_link.create_images(slot, name, sender_usage, receiver_usage);
        return {std::move(images.worker), std::move(images.primary)};
    }
    VkResult submit(std::uint32_t slot, VkImage sender_image, VkImageLayout sender_layout,
                    VkSemaphoreSubmitInfo sender_wait, VkImage receiver_image,
                    VkImageLayout receiver_layout, SlotTicket& out) noexcept override {
        TransferTicket ticket;
        const VkResult r = m_link.submit(slot, sender_image, sender_layout, sender_wait,
                                         receiver_image, receiver_layout, ticket);
        out.sender_value = ticket.worker_value;
        out.receiver_value = ticket.primary_value;
        return r;
    }
    bool reads_in_place() const noexcept override { return m_link.reads_in_place(); }
    bool writes_in_place() const noexcept override { return m_link.writes_in_place(); }
    VkImageLayout sender_layout_after(VkImageLayout sender_layout) const noexcept override {
        return m_link.worker_layout_after(sender_layout);
    }
    VkSemaphore sender_semaphore() const noexcept override {
        return m_link.worker_timeline().handle();
    }
    VkSemaphore receiver_semaphore() const noexcept override {
        return m_link.primary_timeline().handle();
    }
    VkResult receiver_value(std::uint64_t& out) const noexcept override {
        return m_link.completed_primary_value(out);
    }
    bool failed() const noexcept override { return m_link.failed(); }
    std::string error() const override { return m_link.error(); }
    std::string not_ready_reason() const override { return m_link.not_ready_reason(); }
    std::vector<RetirePoint> quiesce(std::chrono::milliseconds hand_off_wait) noexcept override {
        return m_link.quiesce(hand_off_wait);
    }

private:
    TransferLink m_link;
};

} // namespace

std::unique_ptr<SlotTransport> make_link_transport(const Device& sender, const Device& receiver,
                                                   const PairInfo& pair, const TransferDesc& desc,
                                                   PathHealth* health) {
    if (health == nullptr) {
        return std::make_unique<LinkTransport>(sender, receiver, pair, desc);
    }
    // Each round returns or drops a path, so it ends once the pair has none left (then
    // choose_tested_path throws the reason).
    for (;;) {
        const TransferPath path =
            choose_tested_path(sender, receiver, pair, desc.forced, desc.format, *health,
                               desc.cuda_copier, desc.retire);
        TransferDesc tested = desc;
        tested.forced = path;
        try {
            return std::make_unique<LinkTransport>(sender, receiver, health->restrict(pair),
                                                   tested);
        } catch (const Error& e) {
            (void)health->drop(pair.worker, pair.primary, path,
                               std::string("setting up a task's link failed: ") + e.what());
        }
    }
}

#else
std::unique_ptr<SlotTransport>
make_link_transport(const Device& /*sender*/, const Device& /*receiver*/, const PairInfo& /*pair*/,
                    const TransferDesc& /*desc*/, PathHealth* /*health*/) {
    throw Error("This build of Tandem has no cross-device transfer layer (src/transfer)",
                "Place the task on the primary (placement \"primary\") or build with src/transfer");
}

#endif

} // namespace tandem::detail
