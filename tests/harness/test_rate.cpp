#include <gtest/gtest.h>

#include "harness/rate.hpp"
#include "tandem/error.hpp"

namespace tandem::test {
namespace {

TEST(Rate, AcceptsBothDecimalMarks) {
    EXPECT_DOUBLE_EQ(harness::parse_rate_hz("37.5"), 37.5);
    EXPECT_DOUBLE_EQ(harness::parse_rate_hz("37,5"), 37.5);
    EXPECT_DOUBLE_EQ(harness::parse_rate_hz("60"), 60.0);
    EXPECT_DOUBLE_EQ(harness::parse_rate_hz("0.25"), 0.25);
}

TEST(Rate, RefusesWhatIsNotAPositiveFiniteNumber) {
    for (const char* bad : {"0", "-1", "nan", "inf", "abc", "", "1.2.3", "0x10", "1e999", "-0"}) {
        try {
            (void)harness::parse_rate_hz(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const Error& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(std::string("'") + bad + "'"), std::string::npos) << what;
            EXPECT_NE(what.find("positive finite"), std::string::npos) << what;
            EXPECT_EQ(e.category(), ErrorCategory::InvalidArgument) << what;
        }
    }
}

} // namespace
} // namespace tandem::test
