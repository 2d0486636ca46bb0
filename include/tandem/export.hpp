// TANDEM_API: what libtandem.so exports. Tandem is compiled with every symbol hidden
// (-fvisibility=hidden -fvisibility-inlines-hidden); the public headers mark what an application
// links against:
//   - a class with member functions defined in the library (`class TANDEM_API Runtime`), which
//     also exports its vtable and typeinfo: needed for a type thrown across the boundary
//     (tandem::Error) and for one an application subclasses (tandem::Workload);
//   - a free function defined in the library (`[[nodiscard]] TANDEM_API Scene build(...)`);
//   - a struct with a member function defined in the library (PairInfo::best_path).
// Plain data structs, enums, aliases and inline or constexpr functions and variables need no
// mark. The static libraries (TANDEM_SHARED=OFF) keep the marks; they change nothing there.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define TANDEM_API __attribute__((visibility("default")))
#else
#define TANDEM_API
#endif
