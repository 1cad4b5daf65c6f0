# SPDX-License-Identifier: BSD-3-Clause
# Fails when the static library needs the C++ exception or RTTI runtime:
# __cxa_throw, __gxx_personality_v0, or typeinfo (_ZTI*) / typeinfo-name
# (_ZTS*) symbols, defined or undefined.
# Usage: cmake -DNM=<nm> -DLIB=<libedgelock.a> -P check_symbols.cmake
if(NOT NM OR NOT LIB)
  message(FATAL_ERROR "usage: cmake -DNM=<nm> -DLIB=<archive> -P check_symbols.cmake")
endif()
execute_process(COMMAND ${NM} ${LIB} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${LIB} failed (${rc}): ${err}")
endif()
# Guard against passing on empty output: the public API must be there.
if(NOT out MATCHES "T edgelock_client_create\n")
  message(FATAL_ERROR "edgelock_client_create not found in the output of ${NM} ${LIB}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(bad "")
set(count 0)
foreach(line IN LISTS lines)
  # "<address> <type> <name>" or "<blank> U <name>"
  if(line MATCHES "^[0-9a-fA-F ]* [A-Za-z] (.+)$")
    math(EXPR count "${count} + 1")
    set(sym "${CMAKE_MATCH_1}")
    if(sym MATCHES "^(__cxa_throw|__gxx_personality_v0|_ZTI.*|_ZTS.*)$")
      list(APPEND bad "${line}")
    endif()
  endif()
endforeach()
if(bad)
  string(REPLACE ";" "\n  " bad "${bad}")
  message(FATAL_ERROR "C++ exception/RTTI symbols in ${LIB}:\n  ${bad}")
endif()
message(STATUS "${LIB}: ${count} symbols, none of __cxa_throw, __gxx_personality_v0, _ZTI*, _ZTS*")
