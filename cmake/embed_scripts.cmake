# SPDX-License-Identifier: BSD-3-Clause
# Turns src/scripts/*.lua into a C++ source with each script's bytes and the
# SHA1 Redis will know it by (EVALSHA). Run as: cmake -DOUT=... -DSCRIPTS=a|b -P
# What is embedded is the script without its comment lines and indentation:
# the same code, a third of the bytes in every binary (the comments, KEYS and
# ARGV lists included, stay in the .lua files). Redis hashes what we send, so
# the SHA1 is the stripped text's.
string(REPLACE "|" ";" SCRIPTS "${SCRIPTS}")
set(body "// Generated from src/scripts/*.lua by cmake/embed_scripts.cmake. Do not edit.\n#include \"redisson/scripts.hpp\"\n\nnamespace edgelock {\n\n")
set(table "const Script kScripts[] = {\n")
foreach(path IN LISTS SCRIPTS)
  get_filename_component(name "${path}" NAME_WE)
  file(READ "${path}" text)
  string(REGEX REPLACE "(^|\n)[ \t]*--[^\n]*" "\\1" text "${text}") # whole-line comments
  string(REGEX REPLACE "\n[ \t]+" "\n" text "${text}")                 # indentation
  string(REGEX REPLACE "\n\n+" "\n" text "${text}")                    # the blank lines left
  string(REGEX REPLACE "^\n+" "" text "${text}")
  file(WRITE "${OUT}.lua.tmp" "${text}")
  file(READ "${OUT}.lua.tmp" hex HEX)
  file(REMOVE "${OUT}.lua.tmp")
  string(SHA1 sha "${text}")
  string(LENGTH "${text}" size)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(APPEND body "static const char k_${name}[] = {${bytes}0};\n")
  string(APPEND table "    {\"${name}\", k_${name}, ${size}, \"${sha}\"},\n")
endforeach()
string(APPEND table "};\n")
string(APPEND body "\n${table}\n} // namespace edgelock\n")
file(WRITE "${OUT}.tmp" "${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
