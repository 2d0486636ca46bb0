#include "sched/profile.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "sched/cost_model.hpp"
#include "sched_fixture.hpp"
#include "tandem/error.hpp"

namespace tandem::test {
namespace {

using Profiles = SchedTest;

// Sets an environment variable for the life of the object, then restores it.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : m_name(name) {
        if (const char* old = std::getenv(name)) {
            m_old = old;
        }
        if (value != nullptr) {
            ::setenv(name, value, 1);
        } else {
            ::unsetenv(name);
        }
    }
    ~ScopedEnv() {
        if (m_old) {
            ::setenv(m_name, m_old->c_str(), 1);
        } else {
            ::unsetenv(m_name);
        }
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

std::filesystem::path scratch(const std::string& name) {
    auto dir = std::filesystem::temp_directory_path() /
               ("tandem-sched-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::remove_all(dir);
    return dir;
}

// The message of the Error `f` throws; fails the test when it throws nothing.
template <typename F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected tandem::Error";
    return {};
}

TEST_F(Profiles, SkeletonCarriesEachAdaptersIdentity) {
    const auto devices = infos();
    ASSERT_GE(devices.size(), 3u);
    const auto profile = detail::profile_skeleton(devices);
    ASSERT_EQ(profile.devices.size(), devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        EXPECT_EQ(profile.devices[i].index, devices[i].index);
        EXPECT_EQ(profile.devices[i].virtual_index, devices[i].virtual_index);
        EXPECT_EQ(profile.devices[i].device_uuid, to_string(devices[i].device_uuid));
        EXPECT_EQ(profile.devices[i].driver_uuid, to_string(devices[i].driver_uuid));
        EXPECT_EQ(profile.devices[i].driver_version, devices[i].driver_version);
        EXPECT_EQ(profile.devices[i].name, devices[i].name);
    }
}

TEST_F(Profiles, RoundTripsThroughAFile) {
    auto profile = synthetic({{1.0}, {2.0}, {3.0}});
    profile.devices[1].workloads.push_back({"capture", 320, 240, 1916, 0.04, "security@demo#1"});
    const auto dir = scratch("roundtrip");
    const auto path = dir / "nested" / "profile.json";
    detail::save_profile(profile, path);
    const auto loaded = detail::load_profile(path);
    EXPECT_EQ(detail::to_json(loaded), detail::to_json(profile));
    EXPECT_EQ(loaded.devices[1].workloads.back().content, "security@demo#1");
    EXPECT_TRUE(loaded.devices[0].workloads.back().content.empty());
    EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
    const auto binding = detail::bind_profile(loaded, infos());
    for (const auto& d : infos()) {
        EXPECT_EQ(binding.at(d.index), d.index);
    }
    std::filesystem::remove_all(dir);
}

TEST_F(Profiles, DefaultPathFollowsXdgThenHome) {
    {
        ScopedEnv xdg("XDG_CACHE_HOME", "/var/tmp/xdg-cache");
        ScopedEnv home("HOME", "/home/someone");
        EXPECT_EQ(detail::default_profile_path(),
                  std::filesystem::path("/var/tmp/xdg-cache/tandem/profile.json"));
    }
    {
        // A relative XDG_CACHE_HOME is invalid by the XDG specification and ignored.
        ScopedEnv xdg("XDG_CACHE_HOME", "relative/cache");
        ScopedEnv home("HOME", "/home/someone");
        EXPECT_EQ(detail::default_profile_path(),
                  std::filesystem::path("/home/someone/.cache/tandem/profile.json"));
    }
    {
        ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
        ScopedEnv home("HOME", "/home/someone");
        EXPECT_EQ(detail::default_profile_path(),
                  std::filesystem::path("/home/someone/.cache/tandem/profile.json"));
    }
    {
        ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
        ScopedEnv home("HOME", nullptr);
        EXPECT_THROW((void)detail::default_profile_path(), Error);
    }
}

TEST_F(Profiles, RefusesADifferentDriverVersionNamingTheDevice) {
    auto profile = synthetic({});
    profile.devices[1].driver_version = "999.9.9";
    const auto message = error_of([&] { (void)detail::bind_profile(profile, infos()); });
    EXPECT_NE(message.find("adapter 1"), std::string::npos) << message;
    EXPECT_NE(message.find("driver version differs"), std::string::npos) << message;
    EXPECT_NE(message.find("999.9.9"), std::string::npos) << message;
    EXPECT_NE(message.find("tandem calibrate"), std::string::npos) << message;
    // The cost model refuses it the same way: nothing schedules from a stale profile.
    EXPECT_THROW(detail::CostModel(profile, infos()), Error);
}

TEST_F(Profiles, RefusesADifferentDeviceUuid) {
    auto profile = synthetic({});
    profile.devices[2].device_uuid = "00000000-0000-0000-0000-000000000000";
    const auto mismatches = detail::check_profile(profile, infos());
    ASSERT_EQ(mismatches.size(), 2u);
    EXPECT_EQ(mismatches[0].adapter, std::optional<std::uint32_t>(2));
    EXPECT_NE(mismatches[0].reason.find("device UUID differs"), std::string::npos)
        << mismatches[0].reason;
    // ...and the profile's device is not on this machine.
    EXPECT_FALSE(mismatches[1].adapter.has_value());
    EXPECT_NE(mismatches[1].reason.find("missing from this machine"), std::string::npos)
        << mismatches[1].reason;
    const auto message = error_of([&] { (void)detail::bind_profile(profile, infos()); });
    EXPECT_NE(message.find("does not match the devices present"), std::string::npos) << message;
    EXPECT_NE(message.find("tandem calibrate"), std::string::npos) << message;
}

TEST_F(Profiles, RefusesWhenAPresentDeviceIsNotInTheProfile) {
    auto profile = synthetic({});
    const auto last = profile.devices.back().index;
    profile.devices.pop_back();
    std::erase_if(profile.pairs,
                  [&](const auto& p) { return p.worker == last || p.primary == last; });
    const auto message = error_of([&] { (void)detail::bind_profile(profile, infos()); });
    EXPECT_NE(message.find("adapter " + std::to_string(last)), std::string::npos) << message;
    EXPECT_NE(message.find("not in the profile"), std::string::npos) << message;
}

TEST_F(Profiles, RefusesWhenAProfileDeviceIsMissing) {
    const auto profile = synthetic({});
    auto present = infos();
    present.pop_back();
    const auto message = error_of([&] { (void)detail::bind_profile(profile, present); });
    EXPECT_NE(message.find("missing from this machine"), std::string::npos) << message;
}

TEST_F(Profiles, RefusesFilesThatAreNotProfiles) {
    const auto dir = scratch("bad");
    std::filesystem::create_directories(dir);
    const auto path = dir / "profile.json";
    { std::ofstream(path) << "{ not json"; }
    auto message = error_of([&] { (void)detail::load_profile(path); });
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("not valid JSON"), std::string::npos) << message;

    auto document = detail::to_json(synthetic({}));
    document["schema_version"] = 99;
    { std::ofstream(path) << document.dump(); }
    message = error_of([&] { (void)detail::load_profile(path); });
    EXPECT_NE(message.find("schema_version 99"), std::string::npos) << message;

    document = detail::to_json(synthetic({}));
    document["pairs"][0]["paths"][0]["gbps"] = -1.0;
    { std::ofstream(path) << document.dump(); }
    message = error_of([&] { (void)detail::load_profile(path); });
    EXPECT_NE(message.find("gbps"), std::string::npos) << message;

    document = detail::to_json(synthetic({}));
    document["devices"][0]["workloads"][0]["width"] = -256;
    { std::ofstream(path) << document.dump(); }
    message = error_of([&] { (void)detail::load_profile(path); });
    EXPECT_NE(message.find("\"width\" of the wrong type"), std::string::npos) << message;

    document = detail::to_json(synthetic({}));
    document["created"] = 7;
    { std::ofstream(path) << document.dump(); }
    message = error_of([&] { (void)detail::load_profile(path); });
    EXPECT_NE(message.find("document has a \"created\" of the wrong type (7)"), std::string::npos)
        << message;

    document = detail::to_json(synthetic({}));
    document["devices"] = {{"index", 0}};
    { std::ofstream(path) << document.dump(); }
    message = error_of([&] { (void)detail::load_profile(path); });
    EXPECT_NE(message.find("has a \"devices\" that is not an array"), std::string::npos) << message;

    message = error_of([&] { (void)detail::load_profile(dir / "absent.json"); });
    EXPECT_NE(message.find("tandem calibrate"), std::string::npos) << message;
    std::filesystem::remove_all(dir);
}

TEST_F(Profiles, RefusesNumbersOutOfRangeNamingTheirPlace) {
    const auto dir = scratch("range");
    std::filesystem::create_directories(dir);
    const auto path = dir / "profile.json";
    // Beyond a double: the JSON library's out_of_range, once uncaught.
    auto text = detail::to_json(synthetic({})).dump();
    const std::string key = "\"prepare_us\":";
    text.replace(text.find(key) + key.size(),
                 text.find(',', text.find(key)) - text.find(key) - key.size(), "1e999");
    { std::ofstream(path) << text; }
    auto message = error_of([&] { (void)detail::load_profile(path); });
    EXPECT_NE(message.find(path.string() + " is unusable: the profile's /devices/0/prepare_us is "
                                           "1e999, a number out of range (byte "),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("tandem calibrate"), std::string::npos) << message;

    // Integers that do not fit the field: once wrapped or truncated without a word.
    auto document = detail::to_json(synthetic({}));
    document["devices"][0]["index"] = 4294967296ull;
    message = error_of([&] { (void)detail::profile_from_json(document); });
    EXPECT_NE(message.find("device 0 has \"index\" = 4294967296, out of range (0 to 4294967295)"),
              std::string::npos)
        << message;
    document = detail::to_json(synthetic({}));
    document["schema_version"] = 1e300;
    message = error_of([&] { (void)detail::profile_from_json(document); });
    EXPECT_NE(message.find("\"schema_version\" of the wrong type"), std::string::npos) << message;
    document["schema_version"] = -4294967296ll;
    message = error_of([&] { (void)detail::profile_from_json(document); });
    EXPECT_NE(message.find("\"schema_version\" = -4294967296, out of range"), std::string::npos)
        << message;
    document = detail::to_json(synthetic({}));
    document["devices"][0]["prepare_us"] = 1e300;
    message = error_of([&] { (void)detail::profile_from_json(document); });
    EXPECT_NE(message.find("\"prepare_us\" = "), std::string::npos) << message;
    EXPECT_NE(message.find("not a non-negative finite number"), std::string::npos) << message;
    std::filesystem::remove_all(dir);
}

// The profile parser takes any bytes (what fuzz_profile feeds it) and refuses with an Error.
TEST_F(Profiles, ParsesTextAndRefusesAnythingElse) {
    const auto profile = synthetic({{1.0}, {2.0}, {3.0}});
    EXPECT_EQ(detail::to_json(detail::parse_profile(detail::to_json(profile).dump())),
              detail::to_json(profile));
    for (const std::string text : {"", "[]", "7", "{\"schema_version\": 1e999}", "\xff\xfe",
                                   "{\"schema_version\": \"1\"}"}) {
        const auto message = error_of([&] { (void)detail::parse_profile(text); });
        EXPECT_NE(message.find("the profile"), std::string::npos) << text << ": " << message;
    }
}

} // namespace
} // namespace tandem::test
