# cmake -DLIBRARY=<libtandem.so> -DNM=<nm> -P check_exports.cmake
# libtandem.so's dynamic symbol table holds namespace tandem alone: every defined symbol is in
# namespace tandem (or is the typeinfo or vtable of a tandem class), none is an internal one
# (tandem::detail), and what applications depend on across the boundary is there (the typeinfo
# of tandem::Error, which they catch, and of tandem::Workload, which they subclass). No linker
# symbol (_init, _fini, _edata, _end, __bss_start) is allowed either: the version script
# (cmake/tandem.map) leaves none global. Undefined symbols (what the library takes from
# libvulkan, libstdc++ or a dependency linked as a shared library) are not checked.
execute_process(COMMAND ${NM} -D --defined-only -C ${LIBRARY}
    OUTPUT_VARIABLE table RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -D --defined-only -C ${LIBRARY} failed (${rc})")
endif()
string(REPLACE "\n" ";" lines "${table}")
set(outside "")
set(internal "")
set(count 0)
foreach(line IN LISTS lines)
    if(line STREQUAL "")
        continue()
    endif()
    math(EXPR count "${count} + 1")
    # "<address> <type> <name>"
    string(REGEX REPLACE "^[0-9a-f]* *[A-Za-z] " "" name "${line}")
    if(NOT name MATCHES "^((typeinfo|typeinfo name|vtable) for )?tandem::")
        string(APPEND outside "  ${line}\n")
    elseif(name MATCHES "^((typeinfo|typeinfo name|vtable) for )?tandem::detail::")
        string(APPEND internal "  ${line}\n")
    endif()
endforeach()
if(NOT outside STREQUAL "")
    message(FATAL_ERROR "${LIBRARY} exports symbols outside namespace tandem:\n${outside}")
endif()
if(NOT internal STREQUAL "")
    message(FATAL_ERROR "${LIBRARY} exports internal symbols (tandem::detail):\n${internal}")
endif()
foreach(needed "typeinfo for tandem::Error" "typeinfo for tandem::Workload"
        "tandem::Runtime::Runtime(tandem::RuntimeOptions const&)"
        "tandem::LeaseReadback::read(" "tandem::version()")
    string(FIND "${table}" "${needed}" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "${LIBRARY} does not export ${needed}")
    endif()
endforeach()
message(STATUS "${LIBRARY}: ${count} defined dynamic symbols, all in namespace tandem")
