# SPDX-License-Identifier: BSD-3-Clause
# Shared body of toolchains/<triplet>.cmake. The including file sets
#   EDGELOCK_CROSS_TRIPLET    GNU triplet, e.g. arm-linux-gnueabihf
#   EDGELOCK_CROSS_PROCESSOR  CMAKE_SYSTEM_PROCESSOR, e.g. arm
#   EDGELOCK_CROSS_QEMU       qemu-user binary for the tests, e.g. qemu-arm
#
# What the user may set (-D on the first configure, or in the environment):
#   EDGELOCK_SYSROOT       where the target's hiredis, libevent (and OpenSSL,
#                          for TLS) are. Either a whole target root (it has
#                          usr/include/stdio.h: a Yocto SDK's
#                          $OECORE_TARGET_SYSROOT, Buildroot's output/staging),
#                          used as CMAKE_SYSROOT; or an overlay holding only
#                          those libraries on top of the compiler's own C
#                          library (what scripts/cross_sysroot.sh makes from
#                          Debian .debs, and scripts/hiredis.sh --cross adds
#                          hiredis 1.2 to). Absolute, or relative to the
#                          source tree.
#   CMAKE_SYSROOT          a whole target root, named the CMake way.
#   EDGELOCK_CROSS_PREFIX  compiler prefix, default "<triplet>-" (Debian's
#                          g++-<triplet>); e.g. /opt/sdk/bin/arm-poky-linux-gnueabi-
#   CMAKE_CROSSCOMPILING_EMULATOR  how to run a target binary on the build
#                          machine; by default qemu-user with the right -L, when
#                          it is installed.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${EDGELOCK_CROSS_PROCESSOR})

# try_compile projects read this file again; hand them the same choices.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EDGELOCK_SYSROOT EDGELOCK_CROSS_PREFIX)

if(NOT DEFINED EDGELOCK_SYSROOT AND DEFINED ENV{EDGELOCK_SYSROOT})
  set(EDGELOCK_SYSROOT "$ENV{EDGELOCK_SYSROOT}")
endif()
if(NOT DEFINED EDGELOCK_CROSS_PREFIX)
  if(DEFINED ENV{EDGELOCK_CROSS_PREFIX})
    set(EDGELOCK_CROSS_PREFIX "$ENV{EDGELOCK_CROSS_PREFIX}")
  else()
    set(EDGELOCK_CROSS_PREFIX "${EDGELOCK_CROSS_TRIPLET}-")
  endif()
endif()

if(NOT CMAKE_C_COMPILER)
  set(CMAKE_C_COMPILER ${EDGELOCK_CROSS_PREFIX}gcc)
endif()
if(NOT CMAKE_CXX_COMPILER)
  set(CMAKE_CXX_COMPILER ${EDGELOCK_CROSS_PREFIX}g++)
endif()

set(_edgelock_overlay "")
if(EDGELOCK_SYSROOT)
  get_filename_component(EDGELOCK_SYSROOT "${EDGELOCK_SYSROOT}" ABSOLUTE)
  if(NOT IS_DIRECTORY "${EDGELOCK_SYSROOT}")
    message(FATAL_ERROR "EDGELOCK_SYSROOT=${EDGELOCK_SYSROOT} is not a directory "
                        "(scripts/cross_sysroot.sh makes one from Debian packages)")
  endif()
  if(EXISTS "${EDGELOCK_SYSROOT}/usr/include/stdio.h")
    set(CMAKE_SYSROOT "${EDGELOCK_SYSROOT}")
  else()
    set(_edgelock_overlay "${EDGELOCK_SYSROOT}")
  endif()
endif()

if(CMAKE_SYSROOT)
  # A whole target root: the compiler gets --sysroot and looks nowhere else.
  set(_edgelock_root "${CMAKE_SYSROOT}")
  set(CMAKE_FIND_ROOT_PATH "${CMAKE_SYSROOT}")
elseif(_edgelock_overlay)
  # An overlay on the compiler's own runtime. Debian's cross gcc also searches
  # the build machine's /usr/include, whose event2/event-config.h describes the
  # build machine (64-bit sizes): the overlay's headers must come first.
  set(_edgelock_root "${_edgelock_overlay}")
  set(_libdir "${_edgelock_overlay}/usr/lib/${EDGELOCK_CROSS_TRIPLET}")
  # Multiarch headers first (OpenSSL's openssl/configuration.h is per
  # architecture, in usr/include/<triplet>), then the rest.
  # (CMake reads this file more than once per configure: append once.)
  set(_inc " -isystem ${_edgelock_overlay}/usr/include/${EDGELOCK_CROSS_TRIPLET} -isystem ${_edgelock_overlay}/usr/include")
  set(_link " -L${_libdir} -Wl,-rpath-link,${_libdir}")
  foreach(var C_FLAGS CXX_FLAGS)
    string(FIND "${CMAKE_${var}_INIT}" "${_inc}" _at)
    if(_at EQUAL -1)
      string(APPEND CMAKE_${var}_INIT "${_inc}")
    endif()
  endforeach()
  foreach(kind EXE SHARED MODULE)
    string(FIND "${CMAKE_${kind}_LINKER_FLAGS_INIT}" "${_link}" _at)
    if(_at EQUAL -1)
      string(APPEND CMAKE_${kind}_LINKER_FLAGS_INIT "${_link}")
    endif()
  endforeach()
  set(CMAKE_FIND_ROOT_PATH "${_edgelock_overlay}" "/usr/${EDGELOCK_CROSS_TRIPLET}")
endif()

if(_edgelock_root)
  # Libraries, headers and packages of the target only; programs of the build machine.
  set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
  set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
  set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
  set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
  # pkg-config: the target's .pc files only, their paths inside the root.
  set(ENV{PKG_CONFIG_LIBDIR}
      "${_edgelock_root}/usr/lib/${EDGELOCK_CROSS_TRIPLET}/pkgconfig:${_edgelock_root}/usr/lib/pkgconfig:${_edgelock_root}/usr/share/pkgconfig")
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "${_edgelock_root}")
  unset(ENV{PKG_CONFIG_PATH})
endif()

# Tests run under qemu-user: binfmt_misc may not be there, so qemu is named
# explicitly, with -L at the target's C library (its dynamic loader and libc).
# A native program the tests exec (redis-server) runs natively.
if(NOT DEFINED CMAKE_CROSSCOMPILING_EMULATOR)
  find_program(EDGELOCK_QEMU NAMES ${EDGELOCK_CROSS_QEMU})
  if(EDGELOCK_QEMU)
    if(CMAKE_SYSROOT)
      set(CMAKE_CROSSCOMPILING_EMULATOR ${EDGELOCK_QEMU} -L ${CMAKE_SYSROOT})
    else()
      # The compiler's own runtime: <dir>/lib/libc.so.6 -> -L <dir>.
      execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libc.so.6
                      OUTPUT_VARIABLE _libc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_libc AND IS_ABSOLUTE "${_libc}")
        get_filename_component(_libc "${_libc}" REALPATH)
        get_filename_component(_runtime "${_libc}" DIRECTORY)
        get_filename_component(_runtime "${_runtime}" DIRECTORY)
      else()
        set(_runtime "/usr/${EDGELOCK_CROSS_TRIPLET}")
      endif()
      set(CMAKE_CROSSCOMPILING_EMULATOR ${EDGELOCK_QEMU} -L ${_runtime})
      if(_edgelock_overlay)
        list(APPEND CMAKE_CROSSCOMPILING_EMULATOR -E
             LD_LIBRARY_PATH=${_edgelock_overlay}/usr/lib/${EDGELOCK_CROSS_TRIPLET})
      endif()
    endif()
  endif()
endif()
