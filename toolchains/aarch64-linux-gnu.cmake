# SPDX-License-Identifier: BSD-3-Clause
# 64-bit ARM (arm64, ARMv8-A), Debian's g++-aarch64-linux-gnu by default.
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=toolchains/aarch64-linux-gnu.cmake \
#         -DEDGELOCK_SYSROOT=/path/to/sysroot
#
# See docs/CROSS.md for the sysroot (Debian .debs, Yocto, Buildroot) and
# toolchains/cross-common.cmake for every knob.
set(EDGELOCK_CROSS_TRIPLET aarch64-linux-gnu)
set(EDGELOCK_CROSS_PROCESSOR aarch64)
set(EDGELOCK_CROSS_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
