// Tandem's version: the one these headers belong to (TANDEM_VERSION_*, for the preprocessor) and
// the one of the library a program runs with (tandem::version(); `tandem --version` prints it).
// The package's compatibility rule (tandemConfigVersion.cmake, the SONAME): while the major
// version is 0, each minor version may change the API and ABI, so a program built against 0.1.x
// runs with any 0.1.y and nothing else (libtandem.so.0.1); from 1.0 on, with the same major
// version (libtandem.so.1).
#pragma once

#include "tandem/export.hpp"

#define TANDEM_VERSION_MAJOR 0
#define TANDEM_VERSION_MINOR 1
#define TANDEM_VERSION_PATCH 0

namespace tandem {

// "MAJOR.MINOR.PATCH" of the library, as TANDEM_VERSION_* were when it was built.
[[nodiscard]] TANDEM_API const char* version() noexcept;

} // namespace tandem
