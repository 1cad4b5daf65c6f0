# SPDX-License-Identifier: BSD-3-Clause
SUMMARY = "Redisson-compatible distributed locks for C"
DESCRIPTION = "Distributed locks wire-compatible with Redisson 4.x: a C program \
on the device and a Java service contend for one lock in a shared Redis \
(reentrant, fair, read-write and fenced locks, MultiLock, RedLock, a lease \
watchdog), over hiredis and libevent, with the edgelock command-line tool."
SECTION = "libs"
LICENSE = "BSD-3-Clause"
LIC_FILES_CHKSUM = "file://LICENSE;md5=d30578c80ffb229f24f446ce76f35db3"

# Where the source comes from: a git mirror of yours, e.g. in a bbappend
#   SRC_URI = "git://git.example.com/edgelock.git;protocol=https;branch=main"
#   SRCREV = "<commit of v${PV}>"
#   S = "${WORKDIR}/git"
# or this tree, with externalsrc in local.conf:
#   INHERIT += "externalsrc"
#   EXTERNALSRC:pn-edgelock = "/path/to/edgelock"
SRC_URI ?= ""

DEPENDS = "hiredis libevent"

inherit cmake pkgconfig

EXTRA_OECMAKE = "-DEDGELOCK_BUILD_TESTS=OFF -DEDGELOCK_BUILD_EXAMPLES=OFF -DEDGELOCK_INSTALL=ON"

PACKAGECONFIG ??= "cli tls shared"
PACKAGECONFIG[cli] = "-DEDGELOCK_BUILD_CLI=ON,-DEDGELOCK_BUILD_CLI=OFF"
PACKAGECONFIG[tls] = "-DEDGELOCK_TLS=ON,-DEDGELOCK_TLS=OFF,openssl"
PACKAGECONFIG[shared] = "-DEDGELOCK_BUILD_SHARED=ON,-DEDGELOCK_BUILD_SHARED=OFF"

# edgelock: the CLI; edgelock-dev: header, CMake package, .pc (and the .so
# link); edgelock-staticdev: libedgelock.a; edgelock-doc: the man page.
FILES:${PN} = "${bindir}/edgelock ${libdir}/libedgelock.so.*"
FILES:${PN}-dev += "${libdir}/cmake/edgelock"

BBCLASSEXTEND = "native"
