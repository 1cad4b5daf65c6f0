// SPDX-License-Identifier: BSD-3-Clause
// The version, set once in CMakeLists.txt's project(VERSION): the generated
// macros agree with each other and with what the library linked in reports.
#include <stdio.h>
#include <string.h>

#include "check.hpp"
#include "edgelock/edgelock.h"

TEST_CASE(the_library_reports_the_headers_version)
{
    const char *v = edgelock_version();
    REQUIRE(v != nullptr);
    CHECK(strcmp(v, EDGELOCK_VERSION_STRING) == 0);
    char made[32];
    snprintf(made, sizeof(made), "%d.%d.%d", EDGELOCK_VERSION_MAJOR, EDGELOCK_VERSION_MINOR,
             EDGELOCK_VERSION_PATCH);
    CHECK(strcmp(v, made) == 0);
    CHECK_EQ(EDGELOCK_VERSION_NUMBER,
             EDGELOCK_VERSION_MAJOR * 10000 + EDGELOCK_VERSION_MINOR * 100 + EDGELOCK_VERSION_PATCH);
}
