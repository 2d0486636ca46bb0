#include "core/json_refusal.hpp"

#include <vector>

#include <nlohmann/json.hpp>

namespace tandem::detail {
namespace {

// Where nlohmann::json refused a document: the byte, the token and the JSON pointer of the value
// being read ("" for the root). A SAX pass that keeps only the path, run once parsing has failed.
class JsonLocator {
public:
    bool null() { return value(); }
    bool boolean(bool) { return value(); }
    bool number_integer(nlohmann::json::number_integer_t) { return value(); }
    bool number_unsigned(nlohmann::json::number_unsigned_t) { return value(); }
    bool number_float(nlohmann::json::number_float_t, const nlohmann::json::string_t&) {
        return value();
    }
    bool string(nlohmann::json::string_t&) { return value(); }
    bool binary(nlohmann::json::binary_t&) { return value(); }
    bool start_object(std::size_t) {
        m_path.push_back({false, 0, {}});
        return true;
    }
    bool key(nlohmann::json::string_t& key) {
        m_path.back().key = key;
        return true;
    }
    bool end_object() {
        m_path.pop_back();
        return value();
    }
    bool start_array(std::size_t) {
        m_path.push_back({true, 0, {}});
        return true;
    }
    bool end_array() {
        m_path.pop_back();
        return value();
    }
    bool parse_error(std::size_t byte, const std::string& token, const nlohmann::json::exception&) {
        byte_at = byte;
        last_token = token;
        for (const Level& l : m_path) {
            pointer += "/";
            if (l.array) {
                pointer += std::to_string(l.index);
                continue;
            }
            for (char c : l.key) {
                pointer += c == '~'   ? std::string("~0")
                           : c == '/' ? std::string("~1")
                                      : std::string(1, c);
            }
        }
        return false;
    }

    std::size_t byte_at = 0;
    std::string last_token;
    std::string pointer;

private:
    struct Level {
        bool array;
        std::size_t index; // of the element being read, in an array
        std::string key;   // of the member being read, in an object
    };
    bool value() {
        if (!m_path.empty() && m_path.back().array) {
            ++m_path.back().index;
        }
        return true;
    }
    std::vector<Level> m_path;
};

} // namespace

JsonRefusal locate_json_refusal(std::string_view text) {
    JsonLocator where;
    (void)nlohmann::json::sax_parse(text.begin(), text.end(), &where);
    JsonRefusal out;
    out.byte = where.byte_at;
    out.token = where.last_token;
    out.pointer = where.pointer.empty() ? std::string("/") : where.pointer;
    return out;
}

} // namespace tandem::detail
