// InputSources, the CPU side: a submit's holds go to the sources of their inputs (what none takes
// stays with the submit, which lets it go), the completion pass lets a slot's holds go and no
// other slot's, and a job's batch waits once per semaphore, for the greatest value.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "runtime/input_sources.hpp"
#include "runtime/task_chains.hpp"

namespace tandem::test {
namespace {

using detail::ChainedRead;
using detail::Gathered;
using detail::InputSource;
using detail::InputSources;

// A source that holds what names its input, per slot, and remembers what was let go.
class HoldingSource final : public InputSource {
public:
    HoldingSource(std::size_t declared, std::uint32_t slots, bool chained)
        : InputSource(declared), m_held(slots, 0), m_chained(chained) {}
    [[nodiscard]] TaskError failure() const noexcept override { return TaskError::ChainBroken; }
    [[nodiscard]] Gathered gather(detail::TaskInstance&, std::uint32_t, const detail::InputCopier&,
                                  JobInput&, std::vector<VkSemaphoreSubmitInfo>&,
                                  std::string&) noexcept override {
        return Gathered::Ready;
    }
    [[nodiscard]] bool hold(std::uint32_t slot, const ChainedRead& read) noexcept override {
        if (!m_chained || read.input != declared() || m_held[slot] != 0) {
            return false;
        }
        m_held[slot] = read.generation;
        return true;
    }
    void release(std::uint32_t slot, std::uint64_t done) noexcept override {
        if (m_held[slot] != 0) {
            released.push_back({slot, done});
            m_held[slot] = 0;
        }
    }
    [[nodiscard]] bool holding(std::uint32_t slot) const noexcept override {
        return m_held[slot] != 0;
    }
    std::vector<std::pair<std::uint32_t, std::uint64_t>> released;

private:
    std::vector<std::uint64_t> m_held;
    bool m_chained;
};

ChainedRead read_of(std::size_t input, std::uint64_t generation) {
    ChainedRead r;
    r.input = input;
    r.generation = generation;
    return r;
}

TEST(InputSources, EachHoldGoesToItsInputsSourceAndWhatNoneTakesStays) {
    InputSources sources;
    auto copied = std::make_unique<HoldingSource>(0, 3, false);
    auto chained = std::make_unique<HoldingSource>(1, 3, true);
    HoldingSource* chained_source = chained.get();
    sources.add(std::move(copied));
    sources.add(std::move(chained));

    // Input 0 is not chained, input 5 names no source: both stay with the submit.
    std::vector<ChainedRead> reads{read_of(0, 7), read_of(1, 7), read_of(5, 7)};
    sources.hold(2, reads);
    ASSERT_EQ(reads.size(), 2u);
    EXPECT_EQ(reads[0].input, 0u);
    EXPECT_EQ(reads[1].input, 5u);
    EXPECT_TRUE(sources.holding(2));
    EXPECT_FALSE(sources.holding(0));
    EXPECT_FALSE(sources.holding(1));

    // A slot already holding takes nothing more (its earlier hold is let go first).
    std::vector<ChainedRead> again{read_of(1, 8)};
    sources.hold(2, again);
    EXPECT_EQ(again.size(), 1u);

    sources.release(1, 40); // another slot: nothing of slot 2's goes
    EXPECT_TRUE(sources.holding(2));
    EXPECT_TRUE(chained_source->released.empty());
    sources.release(2, 41);
    EXPECT_FALSE(sources.holding(2));
    ASSERT_EQ(chained_source->released.size(), 1u);
    EXPECT_EQ(chained_source->released[0], (std::pair<std::uint32_t, std::uint64_t>{2, 41}));
    sources.release(2, 42); // nothing left: nothing let go twice
    EXPECT_EQ(chained_source->released.size(), 1u);
}

TEST(AddWait, OneWaitPerSemaphoreForItsGreatestValue) {
    const auto a = reinterpret_cast<VkSemaphore>(std::uintptr_t{0x10});
    const auto b = reinterpret_cast<VkSemaphore>(std::uintptr_t{0x20});
    const auto wait = [](VkSemaphore s, std::uint64_t value, VkPipelineStageFlags2 stage) {
        VkSemaphoreSubmitInfo w{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        w.semaphore = s;
        w.value = value;
        w.stageMask = stage;
        return w;
    };
    std::vector<VkSemaphoreSubmitInfo> waits;
    detail::add_wait(waits, wait(a, 5, VK_PIPELINE_STAGE_2_COPY_BIT));
    detail::add_wait(waits, wait(b, 2, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
    detail::add_wait(waits, wait(a, 3, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT));
    detail::add_wait(waits, wait(a, 9, VK_PIPELINE_STAGE_2_COPY_BIT));
    ASSERT_EQ(waits.size(), 2u);
    EXPECT_EQ(waits[0].semaphore, a);
    EXPECT_EQ(waits[0].value, 9u);
    EXPECT_EQ(waits[0].stageMask,
              VK_PIPELINE_STAGE_2_COPY_BIT | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
    EXPECT_EQ(waits[1].semaphore, b);
    EXPECT_EQ(waits[1].value, 2u);
}

} // namespace
} // namespace tandem::test
