#include "tandem/version.hpp"

// The header's numbers as text, so that the version is written in one place.
#define TANDEM_TEXT_OF(x) #x
#define TANDEM_TEXT(x) TANDEM_TEXT_OF(x)

namespace tandem {

const char* version() noexcept {
    return TANDEM_TEXT(TANDEM_VERSION_MAJOR) "." TANDEM_TEXT(TANDEM_VERSION_MINOR) "." TANDEM_TEXT(
        TANDEM_VERSION_PATCH);
}

} // namespace tandem
