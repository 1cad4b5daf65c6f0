# SPDX-License-Identifier: BSD-3-Clause
# 32-bit ARM, hard float (armhf: ARMv7-A, VFPv3-D16, Thumb-2), Debian's
# g++-arm-linux-gnueabihf by default. time_t is 32 bits here.
#
#   cmake -S . -B build-armhf -DCMAKE_TOOLCHAIN_FILE=toolchains/arm-linux-gnueabihf.cmake \
#         -DEDGELOCK_SYSROOT=/path/to/sysroot
#
# See docs/CROSS.md for the sysroot (Debian .debs, Yocto, Buildroot) and
# toolchains/cross-common.cmake for every knob.
set(EDGELOCK_CROSS_TRIPLET arm-linux-gnueabihf)
set(EDGELOCK_CROSS_PROCESSOR arm)
set(EDGELOCK_CROSS_QEMU qemu-arm)
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
